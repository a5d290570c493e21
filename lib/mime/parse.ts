/**
 * The one place that knows mailparser. Everything else sees `ParsedMessage`.
 *
 * Why `MailParser` and not `simpleParser`: simpleParser rewrites every `cid:`
 * reference in the HTML into a `data:` URI holding the whole image (the HTML is
 * then not what was sent, and each inline image sits in memory twice), and it
 * rejects the whole message when html-to-text fails, which it does by
 * overflowing the stack on HTML nested a few thousand elements deep. Driving
 * `MailParser` ourselves we switch off its HTML-to-text, text-to-HTML and image
 * rewriting, collect attachments one by one, and derive text from HTML with our
 * own non-recursive converter (html-text.ts).
 *
 * Failure policy: parsing never refuses a message. The raw bytes are the source
 * of truth and are stored whatever happens here; when mailparser reports an
 * error (a header block over 1 MiB, more than 1000 MIME parts, a broken
 * decoder) we keep every field it finished before the error and leave the rest
 * empty, and hand the error back in `error` for the log. Whether the message can
 * be stored is decided by the caller (it needs a recipient).
 *
 * Known quirk, left as is: mailparser joins several inline text parts with `\n`
 * and several HTML parts with `<br/>\n`. In the rare multipart/mixed that holds a
 * text/plain and a text/html part side by side (not as alternatives), the parts
 * we switched off leave empty entries in those joins: `text` gains a trailing
 * `\n` and `html` a leading `<br/>\n`. Undoing that would mean guessing at the
 * parser's join; the usual shapes (alternative, related, mixed with files) are exact.
 *
 * Cost: parsing is CPU work, done in the parse pool's worker threads (parse-pool.ts),
 * not on the service's event loop, but for small, plain messages (small-message.ts),
 * whose parse costs less than a worker's round trip. Address header fields are bounded before mailparser
 * reads them (address-bounds.ts). Measured: bench/README.md, "Tuned constants › PARSER_OPTIONS".
 */
import type { AddressObject, AttachmentStream, EmailAddress, Headers, MessageText } from 'mailparser';
import { BoundedMailParser } from './address-bounds';
import { htmlTextOrNothing } from '../extract/html-text';
import type { EmailText, LinksAndCodes } from '../extract/links-and-codes';
import { tagsFromHeaders } from '../identity/tags';
import { cleanMailText } from './mail-text';

/** One attachment part, decoded, in message order. */
export interface ParsedAttachment {
    /** The file name as the message gives it (RFC 2047/2231 decoded), untrusted; undefined when none. */
    filename: string | undefined;
    /** Lowercase `type/subtype`; `application/octet-stream` when the part's is missing or malformed. */
    contentType: string;
    /** Decoded content. */
    content: Buffer;
    /** Decoded size in bytes. */
    size: number;
    /** Content-ID without angle brackets, for inline images; undefined when none. */
    contentId: string | undefined;
}

/** The text body an email shows: its text/plain part, else the text of its HTML. */
export function bodyText(parsed: Pick<ParsedMessage, 'text' | 'textFromHtml'>): string {
    return parsed.text.length > 0 ? parsed.text : parsed.textFromHtml;
}

/** The subject and bodies the email records of this message hold, which its links and codes are found in. */
export function emailText(parsed: Pick<ParsedMessage, 'subject' | 'text' | 'textFromHtml' | 'html'>): EmailText {
    return { subject: parsed.subject, body: bodyText(parsed), htmlBody: parsed.html };
}

