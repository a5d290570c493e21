import type { EmailRecord, EmailView } from './types';

/** Relative URL of the raw .eml of an email, its id percent-encoded as one segment. */
export function rawUrl(messageId: string, pathPrefix = ''): string {
    return `${pathPrefix}/v1/emails/${encodeURIComponent(messageId)}/raw`;
}

/** Relative URL of one attachment. */
export function attachmentUrl(messageId: string, filename: string, pathPrefix = ''): string {
    return `${pathPrefix}/v1/emails/${encodeURIComponent(messageId)}/attachments/${encodeURIComponent(filename)}`;
}

/** The API's email object (spec §2.1) for a stored record; blob keys stay inside. */
export function toEmailView(record: EmailRecord, pathPrefix = ''): EmailView {
    return {
        messageId: record.messageId,
        inbox: record.inbox,
        sender: record.sender,
        recipient: record.recipient,
        subject: record.subject,
        body: record.body,
        htmlBody: record.htmlBody,
        attachments: record.attachments.map((a) => ({
            filename: a.filename,
            contentType: a.contentType,
            size: a.size,
            url: attachmentUrl(record.messageId, a.filename, pathPrefix)
        })),
        receivedAt: record.receivedAt,
        rawUrl: rawUrl(record.messageId, pathPrefix)
    };
}
