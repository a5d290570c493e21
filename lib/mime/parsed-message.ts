/**
 * What a parse gives (`ParsedMessage`) and how it is filled from mailparser's header map
 * and finished, shared by both ways a message is parsed: mailparser's streams (parse.ts)
 * and the synchronous parse of small plain messages (plain-parse.ts). One place, so that
 * the two cannot drift apart in what they do to a field.
 */
import type { AddressObject, EmailAddress, Headers } from 'mailparser';
import { htmlTextOrNothing } from '../extract/html-text';
import type { EmailText, LinksAndCodes } from '../extract/links-and-codes';
import { tagsFromHeaders } from '../identity/tags';
import { cleanMailText } from './mail-text';

const LINE_BREAK = /\r\n|[\r\n]/g;

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

/**
 * The last step of every parse, however it read the message: the text fields cleaned
 * (below) and the text of the HTML worked out.
 */
export function completeFields(result: ParsedMessage): ParsedMessage {
    cleanFields(result);
    // Always, not only without a text part: `body:` searches the HTML's text too. Cleaned
    // as well: an entity such as `&#1;` decodes to a control character.
    result.textFromHtml = cleanMailText(htmlTextOrNothing(result.html));
    return result;
}

/** Sets the header fields of `result` from mailparser's header map of the top-level part. */
export function readHeaders(headers: Headers, result: ParsedMessage): void {
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
