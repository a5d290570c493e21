import type { Request, ResponseToolkit, Server, ServerAuthSchemeObject } from '@hapi/hapi';
import { createConcurrencyLimit } from '../../lib/util/concurrency-limit';
import type { InboxCapture } from '../../lib/service/inbox-capture';
import { hashApiKey, KEY_PREFIX } from '../../lib/service/keys';
import type { ApiKeyInfo } from '../../lib/types';
import { ACCEPTED_KEY_TTL_MS, createAcceptedKeys, MAX_ACCEPTED_KEYS } from './accepted-keys';
import { apiError } from './error-mapping';

/** Name of the auth scheme the plugin registers (auth names are server-wide, hence the prefix). */
export const AUTH_SCHEME = 'inbox-capture-bearer';
/** Name of the strategy the plugin's protected routes use; never made the server default. */
export const AUTH_STRATEGY = 'inbox-capture-api-key';

/**
 * Longest token looked up, characters. Our keys are 46 (`ic_` + 43 base64url); the
 * cap keeps hashing and the key lookup bounded whatever a client sends.
 */
export const MAX_TOKEN_LENGTH = 512;

/**
 * Milliseconds a token found to match no active key is answered 401 without asking
 * the store again. A flood of one bad token costs one lookup per this period. Safe
 * for new keys (a token is random and unknown until its key exists) and for revoked
 * ones (this map holds only failures; accepted keys have their own, shorter memory that a
 * revocation through the service clears at once).
 */
export const REJECTED_TOKEN_TTL_MS = 10_000;

/**
 * Rejected tokens remembered at most, by hash: bounds the memory of a flood of
 * distinct bad tokens (about 150 bytes an entry, so 1.5 MB); the oldest go first.
 */
export const MAX_REJECTED_TOKENS = 10_000;

/**
 * Key lookups in the record store at once; later ones wait their turn. A flood of
 * distinct bad tokens then holds at most these of the database pool's connections
 * (10 with Postgres by default), and every other query still finds one free.
 */
export const MAX_CONCURRENT_KEY_LOOKUPS = 4;

/** How the key lookup guard is tuned (tests shorten the TTLs or inject a clock). */
export interface KeyLookupGuardOptions {
    rejectedTtlMs?: number;
    maxRejected?: number;
    maxConcurrent?: number;
    /**
     * Milliseconds a key found active is accepted without a lookup. 0, this function's
     * default, remembers none; registerAuth() uses ACCEPTED_KEY_TTL_MS.
     */
    acceptedTtlMs?: number;
    /** Accepted keys remembered at most (default MAX_ACCEPTED_KEYS). */
    maxAccepted?: number;
    /** Clock, Unix ms. */
    now?: () => number;
}

/** A guarded key lookup: call it with a token. */
export interface GuardedKeyLookup {
    (token: string): Promise<ApiKeyInfo | null>;
    /** The named key was revoked: it and every lookup in flight are forgotten, so the next request asks the store. */
    keyRevoked(name: string): void;
    /** Accepted keys held in memory now (for the bound's test). */
    acceptedCount(): number;
}

/**
 * Wraps a key lookup so that a flood of bad tokens cannot tie up the record store:
 * concurrent lookups of one token share one query, a token that matched no active
 * key is refused from memory for a short while, and only a few lookups run at once.
 * With `acceptedTtlMs`, a valid key is also accepted from memory for that long
 * (until keyRevoked() names it), which spares the store a query per request.
 */
export function guardKeyLookup(lookup: (token: string) => Promise<ApiKeyInfo | null>, options: KeyLookupGuardOptions = {}): GuardedKeyLookup {
    const ttlMs = options.rejectedTtlMs ?? REJECTED_TOKEN_TTL_MS;
    const maxRejected = options.maxRejected ?? MAX_REJECTED_TOKENS;
    const maxConcurrent = options.maxConcurrent ?? MAX_CONCURRENT_KEY_LOOKUPS;
    const now = options.now ?? Date.now;
    const accepted = createAcceptedKeys({ ttlMs: options.acceptedTtlMs ?? 0, max: options.maxAccepted ?? MAX_ACCEPTED_KEYS, now });

    // Token hash → until when it is refused; Map order is insertion order, oldest first.
    const rejected = new Map<string, number>();
    // Token hash → the lookup in flight for it. Hashes, so no token is kept in memory.
    const pending = new Map<string, Promise<ApiKeyInfo | null>>();
    // Slots for lookups; a finished lookup's slot passes straight to the next one waiting.
    const lookups = createConcurrencyLimit(maxConcurrent);

    const remember = (hash: string) => {
        rejected.delete(hash);
        if (rejected.size >= maxRejected) {
            rejected.delete(rejected.keys().next().value!);
        }

        rejected.set(hash, now() + ttlMs);
    };

    const run = (token: string, hash: string): Promise<ApiKeyInfo | null> => lookups.run(async () => {
        const stamp = accepted.stamp();
        const key = await lookup(token);
        if (key) {
            accepted.add(hash, key, stamp);
        }
        else {
            remember(hash);
        }

        return key;
    });

    const verify = (token: string): Promise<ApiKeyInfo | null> => {
        const hash = hashApiKey(token);
        const known = accepted.get(hash);
        if (known) {
            return Promise.resolve(known);
        }

        const until = rejected.get(hash);
        if (until !== undefined) {
            if (until > now()) {
                return Promise.resolve(null);
            }

            rejected.delete(hash);
        }

        let inFlight = pending.get(hash);
        if (!inFlight) {
            const started: Promise<ApiKeyInfo | null> = run(token, hash).finally(() => {
                // keyRevoked() may have replaced it with a newer lookup already.
                if (pending.get(hash) === started) {
                    pending.delete(hash);
                }
            });
            inFlight = started;
            pending.set(hash, inFlight);
        }

        return inFlight;
    };

    return Object.assign(verify, {
        keyRevoked(name: string) {
            accepted.forget(name);
            // A lookup in flight may have read the key before the revocation: later
            // requests must not share its answer.
            pending.clear();
        },
        acceptedCount: () => accepted.size
    });
}

