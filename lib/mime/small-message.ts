/**
 * Which messages are parsed on the calling thread instead of a parse worker: those whose
 * bytes prove the parse cheap (docs/operations.md, "The parse worker"). A worker's round
 * trip costs several times what the parse of a 1 KB message does, but a parse on the event
 * loop cannot be abandoned at the deadline, so only a message small and plain in every shape
 * that made parses slow takes it: few header lines and addresses, few encoded words and
 * `xn--` labels, few MIME boundaries (parts and nesting). Everything else goes to a worker.
 * One pass over the bytes, no regular expression. Limits measured: bench/README.md,
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

const LF = 0x0a;
const CR = 0x0d;
const DASH = 0x2d;
const AT = 0x40;
const EQUALS = 0x3d;
const QUESTION = 0x3f;

/** Whether `raw` is small and plain enough to be parsed on the calling thread (see above). */
export function isSmallMessage(raw: Uint8Array): boolean {
    if (raw.length > SMALL_MESSAGE_BYTES) {
        return false;
    }

    let inHeader = true;
    let headerLines = 0;
    let addresses = 0;
    let encodedWords = 0;
    let punycode = 0;
    let boundaries = 0;
    let lineStart = true;
    for (let i = 0; i < raw.length; i++) {
        const c = raw[i];
        if (lineStart) {
            if (inHeader && (c === LF || (c === CR && raw[i + 1] === LF))) {
                // The empty line: the top header section ends here.
                inHeader = false;
            }
            else if (c === DASH && raw[i + 1] === DASH) {
                boundaries++;
            }
        }

        if (c === LF) {
            lineStart = true;
            headerLines += inHeader ? 1 : 0;
            continue;
        }

        lineStart = false;
        if (c === AT) {
            addresses += inHeader ? 1 : 0;
        }
        else if (c === EQUALS && raw[i + 1] === QUESTION) {
            encodedWords++;
        }
        else if ((c === 0x78 || c === 0x58) && isPunycodePrefix(raw, i)) {
            punycode++;
        }
    }

    return headerLines <= SMALL_MAX_HEADER_LINES && addresses <= SMALL_MAX_HEADER_ADDRESSES && encodedWords <= SMALL_MAX_ENCODED_WORDS &&
        punycode <= SMALL_MAX_PUNYCODE_LABELS && boundaries <= SMALL_MAX_BOUNDARY_LINES;
}

/** `xn--` (either case) at `i`. */
function isPunycodePrefix(raw: Uint8Array, i: number): boolean {
    return (raw[i + 1] === 0x6e || raw[i + 1] === 0x4e) && raw[i + 2] === DASH && raw[i + 3] === DASH;
}