/** What ingest needs from a message. Every field has a value, even for garbage input. */
export interface ParsedMessage {
    /** Message-ID header trimmed, without its angle brackets; undefined when missing or empty. */
    messageId: string | undefined;
    /** Bare address of the first `From` mailbox; undefined when there is none. */
    from: string | undefined;
    /** Display name of that mailbox, decoded, on one line; `''` when it has none. */
    fromName: string;
    /** Tags of the `X-Tags` header fields (lib/identity/tags.ts): comma-separated, invalid ones dropped. */
    tags: string[];
    /** Addresses of the `To` headers, in order (groups flattened). */
    to: string[];
    /** Addresses of the `Cc` headers, in order (groups flattened). */
    cc: string[];
    /** Decoded subject on one line (a CR/LF smuggled in by an encoded word becomes a space); `""` when none. */
    subject: string;
    /** The text/plain content; `""` when the message has none. */
    text: string;
    /** The HTML content exactly as sent (`cid:` links kept); `""` when none. */
    html: string;
    /**
     * Plain text derived from `html` (`""` when none): the body of a message without a text
     * part, and what `body:` searches besides the text part.
     */
    textFromHtml: string;
    attachments: ParsedAttachment[];
    /**
     * Links and codes of emailText(), when the parser found them too (the parse pool does,
     * so a long body is searched in a worker, not on the event loop); absent: ingest finds them.
     */
    linksAndCodes?: LinksAndCodes;
    /** The folded text `body:` searches (searchTextOf()), when the parser worked it out too (the parse pool does); absent: the caller does. */
    searchText?: string;
    /** The failure mailparser reported, when it stopped early; the fields above hold what it read before. */
    error?: Error;
    /**
     * The parse ran past the parse pool's deadline and was abandoned: every field above is
     * empty (ingest then reads the header fields back, abandoned-parse-headers.ts), and the
     * bodies and attachments stay empty (docs/guarantees.md).
     */
    abandoned?: boolean;
}

/** A ParsedMessage with every field empty: where a parse starts, and what an abandoned one gives. */
export function emptyParsedMessage(): ParsedMessage {
    return { messageId: undefined, from: undefined, fromName: '', tags: [], to: [], cc: [], subject: '', text: '', html: '', textFromHtml: '', attachments: [] };
}

// Longest media type we keep, characters (RFC 6838: 127 each side of the slash).
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
const FALLBACK_CONTENT_TYPE = 'application/octet-stream';
const LINE_BREAK = /\r\n|[\r\n]/g;

const PARSER_OPTIONS = {
    // We derive text from HTML ourselves (html-text.ts): html-to-text overflows on deep nesting.
    skipHtmlToText: true,
    // The text-as-HTML rendering and its link detection are work we would throw away.
    skipTextToHtml: true,
    skipTextLinks: true,
    // Keep `cid:` references as sent: simpleParser is what rewrites them, and we never call it.
    skipImageLinks: true,
    // mailparser hashes every attachment (md5 by default) for a checksum we never keep;
    // SHA-256 is the cheaper of the two on CPUs with SHA extensions.
    // Tuned by measurement: bench/README.md, "Tuned constants › PARSER_OPTIONS".
    checksumAlgo: 'sha256'
};

/** Parses a raw message. Never rejects: see the failure policy at the top of this file. */
export function parseMessage(raw: Buffer): Promise<ParsedMessage> {
    const result = emptyParsedMessage();

    // Attachments get their slot when they start, so the order is the message order
    // even though their content arrives later.
    const slots: Array<ParsedAttachment | null> = [];

    return new Promise((resolve) => {
        let settled = false;
        const parser = new BoundedMailParser(PARSER_OPTIONS);

        const finish = (err?: Error) => {
            if (settled) {
                return;
            }

            settled = true;
            if (err) {
                result.error = err;
                parser.removeAllListeners('data');
                parser.destroy();
            }

            // A slot still empty is an attachment the parser stopped inside of.
            result.attachments = slots.filter((a): a is ParsedAttachment => a !== null);
            cleanFields(result);
            // Always, not only without a text part: `body:` searches the HTML's text too. Cleaned
            // as well: an entity such as `&#1;` decodes to a control character.
            result.textFromHtml = cleanMailText(htmlTextOrNothing(result.html));

            resolve(result);
        };

        parser.on('headers', (headers: Headers) => {
            readHeaders(headers, result);
        });

        parser.on('data', (data: AttachmentStream | MessageText) => {
            if (data.type === 'text') {
                result.text = typeof data.text === 'string' ? data.text : '';
                result.html = typeof data.html === 'string' ? data.html : '';
                return;
            }

            collectAttachment(data, slots, finish);
        });

        parser.on('error', (err: unknown) => finish(toError(err)));
        parser.on('end', () => finish());

        try {
            parser.end(raw);
        }
        catch (err) {
            finish(toError(err));
        }
    });
}

function collectAttachment(data: AttachmentStream, slots: Array<ParsedAttachment | null>, fail: (err: Error) => void): void {
    const slot = slots.length;
    slots.push(null);

    const chunks: Buffer[] = [];
    let size = 0;
    data.content.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
    });
    data.content.on('error', (err: unknown) => fail(toError(err)));
    data.content.on('end', () => {
        const content = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
        chunks.length = 0;
        slots[slot] = {
            filename: typeof data.filename === 'string' && data.filename.length > 0 ? data.filename : undefined,
            contentType: mediaType(data.contentType),
            content,
            size: content.length,
            contentId: typeof data.cid === 'string' && data.cid.length > 0 ? data.cid : undefined
        };
        // The parser waits for this before it reads on.
        data.release();
    });
}

