/**
 * A synchronous parse of the commonest small messages: one text/plain or text/html part
 * (or none named: plain text), or a multipart/alternative of such parts (nodemailer's
 * shape for text with HTML), 7bit, 8bit, binary, quoted-printable or base64, in UTF-8,
 * US-ASCII or a charset listed below. It gives exactly what parse.ts gets from mailparser
 * for such a message, without mailparser's streams: for a 1 KB message those (the line
 * splitter, the node tree, a stream per decoder, a setImmediate per step) are most of the
 * parse's CPU and most of what the garbage collector has to promote (bench/README.md,
 * "A parse without streams").
 *
 * Same by construction, where it can be: the header block is read by mailsplit's own
 * MimeNode (the class mailparser's splitter uses, so the same content type, charset,
 * encoding and format), the header fields by mailparser's own processHeaders() with our
 * address bounds (address-bounds.ts), the bodies by the same libqp, libbase64 and
 * iconv-lite calls that mailparser's decoders make, the parts joined as mailparser joins
 * them. What is not the libraries' own code (where the splitter cuts the bodies,
 * multipart-parts.ts, and the steps of the base64 decoder stream) a differential test
 * holds to mailparser (test/lib/mime/plain-parse.ts).
 *
 * Anything it is not sure of (another content type, a disposition other than inline,
 * format=flowed, another transfer encoding or charset, another multipart, a part of an
 * alternative that is not text, a message over SMALL_MESSAGE_BYTES) is "not mine":
 * parsePlainMessage() returns undefined and the message goes to mailparser as before.
 */
import { createRequire } from 'node:module';
import { BoundedMailParser } from './address-bounds';
import { multipartParts } from './multipart-parts';
import { completeFields, emptyParsedMessage, readHeaders, type ParsedMessage } from './parsed-message';
import { SMALL_MESSAGE_BYTES } from './small-message';

/** One header line as mailsplit gives it and mailparser's processHeaders() takes it. */
interface HeaderLine {
    key: string;
    line: string;
}

/** The parts of mailsplit's MimeNode read here (mailsplit 5.4.x, mailparser's own copy). */
interface MimeNode {
    multipart: string | false;
    addHeaderChunk(line: Buffer): void;
    parseHeaders(): void;
    headers: { getList(): HeaderLine[] };
    contentType: string | false;
    charset: string | false;
    encoding: string | false;
    disposition: string | false;
    flowed: boolean;
    _boundary: Buffer | false;
}

/** mailparser's header reading, called on an object that is not a stream (see headerReader). */
interface HeaderReader {
    libmime: unknown;
    processHeaders(lines: HeaderLine[]): Map<string, unknown>;
}

// Each library as mailparser (and its mailsplit) resolve it, not whatever copy the
// project's own dependencies would pick.
const fromMailparser = createRequire(require.resolve('mailparser'));
const mailsplitPath = fromMailparser.resolve('@zone-eu/mailsplit');
const fromMailsplit = createRequire(mailsplitPath);
const MimeNodeClass = (fromMailparser('@zone-eu/mailsplit') as { MimeNode: new (parent: MimeNode | false, config: object) => MimeNode }).MimeNode;
const libmime = fromMailparser('libmime') as { Libmime: new (options: object) => unknown; normalizeCharset(charset: string): string };
const iconv = fromMailparser('iconv-lite') as { decode(bytes: Buffer, charset: string): string };
const libqp = fromMailsplit('libqp') as { decode(bytes: Buffer): Buffer };
const libbase64 = fromMailsplit('libbase64') as { decode(text: string): Buffer };

/**
 * processHeaders() reads nothing of the parser but `libmime` and its own methods, so an
 * object with BoundedMailParser's prototype and a libmime made as mailparser's
 * constructor makes it runs the very code a MailParser runs, with no stream created.
 */
const headerReader = Object.create(BoundedMailParser.prototype) as HeaderReader;
headerReader.libmime = new libmime.Libmime({ Iconv: undefined });
if (typeof headerReader.processHeaders !== 'function') {
    throw new Error('plain-parse: mailparser no longer has processHeaders(); update lib/mime/plain-parse.ts');
}

/** The header fields readHeaders() reads: only these are worth processing. */
const READ_FIELDS = new Set(['message-id', 'subject', 'from', 'to', 'cc', 'x-tags']);
/** Transfer encodings whose decoding is known here; mailparser passes any other through as is, but we do not guess. */
const ENCODINGS = new Set(['', '7bit', '8bit', 'binary', 'quoted-printable', 'base64']);
/** Charsets (as libmime names them, in capitals) that iconv-lite decodes one byte at a time: the same whole or in pieces. */
const SINGLE_BYTE_CHARSETS = new Set(['WINDOWS-1252', 'ISO-8859-15', 'ISO-8859-2', 'WINDOWS-1250', 'KOI8-R']);
// mailparser's test for a charset it leaves to Buffer's UTF-8 reading.
const NO_CONVERSION = new Set(['ascii', 'usascii', 'utf8']);
const LINE_BREAKS = /\r?\n/g;
const NOT_BASE64 = /[^a-zA-Z0-9+/=]/;
const NOT_BASE64_ALL = /[^a-zA-Z0-9+/=]/g;

