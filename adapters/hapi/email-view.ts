import { encodeCursor } from '../../lib/cursor/email-cursor';
import type { EmailRecord, RecordPage } from '../../lib/types';
import type { EmailPage, EmailView } from './api-types';

// The core returns records; the /v1 URLs and the JSON shapes of the API are built here,
// so the core never knows a route of ours.

/** Relative URL of the raw .eml of an email, its id percent-encoded as one segment. */
export function rawUrl(messageId: string, pathPrefix = ''): string {
    return `${pathPrefix}/v1/emails/${encodeURIComponent(messageId)}/raw`;
}

/** Relative URL of one attachment, id and file name each percent-encoded as one segment. */
export function attachmentUrl(messageId: string, filename: string, pathPrefix = ''): string {
    return `${pathPrefix}/v1/emails/${encodeURIComponent(messageId)}/attachments/${encodeURIComponent(filename)}`;
}

/** The API's email object for a stored record; blob keys stay inside. */
export function toEmailView(record: EmailRecord, pathPrefix = ''): EmailView {
    return {
        messageId: record.messageId,
        inbox: record.inbox,
        sender: record.sender,
        senderName: record.senderName,
        recipient: record.recipient,
        subject: record.subject,
        body: record.body,
        htmlBody: record.htmlBody,
        attachments: record.attachments.map((a) => ({
            filename: a.filename,
            contentType: a.contentType,
            size: a.size,
            url: attachmentUrl(record.messageId, a.filename, pathPrefix),
            contentId: a.contentId ?? ''
        })),
        receivedAt: record.receivedAt,
        rawUrl: rawUrl(record.messageId, pathPrefix),
        links: record.links.map((l) => ({ href: l.href, text: l.text })),
        codes: [...record.codes],
        tags: [...record.tags],
        size: record.rawSize,
        seen: record.seen
    };
}

/** The API's list page for a page of records: the cursor points after its last email. */
export function toEmailPage(page: RecordPage, pathPrefix = ''): EmailPage {
    return pageEnvelope(page.records.map((r) => toEmailView(r, pathPrefix)), page.hasMore);
}

/** The list page envelope around these emails: `nextCursor` (after the last one) exactly when `hasMore`. */
export function pageEnvelope(emails: EmailView[], hasMore: boolean): EmailPage {
    const envelope: EmailPage = { emails, hasMore };
    const last = emails[emails.length - 1];
    if (hasMore && last) {
        envelope.nextCursor = encodeCursor({ receivedAt: last.receivedAt, messageId: last.messageId });
    }

    return envelope;
}
