import { createHash, randomBytes } from 'node:crypto';

/** Suffix of ids we generate for messages that carry no Message-ID. */
export const GENERATED_ID_DOMAIN = 'inbox-capture';

// What encodeURIComponent() leaves as it is.
const UNRESERVED = /^[A-Za-z0-9\-_.!~*'()]$/;

/** A random, URL-safe id for a message that has no Message-ID header. */
export function generateMessageId(): string {
    return `${randomBytes(16).toString('base64url')}@${GENERATED_ID_DOMAIN}`;
}

/**
 * The id of a copy that cannot take the bare Message-ID (several inboxes in one
 * delivery, or the id already held in another inbox). Deterministic and readable
 * (`<sourceId>~<inbox>`), so a user who knows the Message-ID and inbox can compute it.
 */
export function deriveMessageId(sourceId: string, inbox: string): string {
    return `${sourceId}~${inbox}`;
}

/**
 * Longest id kept as is, counted percent-encoded as one URL path segment: 12,288
 * characters (12 KiB). Node's HTTP server refuses a request whose line and headers
 * pass 16 KiB; this leaves 4 KiB for the rest of the longest URL (an attachment's
 * encoded file name) and the client's headers. A real Message-ID is far shorter.
 */
export const MAX_ADDRESSABLE_ID_LENGTH = 12 * 1024;

/**
 * Whether an id survives as one URL path segment in every HTTP client and server:
 * `.` and `..` do not (WHATWG URL parsing, curl and hapi all resolve them as dot
 * segments, `%2E` included), nor does an id whose encoded segment is over
 * MAX_ADDRESSABLE_ID_LENGTH. Every other id does, percent-encoded.
 */
export function isAddressableId(id: string): boolean {
    return id !== '.' && id !== '..' && encodedLength(id) <= MAX_ADDRESSABLE_ID_LENGTH;
}

/**
 * The id a copy of a message starts from (docs/design.md): its Message-ID, or for an
 * overlong one `<sha256 hex of it>@inbox-capture`. `single` is false when the copy
 * must be derived anyway (several inboxes in one delivery); a dot segment always is
 * (`.` → `.~<inbox>`), so every id the result gives is addressable.
 */
export function firstChoiceId(sourceId: string, inbox: string, single: boolean): string {
    const base = encodedLength(sourceId) > MAX_ADDRESSABLE_ID_LENGTH ? `${sha256Hex(sourceId)}@${GENERATED_ID_DOMAIN}` : sourceId;
    return single && isAddressableId(base) ? base : deriveMessageId(base, inbox);
}

/** Length of `encodeURIComponent(id)`, without building it (and without throwing on a lone surrogate). */
function encodedLength(id: string): number {
    // Only a long id can be over the limit: a short one is not measured further.
    if (id.length * 9 <= MAX_ADDRESSABLE_ID_LENGTH) {
        return id.length;
    }

    let length = 0;
    for (const char of id) {
        const code = char.codePointAt(0) as number;
        if (code < 0x80) {
            length += UNRESERVED.test(char) ? 1 : 3;
        }
        else {
            length += 3 * Buffer.byteLength(char, 'utf8');
        }
    }

    return length;
}

/** A fresh, collision-free prefix for the blobs of one ingested copy. */
export function newBlobPrefix(): string {
    return randomBytes(12).toString('hex');
}

/** SHA-256 hex of a string (API key hashes, indexable digests of long ids). */
export function sha256Hex(value: string): string {
    return createHash('sha256').update(value, 'utf8').digest('hex');
}
