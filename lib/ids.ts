import { createHash, randomBytes } from 'node:crypto';

/** Suffix of ids we generate for messages that carry no Message-ID. */
export const GENERATED_ID_DOMAIN = 'inbox-capture';

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

/** A fresh, collision-free prefix for the blobs of one ingested copy. */
export function newBlobPrefix(): string {
    return randomBytes(12).toString('hex');
}

/** SHA-256 hex of a string (API key hashes, indexable digests of long ids). */
export function sha256Hex(value: string): string {
    return createHash('sha256').update(value, 'utf8').digest('hex');
}
