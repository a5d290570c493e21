/**
 * What a link check may ask (docs/api.md, "Link check"): host names, `*.domain`, CIDRs,
 * single addresses, `public`; an address or CIDR entry may end in `:port`, which then
 * is the only port it allows. Names choose what may be asked; only an address or CIDR
 * entry lets a link reach a denied range, and only one with a port reaches the service's own.
 */

import { deniedRange } from './denied-ranges';
import { inNetwork, ipBytes, ipv4Bytes, type IpNetwork } from './ip-address';

/** One parsed entry of the allow-list. */
type AllowEntry =
    | { kind: 'public' }
    | { kind: 'host'; host: string }
    | { kind: 'domain'; suffix: string }
    | { kind: 'network'; network: IpNetwork; port?: number };

/** Why a hop may not be asked, in words for the log; undefined when it may. */
export type HopVerdict = string | undefined;

/** A parsed allow-list: which hops a link check may make. */
export interface LinkAllowList {
    /** The entries as given, for the start line. */
    readonly entries: readonly string[];
    /**
     * Whether a hop to `host` (the URL's host name, or an address), resolved to `address`,
     * on `port` may be made; `ownPorts` are the service's own listening ports.
     */
    verdict(host: string, address: string, port: number, ownPorts: readonly number[]): HopVerdict;
}

const HOST_NAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?)*$/;

/** A host name without its root dot, lowercased: how names are compared. */
export function normalHost(host: string): string {
    return host.toLowerCase().replace(/\.$/, '');
}

function parsePort(text: string, entry: string): number {
    const port = Number(text);
    if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65535) {
        throw new Error(`${JSON.stringify(entry)}: the port must be 1 to 65535`);
    }

    return port;
}

function network(address: string, prefix: number | undefined, port: number | undefined, entry: string): AllowEntry {
    const bytes = ipBytes(address);
    if (!bytes) {
        throw new Error(`${JSON.stringify(entry)}: not an IP address`);
    }

    const max = bytes.length * 8;
    if (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= max)) {
        throw new Error(`${JSON.stringify(entry)}: the prefix length must be 0 to ${max}`);
    }

    return { kind: 'network', network: { bytes, prefix: prefix ?? max }, ...(port === undefined ? {} : { port }) };
}

function parseEntry(raw: string): AllowEntry {
    const entry = raw.trim();
    const lower = entry.toLowerCase();
    if (lower === 'public') {
        return { kind: 'public' };
    }

    const bracketed = /^\[([0-9a-f:.]+)\](?::(\d+))?$/i.exec(entry);
    if (bracketed) {
        return network(bracketed[1], undefined, bracketed[2] === undefined ? undefined : parsePort(bracketed[2], entry), entry);
    }

    const cidr = /^([0-9a-f:.]+)\/(\d{1,3})$/i.exec(entry);
    if (cidr) {
        return network(cidr[1], Number(cidr[2]), undefined, entry);
    }

    if (ipBytes(entry)) {
        return network(entry, undefined, undefined, entry);
    }

    const v4Port = /^(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(entry);
    if (v4Port && ipv4Bytes(v4Port[1])) {
        return network(v4Port[1], undefined, parsePort(v4Port[2], entry), entry);
    }

    if (lower.startsWith('*.') && HOST_NAME.test(normalHost(lower.slice(2)))) {
        return { kind: 'domain', suffix: `.${normalHost(lower.slice(2))}` };
    }

    // A name that is all digits and dots would be read as an address by a URL parser.
    if (HOST_NAME.test(normalHost(lower)) && !/^[\d.]+$/.test(lower)) {
        return { kind: 'host', host: normalHost(lower) };
    }

    throw new Error(`${JSON.stringify(entry)} is not a host name, *.domain, IP address, CIDR or "public"`);
}

/** Parses the allow-list; throws with the offending entry's words. An empty list is an error: leave the check off instead. */
export function parseLinkAllowList(entries: readonly string[]): LinkAllowList {
    if (entries.length === 0) {
        throw new Error('the allow-list is empty');
    }

    const parsed = entries.map(parseEntry);
    // An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 address it carries, for networks of either family.
    const networkFor = (address: string, port: number | undefined) => {
        const bytes = ipBytes(address);
        const mapped = bytes?.length === 16 && bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff ? bytes.slice(12) : undefined;
        return bytes !== undefined && parsed.some((e) => e.kind === 'network' && e.port === port && (inNetwork(bytes, e.network) || (mapped !== undefined && inNetwork(mapped, e.network))));
    };
    return {
        entries: [...entries],
        verdict(host, address, port, ownPorts) {
            const name = normalHost(host);
            const denied = deniedRange(address);
            const byAddress = networkFor(address, undefined);
            const byAddressAndPort = networkFor(address, port);
            if (denied !== undefined && ownPorts.includes(port) && !byAddressAndPort) {
                return `${address} port ${port} is the service's own (${denied}); only an address entry with :${port} allows it`;
            }

            if (denied !== undefined && !byAddress && !byAddressAndPort) {
                return `${address} is ${denied}; only an address or CIDR entry allows it`;
            }

            if (byAddress || byAddressAndPort) {
                return undefined;
            }

            const named = parsed.some((e) => (e.kind === 'host' && e.host === name) || (e.kind === 'domain' && name.endsWith(e.suffix)));
            if (named || parsed.some((e) => e.kind === 'public')) {
                return undefined;
            }

            return `${name} (${address}) is not on the allow-list`;
        }
    };
}
