import { randomBytes } from 'node:crypto';

/** An attachment of a test message. */
export interface TestAttachment {
    filename: string;
    contentType: string;
    content: Buffer | string;
    /** Without angle brackets: the part is an inline image the HTML names as `cid:<contentId>`. */
    contentId?: string;
}

/** What a test message says. */
export interface TestMail {
    from?: string;
    to?: string | string[];
    subject?: string;
    text?: string;
    html?: string;
    /** With `html`: the HTML part alone, no text part (so the text body is derived from it). */
    htmlOnly?: boolean;
    /** Without angle brackets; `null` leaves the header out. Default: a random one. */
    messageId?: string | null;
    attachments?: TestAttachment[];
    /** Extra header lines, as written (`X-Tags: a, b`). */
    headers?: string[];
}

/** A random Message-ID, unique per call. */
export function randomMessageId(): string {
    return `${randomBytes(8).toString('hex')}@test.example`;
}

// Lines of base64 stay under the 78-character limit of RFC 5322.
function base64Lines(content: Buffer | string): string {
    return (Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8')).toString('base64').replace(/.{1,76}/g, '$&\r\n');
}

/** A simple RFC 5322 message (CRLF line ends), multipart when it has HTML or attachments. */
export function buildMail(mail: TestMail = {}): string {
    const to = Array.isArray(mail.to) ? mail.to.join(', ') : mail.to ?? 'inbox@test.example';
    const headers = [
        `From: ${mail.from ?? 'sender@test.example'}`,
        `To: ${to}`,
        `Subject: ${mail.subject ?? 'test message'}`,
        'Date: Tue, 21 Nov 2023 10:00:00 +0000',
        'MIME-Version: 1.0',
        ...mail.headers ?? []
    ];
    const messageId = mail.messageId === undefined ? randomMessageId() : mail.messageId;
    if (messageId !== null) {
        headers.push(`Message-ID: <${messageId}>`);
    }

    const text = mail.text ?? 'hello';
    const attachments = mail.attachments ?? [];
    if (!mail.html && attachments.length === 0) {
        return [...headers, 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 8bit', '', text, ''].join('\r\n');
    }

    const boundary = `b-${randomBytes(8).toString('hex')}`;
    const textPart = ['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 8bit', '', text].join('\r\n');
    const parts: string[] = [];
    if (mail.html && mail.htmlOnly) {
        parts.push(['Content-Type: text/html; charset=utf-8', 'Content-Transfer-Encoding: 8bit', '', mail.html].join('\r\n'));
    }
    else if (mail.html) {
        // Text and HTML as alternatives of one another, as mail clients send them.
        const inner = `a-${randomBytes(8).toString('hex')}`;
        const htmlPart = ['Content-Type: text/html; charset=utf-8', 'Content-Transfer-Encoding: 8bit', '', mail.html].join('\r\n');
        parts.push([
            `Content-Type: multipart/alternative; boundary="${inner}"`,
            '',
            `--${inner}\r\n${textPart}`,
            `--${inner}\r\n${htmlPart}`,
            `--${inner}--`
        ].join('\r\n'));
    }
    else {
        parts.push(textPart);
    }

    for (const attachment of attachments) {
        parts.push([
            `Content-Type: ${attachment.contentType}; name="${attachment.filename}"`,
            ...attachment.contentId ? [`Content-ID: <${attachment.contentId}>`, `Content-Disposition: inline; filename="${attachment.filename}"`] : [`Content-Disposition: attachment; filename="${attachment.filename}"`],
            'Content-Transfer-Encoding: base64',
            '',
            base64Lines(attachment.content)
        ].join('\r\n'));
    }

    return [
        ...headers,
        `Content-Type: multipart/mixed; boundary="${boundary}"`,
        '',
        ...parts.map((part) => `--${boundary}\r\n${part}`),
        `--${boundary}--`,
        ''
    ].join('\r\n');
}
