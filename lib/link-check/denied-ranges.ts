/**
 * The addresses a link check never connects to unless the allow-list names them by
 * address (docs/api.md, "Link check"): the machine itself, private and shared networks,
 * and the IPv6 forms that carry such an IPv4 address inside them.
 */

import { inNetwork, ipBytes, ipv4Bytes, ipv6Bytes, type IpBytes, type IpNetwork } from './ip-address';

// [range, prefix length, name]: the name is what a refusal's log line says.
const IPV4_RANGES: Array<[string, number, string]> = [
    ['0.0.0.0', 8, 'unspecified'],
    ['10.0.0.0', 8, 'private'],
    ['100.64.0.0', 10, 'CGNAT'],
    ['127.0.0.0', 8, 'loopback'],
    ['169.254.0.0', 16, 'link-local'],
    ['172.16.0.0', 12, 'private'],
    ['192.0.0.0', 24, 'IETF protocol assignments'],
    ['192.0.2.0', 24, 'documentation'],
    ['192.168.0.0', 16, 'private'],
    ['198.18.0.0', 15, 'benchmarking'],
    ['198.51.100.0', 24, 'documentation'],
    ['203.0.113.0', 24, 'documentation'],
    ['224.0.0.0', 4, 'multicast'],
    ['240.0.0.0', 4, 'reserved and broadcast']
];

// IPv6 ranges denied whole. The IPv4-carrying forms (mapped, NAT64, 6to4, Teredo) are not
// here: their IPv4 address is taken out and judged as itself, below.
const IPV6_RANGES: Array<[string, number, string]> = [
    ['::', 96, 'unspecified, loopback and IPv4-compatible'],
    ['64:ff9b:1::', 48, 'local-use NAT64'],
    ['100::', 64, 'discard'],
    ['2001:db8::', 32, 'documentation'],
    ['fc00::', 7, 'unique local'],
    ['fe80::', 10, 'link-local'],
    ['fec0::', 10, 'site-local'],
    ['ff00::', 8, 'multicast']
];

function networks(ranges: Array<[string, number, string]>): Array<[IpNetwork, string]> {
    return ranges.map(([network, prefix, name]) => [{ bytes: ipBytes(network)!, prefix }, name]);
}

const IPV4_NETWORKS = networks(IPV4_RANGES);
const IPV6_NETWORKS = networks(IPV6_RANGES);

/** The eight 16-bit groups of a valid IPv6 address (a dotted IPv4 tail allowed). */
export function ipv6Groups(address: string): number[] {
    const bytes = ipv6Bytes(address) ?? [];
    return Array.from({ length: bytes.length / 2 }, (_, i) => (bytes[2 * i] << 8) | bytes[2 * i + 1]);
}

const dottedQuad = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 addresses an IPv6 address stands for, by the transition forms that carry one:
 * IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96), 6to4 (2002::/16) and Teredo
 * (2001::/32: its server and, inverted, its client).
 */
export function embeddedIpv4(address: string): string[] {
    const g = ipv6Groups(address);
    const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
    if (zeros(0, 5) && g[5] === 0xffff) {
        return [dottedQuad(g[6], g[7])];
    }

    if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) {
        return [dottedQuad(g[6], g[7])];
    }

    if (g[0] === 0x2002) {
        return [dottedQuad(g[1], g[2])];
    }

    if (g[0] === 0x2001 && g[1] === 0) {
        return [dottedQuad(g[2], g[3]), dottedQuad(g[6] ^ 0xffff, g[7] ^ 0xffff)];
    }

    return [];
}

/**
 * The name of the denied range an IP address lies in (an IPv6 form carrying an IPv4
 * address counts as that address), or undefined for an address anyone may reach.
 */
export function deniedRange(address: string): string | undefined {
    const v4 = ipv4Bytes(address);
    if (v4) {
        return IPV4_NETWORKS.find(([network]) => inNetwork(v4, network))?.[1];
    }

    const v6: IpBytes | undefined = ipv6Bytes(address);
    if (!v6) {
        return 'not an IP address';
    }

    for (const inner of embeddedIpv4(address)) {
        const range = deniedRange(inner);
        if (range) {
            return `${range} (inside ${address})`;
        }
    }

    return IPV6_NETWORKS.find(([network]) => inNetwork(v6, network))?.[1];
}
