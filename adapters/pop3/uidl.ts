import { createHash } from 'node:crypto';

/** Longest unique-id RFC 1939 allows. */
const MAX_UID_LENGTH = 70;
/** One to seventy printable characters, space excluded (0x21 to 0x7E). */
const PRINTABLE_UID = /^[\x21-\x7e]{1,70}$/;

/**
 * The UIDL of an email: its id when that is a valid unique-id, else `~` and the SHA-256 of
 * the id in base64url (44 characters). Either way it depends on the id alone, so it stays
 * the same in every session; a real id equal to a hashed one would need a SHA-256 preimage.
 */
export function uidOf(messageId: string): string {
    if (messageId.length <= MAX_UID_LENGTH && PRINTABLE_UID.test(messageId)) {
        return messageId;
    }

    return `~${createHash('sha256').update(messageId, 'utf8').digest('base64url')}`;
}
