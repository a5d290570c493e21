/** Text as both backends can store it and read back unchanged. */

import { isValidTag, MAX_TAGS } from '../../identity/tags';
import type { EmailDraft, StoredAttachment } from '../../types';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `value` without NUL and with lone UTF-16 surrogates as U+FFFD: Postgres rejects
 * NUL in text, and a lone surrogate cannot be encoded in UTF-8 (drivers would turn
 * it into U+FFFD on the way in). Applied on SQLite too, so a record reads the same
 * whichever backend holds it; lookups apply it to their input.
 */
export function cleanText(value: string): string {
    const noNul = value.includes('\u0000') ? value.replace(/\u0000/g, '') : value;
    return noNul.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * A draft with every text field cleaned, links included; blob keys are ours (hex from
 * newBlobPrefix), never from mail, and codes are ingest's digit runs: both kept as given.
 * `cleaned` (one per save) lets the copies of a delivery, which share one attachment
 * list, share its cleaned list too: 100 copies of 990 attachments are cleaned once.
 */
export function cleanDraft(draft: EmailDraft, cleaned?: Map<StoredAttachment[], StoredAttachment[]>): EmailDraft {
    let attachments = cleaned?.get(draft.attachments);
    if (!attachments) {
        attachments = draft.attachments.map((a) => {
            const attachment: StoredAttachment = { filename: cleanText(a.filename), contentType: cleanText(a.contentType), size: a.size, blobKey: a.blobKey };
            if (a.contentId !== undefined) {
                attachment.contentId = cleanText(a.contentId);
            }

            return attachment;
        });
        cleaned?.set(draft.attachments, attachments);
    }

    return {
        sourceId: cleanText(draft.sourceId),
        inbox: cleanText(draft.inbox),
        sender: cleanText(draft.sender),
        senderName: cleanText(draft.senderName),
        recipient: cleanText(draft.recipient),
        subject: cleanText(draft.subject),
        body: cleanText(draft.body),
        htmlBody: cleanText(draft.htmlBody),
        receivedAt: draft.receivedAt,
        rawKey: draft.rawKey,
        rawSize: draft.rawSize,
        rawSha256: draft.rawSha256,
        attachments,
        links: draft.links.map((l) => ({ href: cleanText(l.href), text: cleanText(l.text) })),
        codes: draft.codes,
        // Tags are the store's to keep valid: a search names them exactly (lib/identity/tags.ts).
        tags: [...new Set(draft.tags)].filter(isValidTag).slice(0, MAX_TAGS),
        searchText: cleanText(draft.searchText),
        ...(draft.smtpClient ? { smtpClient: {
            address: draft.smtpClient.address,
            helo: draft.smtpClient.helo === null ? null : cleanText(draft.smtpClient.helo),
            mailFrom: draft.smtpClient.mailFrom === null ? null : cleanText(draft.smtpClient.mailFrom)
        } } : {})
    };
}

/**
 * A LIKE pattern (with ESCAPE '\') matching the user's text anywhere: `%`, `_` and
 * `\` in it match literally; the stored side is folded with the same toLowerCase()
 * at write time.
 */
export function containsPattern(text: string): string {
    const escaped = cleanText(text).toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
    return `%${escaped}%`;
}