/** The parse mailparser would give `raw`, when `raw` is a small plain message; undefined otherwise. */
export function parsePlainMessage(raw: Buffer): ParsedMessage | undefined {
    if (raw.length > SMALL_MESSAGE_BYTES) {
        return undefined;
    }

    const bodyStart = headerBlockEnd(raw);
    const root = new MimeNodeClass(false, {});
    root.addHeaderChunk(raw.subarray(0, bodyStart));
    root.parseHeaders();
    const texts = root.multipart === 'alternative' && root._boundary !== false
        ? alternativeTexts(raw, bodyStart, root)
        // mailparser's reading of a top-level part without a type.
        : leafText(root, root.contentType || 'text/plain', raw.subarray(bodyStart));
    if (texts === undefined) {
        return undefined;
    }

    const result = emptyParsedMessage();
    const lines = root.headers.getList().filter((l) => READ_FIELDS.has(l.key));
    readHeaders(headerReader.processHeaders(lines) as Parameters<typeof readHeaders>[0], result);
    // mailparser's joins (getTextContent()): empty parts leave no entry.
    result.text = texts.text.filter((t) => t.length > 0).join('\n');
    result.html = texts.html.filter((h) => h.length > 0).join('<br/>\n');
    return completeFields(result);
}

/** The text and HTML contents of a message's parts, in order, before mailparser joins them. */
interface Texts {
    text: string[];
    html: string[];
}

/** The contents of each part of a multipart/alternative body; undefined when any part is not plain. */
function alternativeTexts(raw: Buffer, bodyStart: number, root: MimeNode): Texts | undefined {
    const parts = multipartParts(raw, bodyStart, root._boundary as Buffer);
    if (parts === undefined) {
        return undefined;
    }

    const texts: Texts = { text: [], html: [] };
    for (const part of parts) {
        const node = new MimeNodeClass(root, {});
        node.addHeaderChunk(part.header);
        node.parseHeaders();
        // A part with an empty Content-Type has no type for mailparser: an attachment.
        const partTexts = node.contentType === false ? undefined : leafText(node, node.contentType, part.body);
        if (partTexts === undefined) {
            return undefined;
        }

        texts.text.push(...partTexts.text);
        texts.html.push(...partTexts.html);
    }

    return texts;
}

/** The content of a single text part, as text or as HTML; undefined when mailparser might read it otherwise. */
function leafText(node: MimeNode, contentType: string, body: Buffer): Texts | undefined {
    const encoding = node.encoding || '';
    if ((contentType !== 'text/plain' && contentType !== 'text/html') ||
        (node.disposition !== false && node.disposition !== 'inline') ||
        node.flowed || node._boundary !== false || !ENCODINGS.has(encoding)) {
        return undefined;
    }

    const content = bodyContent(body, encoding, node.charset || 'utf-8');
    if (content === undefined) {
        return undefined;
    }

    return contentType === 'text/plain' ? { text: [content], html: [] } : { text: [], html: [content] };
}

/**
 * Where the body starts: after the first empty line (LF or CRLF), which belongs to the
 * header block as mailsplit counts it; the end of the message when there is none.
 */
function headerBlockEnd(raw: Buffer): number {
    if (raw[0] === 0x0a) {
        return 1;
    }

    if (raw[0] === 0x0d && raw[1] === 0x0a) {
        return 2;
    }

    const lf = raw.indexOf('\n\n');
    const crlf = raw.indexOf('\n\r\n');
    if (lf === -1 && crlf === -1) {
        return raw.length;
    }

    return lf !== -1 && (crlf === -1 || lf < crlf) ? lf + 2 : crlf + 3;
}

/** The text of a top-level part's body as mailparser reads it; undefined for a charset not known here. */
function bodyContent(body: Buffer, encoding: string, charset: string): string | undefined {
    const decoded = encoding === 'quoted-printable' ? libqp.decode(body) : encoding === 'base64' ? base64Decode(body) : body;
    if (NO_CONVERSION.has(charset.toLowerCase().replace(/[^a-z0-9]+/g, ''))) {
        return decoded.toString().replace(LINE_BREAKS, '\n');
    }

    const name = libmime.normalizeCharset(charset);
    return SINGLE_BYTE_CHARSETS.has(name.toUpperCase()) ? iconv.decode(decoded, name).replace(LINE_BREAKS, '\n') : undefined;
}

/**
 * libbase64's Decoder stream, step for step, written the whole body at once: characters
 * outside the alphabet dropped (`-` and `_` too, which Buffer would read as URL-safe
 * base64), then decoded up to the last padding, the whole groups of four after it, and
 * the rest. Whether the splitter writes the body in one piece or two (a last line
 * without a line break comes apart) gives the same bytes: the decoder carries what is
 * not a whole group into the next piece. The decoding itself is libbase64's.
 */
function base64Decode(body: Buffer): Buffer {
    let b64 = body.toString('ascii');
    if (NOT_BASE64.test(b64)) {
        b64 = b64.replace(NOT_BASE64_ALL, '');
    }

    let padded = '';
    const lastPad = b64.lastIndexOf('=');
    if (lastPad >= 0) {
        padded = b64.slice(0, lastPad + 1);
        b64 = b64.slice(lastPad + 1);
    }

    const whole = b64.length - (b64.length % 4);
    const out = [padded + b64.slice(0, whole), b64.slice(whole)].filter((part) => part.length > 0).map((part) => libbase64.decode(part));
    return out.length === 1 ? out[0] : Buffer.concat(out);
}