// `<scheme> <token>`, exactly one space, the scheme word case-insensitive (docs/design.md),
// the token an RFC 6750 b64token. Anything else is "malformed" and never reaches the store.
const AUTHORIZATION = /^bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

// Whitespace around a field value is not part of it (RFC 9110 section 5.5); Node's parser
// strips it from real requests, and this makes injected ones behave the same.
const OUTER_WHITESPACE = /^[ \t]+|[ \t]+$/g;

/** `request.auth.credentials.app` of an authenticated request: the key's name, never the token or its hash. */
export interface ApiKeyCredentials {
    keyName: string;
}

/** The token of a well-formed `Authorization: Bearer <token>` header, or null. */
export function parseBearer(header: unknown): string | null {
    if (typeof header !== 'string' || header.length > MAX_TOKEN_LENGTH + 7) {
        return null;
    }

    const match = AUTHORIZATION.exec(header.replace(OUTER_WHITESPACE, ''));
    return match ? match[1] : null;
}

// What gives a credential away in the raw bytes of a request head (latin1, one byte a
// character): a whole Authorization line; and, for a line split across two packets, a
// `Bearer` token or one of our keys wherever it stands.
const CREDENTIAL_PATTERNS: Array<[RegExp, string]> = [
    [/(^|\n)((?:proxy-)?authorization)[ \t]*:[^\r\n]*/gi, '$1$2: [redacted]'],
    [/\bbearer[ \t]+[^\s]+/gi, 'Bearer [redacted]'],
    [new RegExp(`${KEY_PREFIX}[A-Za-z0-9_-]+`, 'g'), '[redacted]']
];

/** What Node attaches to an HTTP parse error: the bytes of the request head it choked on. */
interface ClientError extends Error {
    rawPacket?: unknown;
}

// Listeners already guarded: a second registration of the plugin adds no second redactor.
const redacting = new WeakSet<object>();

/**
 * A request too malformed to parse (a 20 KB header, say) reaches hapi as a `clientError`
 * whose `rawPacket` holds the raw request head, Authorization header and all, and hapi
 * logs that error on its internal channel, where a host's logger would write the API key
 * out. This listener runs before hapi's and blanks the credential lines in those bytes;
 * nothing else of the error changes.
 */
function redactClientErrors(server: Server): void {
    const listener = server.listener as Server['listener'] | undefined;
    if (!listener || typeof listener.prependListener !== 'function' || redacting.has(listener)) {
        return;
    }

    redacting.add(listener);
    listener.prependListener('clientError', (err: ClientError) => {
        if (Buffer.isBuffer(err?.rawPacket)) {
            const head = err.rawPacket.toString('latin1');
            const redacted = CREDENTIAL_PATTERNS.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), head);
            if (redacted !== head) {
                err.rawPacket = Buffer.from(redacted, 'latin1');
            }
        }
    });
}

/**
 * Registers the API-key scheme and strategy on the server. Missing, malformed,
 * unknown and revoked tokens all fail the same way (docs/design.md); a broken key store
 * is an error of its own, never a 401. Lookups go through guardKeyLookup(), which
 * accepts a valid key from memory for ACCEPTED_KEY_TTL_MS and forgets it as soon as
 * the service revokes it; tokens are kept out of hapi's client-error log
 * (redactClientErrors()).
 */
export function registerAuth(server: Server, capture: InboxCapture, guard: KeyLookupGuardOptions = {}): void {
    // A service without onKeyRevoked() (a host's own wrapper) could not tell us of a
    // revocation, so valid keys are then looked up every time.
    const hearsRevocations = typeof (capture as Partial<InboxCapture>).onKeyRevoked === 'function';
    const verifyKey = guardKeyLookup((token) => capture.verifyKey(token), {
        ...guard,
        acceptedTtlMs: hearsRevocations ? guard.acceptedTtlMs ?? ACCEPTED_KEY_TTL_MS : 0
    });
    if (hearsRevocations) {
        // Never unsubscribed: the listener lives as long as the service it listens to.
        capture.onKeyRevoked((name) => verifyKey.keyRevoked(name));
    }

    const scheme = (): ServerAuthSchemeObject => ({
        async authenticate(request: Request, h: ResponseToolkit) {
            const token = parseBearer(request.headers.authorization);
            const key = token === null ? null : await verifyKey(token);
            if (!key) {
                throw apiError(401, 'UNAUTHORIZED');
            }

            const app: ApiKeyCredentials = { keyName: key.name };
            return h.authenticated({ credentials: { app } });
        }
    });

    server.auth.scheme(AUTH_SCHEME, scheme);
    server.auth.strategy(AUTH_STRATEGY, AUTH_SCHEME);
    redactClientErrors(server);
}
