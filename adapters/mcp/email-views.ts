import { htmlToPlainText } from '../../lib/extract/html-text';
import type { MailEmail, MailHeader } from './mail-access';

// What the tools show of an email: the summary of search_emails, the whole of get_email
// and wait_for_email, each as structured data and as text an agent reads.

/** Longest `text` of an email, UTF-16 units: more is cut and `textTruncated` says so. */
export const MAX_TEXT_CHARS = 100_000;

/**
 * Most characters of header fields (names and values) an email shows, as for its text:
 * past it the fields are cut and `headersTruncated` says so. An agent reads every
 * character it is given, and a mail can carry a header section of megabytes; the API's
 * `/headers` gives them all.
 */
export const MAX_HEADER_CHARS = 100_000;

/** An email as search_emails lists it. */
export interface EmailSummary {
    messageId: string;
    sender: string;
    recipient: string;
    subject: string;
    receivedAt: number;
    codes: string[];
    links: Array<{ href: string; text: string }>;
    tags: string[];
    attachmentCount: number;
}

/** An email as get_email and wait_for_email give it. */
export interface EmailDetail {
    messageId: string;
    inbox: string;
    sender: string;
    recipient: string;
    subject: string;
    receivedAt: number;
    text: string;
    textTruncated: boolean;
    links: Array<{ href: string; text: string }>;
    codes: string[];
    tags: string[];
    attachments: Array<{ filename: string; contentType: string; size: number }>;
    headers: MailHeader[];
    headersTruncated: boolean;
}

/**
 * The text body, else (empty or only white space, as an empty text part arrives) the HTML
 * body as text; cut at MAX_TEXT_CHARS without splitting a character.
 */
export function readableText(email: Pick<MailEmail, 'body' | 'htmlBody'>): { text: string; textTruncated: boolean } {
    const full = email.body.trim() !== '' || email.htmlBody === '' ? email.body : htmlToPlainText(email.htmlBody);
    if (full.length <= MAX_TEXT_CHARS) {
        return { text: full, textTruncated: false };
    }

    // A high surrogate at the cut would leave half a character.
    const end = /[\uD800-\uDBFF]/.test(full[MAX_TEXT_CHARS - 1]!) ? MAX_TEXT_CHARS - 1 : MAX_TEXT_CHARS;
    return { text: full.slice(0, end), textTruncated: true };
}

/** The fields in order until MAX_HEADER_CHARS: the field that reaches it is cut (never inside a character), the rest left out. */
export function boundedHeaders(headers: MailHeader[]): { headers: MailHeader[]; headersTruncated: boolean } {
    const kept: MailHeader[] = [];
    let left = MAX_HEADER_CHARS;
    for (const header of headers) {
        const size = header.name.length + header.value.length;
        if (size <= left) {
            kept.push(header);
            left -= size;
            continue;
        }

        const room = left - header.name.length;
        if (room > 0) {
            const end = /[\uD800-\uDBFF]/.test(header.value[room - 1]!) ? room - 1 : room;
            kept.push({ name: header.name, value: header.value.slice(0, end) });
        }

        return { headers: kept, headersTruncated: true };
    }

    return { headers: kept, headersTruncated: false };
}

/** The summary of one email. */
export function toSummary(email: MailEmail): EmailSummary {
    return {
        messageId: email.messageId,
        sender: email.sender,
        recipient: email.recipient,
        subject: email.subject,
        receivedAt: email.receivedAt,
        codes: email.codes,
        links: email.links,
        tags: email.tags,
        attachmentCount: email.attachments.length
    };
}

/** The whole email with its header fields. */
export function toDetail(email: MailEmail, headers: MailHeader[]): EmailDetail {
    return {
        messageId: email.messageId,
        inbox: email.inbox,
        sender: email.sender,
        recipient: email.recipient,
        subject: email.subject,
        receivedAt: email.receivedAt,
        ...readableText(email),
        links: email.links,
        codes: email.codes,
        tags: email.tags,
        attachments: email.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, size: a.size })),
        ...boundedHeaders(headers)
    };
}

const time = (ms: number) => new Date(ms).toISOString();

/** A few lines per email: when, who, subject, codes and the first links. */
export function describeSummaries(emails: EmailSummary[]): string {
    return emails.map((e) => [
        `- ${time(e.receivedAt)} from ${e.sender || '(no sender)'}: ${JSON.stringify(e.subject)}`,
        `  messageId: ${e.messageId}`,
        ...(e.codes.length > 0 ? [`  codes: ${e.codes.join(', ')}`] : []),
        ...e.links.slice(0, 3).map((l) => `  link: ${l.href}`),
        ...(e.attachmentCount > 0 ? [`  attachments: ${e.attachmentCount}`] : []),
        ...(e.tags.length > 0 ? [`  tags: ${e.tags.join(', ')}`] : [])
    ].join('\n')).join('\n');
}

/** The email as a person would read it: the usual headers, codes, links, attachments, then the text. */
export function describeDetail(email: EmailDetail): string {
    const lines = [
        `messageId: ${email.messageId}`,
        `inbox: ${email.inbox}`,
        `from: ${email.sender}`,
        `to: ${email.recipient}`,
        `subject: ${email.subject}`,
        `received: ${time(email.receivedAt)}`
    ];
    if (email.codes.length > 0) {
        lines.push(`codes: ${email.codes.join(', ')}`);
    }

    if (email.tags.length > 0) {
        lines.push(`tags: ${email.tags.join(', ')}`);
    }

    for (const link of email.links) {
        lines.push(`link: ${link.href}${link.text && link.text !== link.href ? ` (${link.text})` : ''}`);
    }

    for (const attachment of email.attachments) {
        lines.push(`attachment: ${attachment.filename} (${attachment.contentType}, ${attachment.size} bytes)`);
    }

    lines.push('', email.text);
    if (email.textTruncated) {
        lines.push('', `[text cut at ${MAX_TEXT_CHARS} characters]`);
    }

    return lines.join('\n');
}
