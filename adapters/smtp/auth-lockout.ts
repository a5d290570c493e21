import { isIPv6 } from 'node:net';

/** Failed AUTH attempts one client address may make within the window before it is locked out. */
export const DEFAULT_AUTH_FAILURES_PER_ADDRESS = 5;
/** The window those failures are counted in, ms. */
export const DEFAULT_AUTH_FAILURE_WINDOW_MS = 60_000;
/** How long a locked-out address gets `454` to every AUTH, ms. */
export const DEFAULT_AUTH_LOCKOUT_MS = 60_000;
/**
 * Client addresses tracked at once; past it the least recently failed one is forgotten.
 * About 200 bytes each, so the table stays under a few MB whatever the number of
 * addresses a guesser spreads over.
 */
export const DEFAULT_AUTH_TRACKED_ADDRESSES = 10_000;

/** How failed SMTP AUTH attempts are counted per client address (docs/guarantees.md, "SMTP"). */
export interface SmtpAuthLockoutOptions {
    /** Failures within `windowMs` that lock an address out (default 5). */
    failures?: number;
    /** The window failures are counted in, ms (default 60000). */
    windowMs?: number;
    /** How long a locked-out address is refused, ms (default 60000). */
    lockoutMs?: number;
    /** Client addresses tracked at once (default 10000); the least recently failed one goes first. */
    maxAddresses?: number;
}

/** The failures of one address: their times (at most `failures` of them), and the end of its lockout. */
interface Entry {
    times: number[];
    lockedUntil: number;
}

/** Failed AUTH attempts per client address, across connections. */
export interface AuthLockout {
    /** True while `address` is locked out: its AUTH is refused before any password is checked. */
    isLocked(address: string): boolean;
    /** Counts a failed attempt from `address`; true when it locked the address out. */
    fail(address: string): boolean;
    /** Addresses tracked now. */
    readonly size: number;
}

/**
 * The key an address is counted under: an IPv4 address as it is, an IPv6 address by its
 * /64, the smallest block a site is given (one host can use the whole of it).
 */
export function lockoutKey(address: string): string {
    if (!isIPv6(address) || address.includes('.')) {
        return address;
    }

    const [head = '', tail] = address.toLowerCase().split('%')[0]!.split('::');
    const front = head === '' ? [] : head.split(':');
    const back = tail === undefined || tail === '' ? [] : tail.split(':');
    const groups = tail === undefined ? front : [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
    return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** Creates the per-address count; `now` is the clock (ms), for tests. Throws a TypeError naming a bad option. */
export function createAuthLockout(options: SmtpAuthLockoutOptions = {}, now: () => number = Date.now): AuthLockout {
    const limits = {
        failures: options.failures ?? DEFAULT_AUTH_FAILURES_PER_ADDRESS,
        windowMs: options.windowMs ?? DEFAULT_AUTH_FAILURE_WINDOW_MS,
        lockoutMs: options.lockoutMs ?? DEFAULT_AUTH_LOCKOUT_MS,
        maxAddresses: options.maxAddresses ?? DEFAULT_AUTH_TRACKED_ADDRESSES
    };
    for (const [name, value] of Object.entries(limits)) {
        if (!Number.isSafeInteger(value) || value < 1) {
            throw new TypeError(`createSmtpListener: authLockout.${name} must be a positive integer`);
        }
    }

    // Insertion order is the order of the last failure: the oldest entry is first.
    const entries = new Map<string, Entry>();
    const live = (entry: Entry, at: number) => entry.lockedUntil > at || entry.times.some((t) => t > at - limits.windowMs);

    return {
        isLocked(address) {
            const key = lockoutKey(address);
            const entry = entries.get(key);
            if (!entry || entry.lockedUntil === 0) {
                return false;
            }

            if (entry.lockedUntil > now()) {
                return true;
            }

            // The lockout is over: the address starts again from no failures.
            entries.delete(key);
            return false;
        },

        fail(address) {
            const at = now();
            const key = lockoutKey(address);
            const entry = entries.get(key) ?? { times: [], lockedUntil: 0 };
            entries.delete(key);
            entry.lockedUntil = entry.lockedUntil > at ? entry.lockedUntil : 0;
            entry.times = entry.times.filter((t) => t > at - limits.windowMs);
            entry.times.push(at);
            const locked = entry.times.length >= limits.failures;
            if (locked) {
                entry.lockedUntil = at + limits.lockoutMs;
                entry.times = [];
            }

            entries.set(key, entry);
            // Expired entries go from the front as failures come in; the cap bounds the rest.
            for (const [oldKey, old] of entries) {
                if (entries.size <= limits.maxAddresses && live(old, at)) {
                    break;
                }

                entries.delete(oldKey);
            }

            return locked;
        },

        get size() {
            return entries.size;
        }
    };
}
