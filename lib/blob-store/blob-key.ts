import type { EmailRecord } from '../types';

/** Longest blob key, characters: our keys are `<28 hex>/att/<n>`; the cap keeps paths short everywhere. */
export const MAX_BLOB_KEY_LENGTH = 200;

// Lowercase letters, digits and `._-` in `/`-separated segments. No backslash, NUL,
// `%` or uppercase, so a key means the same thing on every file system and in a URL.
const KEY_PATTERN = /^[a-z0-9][a-z0-9._/-]{0,199}$/;

/**
 * True for a key we could have generated. Keys come from our own ids, but every
 * store checks them anyway: a key is a path on disk and a path in a URL, and a
 * segment that is empty or starts with a dot (`..`, `.tmp`) means something else there.
 */
export function isValidBlobKey(key: unknown): key is string {
    if (typeof key !== 'string' || key.length > MAX_BLOB_KEY_LENGTH || !KEY_PATTERN.test(key)) {
        return false;
    }

    return key.split('/').every((segment) => segment.length > 0 && !segment.startsWith('.'));
}

/** Every blob key the records reference: raw messages and attachments. */
export function blobKeysOf(records: EmailRecord[]): string[] {
    return records.flatMap((r) => [r.rawKey, ...r.attachments.map((a) => a.blobKey)]);
}
