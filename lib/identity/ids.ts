import * as Crypto from 'node:crypto';
import { createHash, webcrypto } from 'node:crypto';
import { randomBytesFromPool } from './random-pool';

/** Suffix of ids we generate for messages that carry no Message-ID. */
export const GENERATED_ID_DOMAIN = 'inbox-capture';

/** A random, URL-safe id for a message that has no Message-ID header. */
export function generateMessageId(): string {
    return `${randomBytesFromPool(16).toString('base64url')}@${GENERATED_ID_DOMAIN}`;
}

/**
 * Longest id kept as it is, UTF-8 bytes (docs/guarantees.md). A longer Message-ID,
 * or a derived id that would pass it, is stored as `<sha256 hex>@inbox-capture`
 * (78 bytes), so every id, cursor and URL stays short: percent-encoded, an id is at
 * most 768 characters, far below Node's 16 KiB request limit. Real Message-IDs are
 * well under 100 bytes; RFC 5322 lines are 998.
 */
export const MAX_MESSAGE_ID_BYTES = 256;

/** `id` itself when it is at most MAX_MESSAGE_ID_BYTES, otherwise `<SHA-256 hex of it>@inbox-capture`. */
export function shortId(id: string): string {
    // At most three UTF-8 bytes per UTF-16 unit (four per surrogate pair): a short string needs no count.
    return id.length * 3 <= MAX_MESSAGE_ID_BYTES || Buffer.byteLength(id, 'utf8') <= MAX_MESSAGE_ID_BYTES ?
        id :
        `${sha256Hex(id)}@${GENERATED_ID_DOMAIN}`;
}

/**
 * The id of a copy that cannot take the bare Message-ID (several inboxes in one
 * delivery, or the id already held in another inbox). Deterministic and readable
 * (`<sourceId>~<inbox>`, each part first shortened by shortId(), and the whole once
 * more), so a user who knows the Message-ID and inbox can compute it.
 */
export function deriveMessageId(sourceId: string, inbox: string): string {
    return shortId(`${shortId(sourceId)}~${inbox}`);
}

/** Hex digits of the raw message's SHA-256 in a content-derived id: 48 bits tell apart any resends an inbox will see. */
const CONTENT_DIGEST_CHARS = 12;

/**
 * The id of a copy whose inbox already holds the same Message-ID with other bytes
 * (docs/design.md, "Identity and inboxes"): `<sourceId>~<inbox>~<first 12 hex digits of
 * the raw message's SHA-256>`, shortened as deriveMessageId() is. Deterministic, so an
 * identical resend of it finds the same copy, and each different one gets its own id.
 */
export function contentDerivedId(sourceId: string, inbox: string, rawSha256: string): string {
    return shortId(`${shortId(sourceId)}~${inbox}~${rawSha256.slice(0, CONTENT_DIGEST_CHARS)}`);
}

/**
 * Messages up to this size are hashed in the calling thread, where a hand-off to the
 * thread pool costs more than the hash. Tuned by measurement: bench/README.md, "Tuned constants › HASH_IN_THREAD_BYTES".
 */
export const HASH_IN_THREAD_BYTES = 64 * 1024;

/**
 * SHA-256 hex of a raw message: a small one at once, a larger one on libuv's thread pool
 * (WebCrypto), so a message of megabytes does not hold the event loop while it is hashed.
 */
export async function rawSha256Hex(raw: Uint8Array): Promise<string> {
    if (raw.byteLength <= HASH_IN_THREAD_BYTES) {
        return sha256HexOf(raw);
    }

    return Buffer.from(await webcrypto.subtle.digest('SHA-256', raw)).toString('hex');
}

/**
 * Whether an id survives as one URL path segment in every HTTP client and server:
 * `.` and `..` do not (WHATWG URL parsing, curl and hapi all resolve them as dot
 * segments, `%2E` included), nor does an id over MAX_MESSAGE_ID_BYTES (its cursor
 * and URLs grow with it). Every other id does, percent-encoded.
 */
export function isAddressableId(id: string): boolean {
    return id !== '.' && id !== '..' && shortId(id) === id;
}

/**
 * The id a copy of a message starts from (docs/design.md): its Message-ID, or for an
 * overlong one `<sha256 hex of it>@inbox-capture`. `single` is false when the copy
 * must be derived anyway (several inboxes in one delivery); a dot segment always is
 * (`.` → `.~<inbox>`), so every id the result gives is addressable.
 */
export function firstChoiceId(sourceId: string, inbox: string, single: boolean): string {
    const base = shortId(sourceId);
    return single && isAddressableId(base) ? base : deriveMessageId(base, inbox);
}

/**
 * A fresh, collision-free prefix for the blobs of one ingested copy: the time in ms (12 hex
 * digits), then 64 random bits. Time first, so that new keys land at the end of the indexes
 * on blob keys instead of on a random page each (a page written to the WAL per key).
 */
export function newBlobPrefix(): string {
    return Date.now().toString(16).padStart(12, '0') + randomBytesFromPool(8).toString('hex');
}

/** SHA-256 hex of a string (API key hashes, indexable digests of long ids). */
export function sha256Hex(value: string): string {
    return sha256HexOf(value);
}

// crypto.hash() (Node 20.12 and later) hashes in one call, five times faster than a Hash
// object for the short ids hashed several times a message; older versions build the object.
const oneShot = (Crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: 'hex') => string }).hash;
const sha256HexOf = oneShot
    ? (data: string | Uint8Array): string => oneShot('sha256', data, 'hex')
    : (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');
