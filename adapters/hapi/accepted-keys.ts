import type { ApiKeyInfo } from '../../lib/types';

/**
 * Milliseconds a key found active is accepted from memory, without asking the record
 * store. A key revoked through this process' service is dropped at once (the service's
 * onKeyRevoked()); one revoked by another process (the CLI, a second instance) is
 * refused at most this long after. One lookup a second per busy key is nothing to
 * the store, and a second is as long as an operator waits for a revocation to bite.
 */
export const ACCEPTED_KEY_TTL_MS = 1000;

/**
 * Keys remembered at most, by hash (about 300 bytes an entry, so 300 KB); the oldest
 * go first. A deployment has a handful of keys: the cap only bounds the pathological.
 */
export const MAX_ACCEPTED_KEYS = 1000;

/** How the cache is tuned (tests inject a clock). */
export interface AcceptedKeysOptions {
    ttlMs: number;
    max: number;
    /** Clock, Unix ms. */
    now: () => number;
}

/** A short-lived memory of keys the store found active, by token hash. */
export interface AcceptedKeys {
    /** The key a token hash was last found to be, if that is recent enough. */
    get(hash: string): ApiKeyInfo | undefined;
    /** Taken before a lookup; add() with a stamp older than the last revocation stores nothing. */
    stamp(): number;
    /** Remembers a key found active by a lookup that began at `stamp`. */
    add(hash: string, key: ApiKeyInfo, stamp: number): void;
    /** Drops the named key and outdates every stamp taken so far (a lookup in flight may predate the revocation). */
    forget(name: string): void;
    /** Entries held (expired ones included until touched or pushed out). */
    readonly size: number;
}

/** A bounded cache of accepted keys; with `ttlMs` 0 it remembers nothing. */
export function createAcceptedKeys(options: AcceptedKeysOptions): AcceptedKeys {
    const { ttlMs, max, now } = options;
    // Map order is insertion order, oldest first; an entry is never refreshed in place,
    // so it expires ttlMs after the lookup that found it whatever the traffic.
    const entries = new Map<string, { key: ApiKeyInfo; until: number }>();
    let generation = 0;

    return {
        get(hash) {
            const entry = entries.get(hash);
            if (!entry) {
                return undefined;
            }

            if (entry.until > now()) {
                return entry.key;
            }

            entries.delete(hash);
            return undefined;
        },

        stamp() {
            return generation;
        },

        add(hash, key, stamp) {
            if (ttlMs <= 0 || max <= 0 || stamp !== generation) {
                return;
            }

            entries.delete(hash);
            if (entries.size >= max) {
                entries.delete(entries.keys().next().value!);
            }

            entries.set(hash, { key, until: now() + ttlMs });
        },

        forget(name) {
            generation++;
            for (const [hash, entry] of entries) {
                if (entry.key.name === name) {
                    entries.delete(hash);
                }
            }
        },

        get size() {
            return entries.size;
        }
    };
}
