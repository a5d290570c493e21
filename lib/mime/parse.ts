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
import type { AttachmentStream, Headers, MessageText } from 'mailparser';
import { BoundedMailParser } from './address-bounds';
import { completeFields, emptyParsedMessage, readHeaders, type ParsedAttachment, type ParsedMessage } from './parsed-message';
import { parsePlainMessage } from './plain-parse';

export { bareMessageId, bodyText, emailText, emptyParsedMessage, type ParsedAttachment, type ParsedMessage } from './parsed-message';

// Longest media type we keep, characters (RFC 6838: 127 each side of the slash).
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
const FALLBACK_CONTENT_TYPE = 'application/octet-stream';

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

/**
 * Parses a raw message. Never rejects: see the failure policy at the top of this file.
 * A small plain message is read without mailparser's streams when plain-parse.ts is sure
 * of giving what mailparser would; every other message goes to mailparser.
 */
export function parseMessage(raw: Buffer): Promise<ParsedMessage> {
    const plain = parsePlainMessage(raw);
    return plain === undefined ? parseWithMailparser(raw) : Promise.resolve(plain);
}

/** Parses a raw message with mailparser's `MailParser`, whatever its shape. Never rejects. */
export function parseWithMailparser(raw: Buffer): Promise<ParsedMessage> {
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
            resolve(completeFields(result));
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

/** A clean `type/subtype` (parameters dropped, lowercased), or octet-stream when it is not one. */
function mediaType(value: unknown): string {
    const type = String(value ?? '').split(';')[0].trim().toLowerCase();
    return MEDIA_TYPE.test(type) ? type : FALLBACK_CONTENT_TYPE;
}

function toError(err: unknown): Error {
    return err instanceof Error ? err : new Error(String(err));
}
