/**
 * IP addresses as bytes, and networks that hold them: what the link check's rules need,
 * without the network modules the core keeps out (the adapters dial; lib/ only judges).
 */

/** An address as its bytes: 4 for IPv4, 16 for IPv6. */
export type IpBytes = number[];

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const GROUP = /^[0-9a-f]{1,4}$/i;

/** The bytes of a dotted-quad IPv4 address (four decimal parts, no leading zeros), or undefined. */
export function ipv4Bytes(text: string): IpBytes | undefined {
    const match = IPV4.exec(text);
    return match ? match.slice(1, 5).map(Number) : undefined;
}

/** The bytes of an IPv6 address (`::` and a dotted IPv4 tail allowed; no zone), or undefined. */
export function ipv6Bytes(text: string): IpBytes | undefined {
    let body = text;
    const lastColon = body.lastIndexOf(':');
    if (lastColon !== -1 && body.slice(lastColon + 1).includes('.')) {
        const v4 = ipv4Bytes(body.slice(lastColon + 1));
        if (!v4) {
            return undefined;
        }

        // The dotted tail as the two groups it stands for.
        body = `${body.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
    }

    const halves = body.split('::');
    if (halves.length > 2) {
        return undefined;
    }

    const part = (s: string) => (s === '' ? [] : s.split(':'));
    const front = part(halves[0]);
    const back = halves.length === 2 ? part(halves[1]) : [];
    const given = front.length + back.length;
    if (![...front, ...back].every((g) => GROUP.test(g)) || (halves.length === 1 ? given !== 8 : given > 7)) {
        return undefined;
    }

    const groups = [...front, ...new Array<string>(8 - given).fill('0'), ...back].map((g) => parseInt(g, 16));
    return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/** The bytes of an IPv4 or IPv6 address, or undefined for anything else (a host name). */
export function ipBytes(text: string): IpBytes | undefined {
    return ipv4Bytes(text) ?? ipv6Bytes(text);
}

/** A network: its first bytes and how many leading bits an address must share with them. */
export interface IpNetwork {
    bytes: IpBytes;
    prefix: number;
}

/** Whether `address` lies in `network` (of the same family: an IPv6 address is never in an IPv4 network). */
export function inNetwork(address: IpBytes, network: IpNetwork): boolean {
    if (address.length !== network.bytes.length) {
        return false;
    }

    for (let bit = 0; bit < network.prefix; bit++) {
        const mask = 0x80 >> (bit % 8);
        if ((address[bit >> 3] & mask) !== (network.bytes[bit >> 3] & mask)) {
            return false;
        }
    }

    return true;
}
