/**
 * Which addresses a relay may send to (docs/api.md, "Release"): nothing leaves for an
 * address the list does not name, so a staging service cannot mail real customers.
 */

import { InboxCaptureError } from '../errors';

/** Longest pattern, characters: an address's own limit (RFC 5321 section 4.5.3.1.3). */
const MAX_PATTERN_LENGTH = 254;

/**
 * Local parts a domain pattern never covers: `%` and `!` route mail onwards on relays
 * that still honour the percent hack and bang paths, a quote can hide an `@`, and a
 * source route (`@a.test:bob@b.test`) names hops. Only an exact address lets them by.
 */
const ROUTING_LOCAL_PART = /[%!"\\:]|^@/;

/** The relay's allow-list, checked. */
export interface RelayAllowList {
    /** The patterns as given, lowercased. */
    readonly patterns: readonly string[];
    /** True when `address` is one of the listed addresses, or at a listed domain with a plain local part (case-insensitive). */
    allows(address: string): boolean;
}

/**
 * Builds the list from patterns `*@example.com` (every address at that domain, not its
 * subdomains) and `alice@example.org` (that address). Anything else, an empty list
 * included, throws INVALID_INPUT: a relay without a list would send anywhere.
 */
export function parseRelayAllowList(patterns: readonly string[]): RelayAllowList {
    const cleaned = patterns.map((p) => p.trim().toLowerCase()).filter((p) => p !== '');
    if (cleaned.length === 0) {
        throw new InboxCaptureError('INVALID_INPUT', 'the relay allow-list is empty: name the addresses (alice@example.org) or domains (*@example.com) it may send to');
    }

    const domains = new Set<string>();
    const addresses = new Set<string>();
    for (const pattern of cleaned) {
        const at = pattern.lastIndexOf('@');
        const local = pattern.slice(0, at);
        const domain = pattern.slice(at + 1);
        if (pattern.length > MAX_PATTERN_LENGTH || at < 1 || !/^[^\s@*]+$/.test(domain) || !domain.includes('.') && domain !== 'localhost' || /\s/.test(local) || (local.includes('*') && local !== '*')) {
            throw new InboxCaptureError('INVALID_INPUT', `relay allow-list: "${pattern.slice(0, 100)}" is neither *@domain nor an address`);
        }

        (local === '*' ? domains : addresses).add(local === '*' ? domain : pattern);
    }

    return {
        patterns: cleaned,
        allows(address) {
            const lower = address.trim().toLowerCase();
            const at = lower.lastIndexOf('@');
            if (at <= 0) {
                return false;
            }

            return addresses.has(lower) || (!ROUTING_LOCAL_PART.test(lower.slice(0, at)) && domains.has(lower.slice(at + 1)));
        }
    };
}
