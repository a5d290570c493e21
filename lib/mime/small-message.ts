/**
 * Which messages are parsed on the calling thread instead of a parse worker: those whose
 * bytes prove the parse cheap (docs/operations.md, "The parse worker"). A worker's round
 * trip costs several times what the parse of a 1 KB message does, but a parse on the event
 * loop cannot be abandoned at the deadline, so only a message small and plain in every shape
 * that made parses slow takes it: few header lines and addresses, few encoded words and
 * `xn--` labels, few MIME boundaries (parts and nesting). Everything else goes to a worker.
 * A few native searches of the bytes, no regular expression. Limits measured: bench/README.md,
 * "Tuned constants › SMALL_MESSAGE_BYTES".
 */

/** Largest message parsed on the calling thread, bytes. */
export const SMALL_MESSAGE_BYTES = 16 * 1024;
/** Lines of the top header section at most (a message with a long relay trail has about 60). */
export const SMALL_MAX_HEADER_LINES = 128;
/** `@` in the top header section at most: addresses of From, To, Cc and the rest. */
export const SMALL_MAX_HEADER_ADDRESSES = 64;
/** `=?` anywhere (encoded-word starts, header fields of parts too) at most. */
export const SMALL_MAX_ENCODED_WORDS = 32;
/** `xn--` anywhere at most: each is a punycode decoding of an address's domain. */
export const SMALL_MAX_PUNYCODE_LABELS = 4;
/** Lines starting with `--` (MIME boundaries) at most: text and HTML with two attachments need 7. */
export const SMALL_MAX_BOUNDARY_LINES = 12;

const PUNYCODE_PREFIXES = ['xn--', 'XN--', 'Xn--', 'xN--'].map((p) => Buffer.from(p));
const ENCODED_WORD = Buffer.from('=?');
const BOUNDARY = Buffer.from('\n--');
const AT = Buffer.from('@');
const LF = Buffer.from('\n');

/** Whether `raw` is small and plain enough to be parsed on the calling thread (see above). */
export function isSmallMessage(raw: Uint8Array): boolean {
    if (raw.length > SMALL_MESSAGE_BYTES) {
        return false;
    }

    // Buffer.indexOf() searches natively: a tenth of a byte-by-byte loop's cost on 10 KB.
    const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    const headerEnd = headerSectionEnd(bytes);
    const startsWithBoundary = bytes[0] === 0x2d && bytes[1] === 0x2d ? 1 : 0;
    let punycode = 0;
    for (const prefix of PUNYCODE_PREFIXES) {
        punycode += countUpTo(bytes, prefix, bytes.length, SMALL_MAX_PUNYCODE_LABELS - punycode);
    }

    return punycode <= SMALL_MAX_PUNYCODE_LABELS &&
        countUpTo(bytes, LF, headerEnd, SMALL_MAX_HEADER_LINES) <= SMALL_MAX_HEADER_LINES &&
        countUpTo(bytes, AT, headerEnd, SMALL_MAX_HEADER_ADDRESSES) <= SMALL_MAX_HEADER_ADDRESSES &&
        countUpTo(bytes, ENCODED_WORD, bytes.length, SMALL_MAX_ENCODED_WORDS) <= SMALL_MAX_ENCODED_WORDS &&
        startsWithBoundary + countUpTo(bytes, BOUNDARY, bytes.length, SMALL_MAX_BOUNDARY_LINES) <= SMALL_MAX_BOUNDARY_LINES;
}

/** Where the top header section's empty line starts (the whole message when it has none). */
function headerSectionEnd(bytes: Buffer): number {
    if (bytes[0] === 0x0a || (bytes[0] === 0x0d && bytes[1] === 0x0a)) {
        return 0;
    }

    const lf = bytes.indexOf('\n\n');
    const crlf = bytes.indexOf('\n\r\n');
    const ends = [lf, crlf].filter((i) => i !== -1);
    // After the last header line's own line break.
    return ends.length === 0 ? bytes.length : Math.min(...ends) + 1;
}

/** Occurrences of `needle` starting before `end`, counted up to one past `limit` (then it stops looking). */
function countUpTo(bytes: Buffer, needle: Buffer, end: number, limit: number): number {
    let count = 0;
    for (let at = bytes.indexOf(needle); at !== -1 && at < end; at = bytes.indexOf(needle, at + 1)) {
        if (++count > limit) {
            break;
        }
    }

    return count;
}