function readHeaders(headers: Headers, result: ParsedMessage): void {
    const messageId = headers.get('message-id');
    if (typeof messageId === 'string') {
        result.messageId = bareMessageId(messageId);
    }

    const subject = headers.get('subject');
    if (typeof subject === 'string') {
        // Unfolding leaves no line break in a header, but `=?utf-8?Q?a=0D=0ABcc:...?=` decodes to one:
        // a subject that spans lines would read as an injected header wherever it is shown or re-sent.
        result.subject = subject.replace(LINE_BREAK, ' ');
    }

    const from = mailboxes(headers.get('from'))[0];
    result.from = from?.address;
    result.fromName = from?.name.replace(LINE_BREAK, ' ').trim() ?? '';
    result.to = addresses(headers.get('to'));
    result.cc = addresses(headers.get('cc'));
    const tags = headers.get('x-tags');
    result.tags = tagsFromHeaders((Array.isArray(tags) ? tags : [tags]).filter((t): t is string => typeof t === 'string'));
}

/**
 * The text fields without control characters (mail-text.ts), before links and codes are
 * found in them: every email made from this message holds these. The Message-ID is kept
 * as sent: it is the email's identity (at most 256 bytes, docs/design.md), and stays
 * addressable with any character in it.
 */
function cleanFields(result: ParsedMessage): void {
    result.subject = cleanMailText(result.subject);
    result.text = cleanMailText(result.text);
    result.html = cleanMailText(result.html);
    const from = result.from === undefined ? undefined : cleanMailText(result.from);
    result.from = from === '' ? undefined : from;
    result.fromName = cleanMailText(result.fromName);
    result.to = result.to.map(cleanMailText).filter((a) => a !== '');
    result.cc = result.cc.map(cleanMailText).filter((a) => a !== '');
    // As the HTML's `cid:` links are: the two still match.
    for (const attachment of result.attachments) {
        if (attachment.contentId !== undefined) {
            attachment.contentId = cleanMailText(attachment.contentId) || undefined;
        }
    }
}

/** `<abc@x>` → `abc@x`: trimmed, one pair of angle brackets removed; undefined when nothing is left. */
export function bareMessageId(value: string): string | undefined {
    let id = value.trim();
    if (id.startsWith('<')) {
        id = id.slice(1);
    }

    if (id.endsWith('>')) {
        id = id.slice(0, -1);
    }

    id = id.trim();
    return id.length > 0 ? id : undefined;
}

/** The bare addresses of an address header (one or several header lines), groups flattened, empties dropped. */
function addresses(value: unknown): string[] {
    return mailboxes(value).map((m) => m.address);
}

/** The mailboxes (bare address, display name) of an address header, in order, groups flattened. */
function mailboxes(value: unknown): Array<{ address: string; name: string }> {
    const out: Array<{ address: string; name: string }> = [];
    const objects = (Array.isArray(value) ? value : [value]) as Array<AddressObject | undefined>;
    for (const object of objects) {
        if (object && Array.isArray(object.value)) {
            collect(object.value, out);
        }
    }

    return out;
}

function collect(list: EmailAddress[], out: Array<{ address: string; name: string }>): void {
    // Groups nest one level in practice (RFC 5322 forbids deeper); a loop over a stack keeps any depth safe.
    const stack = [...list].reverse();
    while (stack.length > 0) {
        const entry = stack.pop() as EmailAddress;
        if (typeof entry.address === 'string' && entry.address.trim().length > 0) {
            out.push({ address: entry.address.trim(), name: typeof entry.name === 'string' ? entry.name : '' });
        }

        if (Array.isArray(entry.group)) {
            for (let i = entry.group.length - 1; i >= 0; i--) {
                stack.push(entry.group[i]);
            }
        }
    }
}

/** A clean `type/subtype` (parameters dropped, lowercased), or octet-stream when it is not one. */
function mediaType(value: unknown): string {
    const type = String(value ?? '').split(';')[0].trim().toLowerCase();
    return MEDIA_TYPE.test(type) ? type : FALLBACK_CONTENT_TYPE;
}

function toError(err: unknown): Error {
    return err instanceof Error ? err : new Error(String(err));
}
