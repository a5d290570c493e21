/**
 * The parts of a one-level multipart body, cut where mailsplit's splitter cuts them
 * (the splitter mailparser reads every message with), for the synchronous parse of
 * plain-parse.ts. A line is a delimiter by the splitter's own test (delimiterKind(),
 * which follows its checkBoundary()); a part's header block ends at its first empty
 * line; the line ending before a delimiter belongs to the delimiter; the preamble and
 * the epilogue are not content. Any shape where the splitter does something less plain
 * gives undefined, and the message goes to mailparser: a closing delimiter before the
 * first part, a delimiter inside a part's header block, no closing delimiter, a part
 * whose whole body is one line ending (the splitter then reports that line ending as
 * the body or not, depending on which delimiter follows), more than MAX_PARTS parts.
 */

/** One part as the splitter cuts it: its header block (with the empty line) and its body. */
export interface PartBytes {
    header: Buffer;
    body: Buffer;
}

/** Parts of a body taken at most (the splitter's own limit is 1000 nodes, an error past it). */
export const MAX_PARTS = 8;

/** Not a delimiter line, one that opens the next part, the closing one. */
const NOT_DELIMITER = 0;
const NEXT_PART = 1;
const CLOSING = 2;

const LF = 0x0a;
const CR = 0x0d;
const DASH = 0x2d;

/** The parts of the body of `raw` from `from` on, delimited by `boundary`; undefined when not plain (above). */
export function multipartParts(raw: Buffer, from: number, boundary: Buffer): PartBytes[] | undefined {
    const parts: PartBytes[] = [];
    let state: 'preamble' | 'header' | 'body' = 'preamble';
    let partStart = 0;
    let bodyStart = 0;
    for (let start = from; start < raw.length;) {
        const lf = raw.indexOf(LF, start);
        const end = lf === -1 ? raw.length : lf + 1;
        const kind = delimiterKind(raw, start, end, boundary);
        if (state === 'preamble') {
            if (kind === CLOSING) {
                return undefined;
            }

            if (kind === NEXT_PART) {
                state = 'header';
                partStart = end;
            }
        }
        else if (state === 'header') {
            if (kind !== NOT_DELIMITER) {
                return undefined;
            }

            if ((end - start === 1 && raw[start] === LF) || (end - start === 2 && raw[start] === CR && raw[start + 1] === LF)) {
                state = 'body';
                bodyStart = end;
            }
        }
        else if (kind !== NOT_DELIMITER) {
            const bodyEnd = withoutLineEnd(raw, bodyStart, start);
            if ((bodyEnd === bodyStart && start > bodyStart) || parts.length === MAX_PARTS) {
                return undefined;
            }

            parts.push({ header: raw.subarray(partStart, bodyStart), body: raw.subarray(bodyStart, bodyEnd) });
            if (kind === CLOSING) {
                return parts;
            }

            state = 'header';
            partStart = end;
        }

        start = end;
    }

    return undefined;
}

/** `end` moved back over one LF or CRLF (not before `start`): the line ending a delimiter owns. */
function withoutLineEnd(raw: Buffer, start: number, end: number): number {
    if (end > start && raw[end - 1] === LF) {
        end--;
        if (end > start && raw[end - 1] === CR) {
            end--;
        }
    }

    return end;
}

/**
 * Whether the line `raw[start, end)` (its line break included) is a delimiter of
 * `boundary`: the splitter's checkBoundary() and compareBoundary(), byte for byte. A
 * CR or CRLF may come before the dashes; after the boundary only `--` and a line break.
 */
function delimiterKind(raw: Buffer, start: number, end: number, boundary: Buffer): number {
    const length = end - start;
    let skip = 0;
    if (length >= 1 && (raw[start] === CR || raw[start] === LF)) {
        skip++;
        if (length >= 2 && raw[start] === CR && raw[start + 1] === LF) {
            skip++;
        }
    }

    if (length < 4 || raw[start + skip] !== DASH || raw[start + skip + 1] !== DASH) {
        return NOT_DELIMITER;
    }

    // The splitter also refuses a line longer than boundary + 6: one that long cannot get past the checks below.
    if (length < boundary.length + 3 + skip) {
        return NOT_DELIMITER;
    }

    for (let i = 0; i < boundary.length; i++) {
        if (raw[start + skip + 2 + i] !== boundary[i]) {
            return NOT_DELIMITER;
        }
    }

    let pos = 0;
    for (let i = boundary.length + 2 + skip; i < length; i++) {
        const c = raw[start + i];
        if (pos === 0 && (c === CR || c === LF)) {
            return NEXT_PART;
        }

        if ((pos === 0 || pos === 1) && c !== DASH) {
            return NOT_DELIMITER;
        }

        if ((pos === 2 && c !== CR && c !== LF) || (pos === 3 && c !== LF)) {
            return NOT_DELIMITER;
        }

        pos++;
    }

    return CLOSING;
}
