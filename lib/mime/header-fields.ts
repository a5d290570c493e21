/**
 * The header fields of a message as a client shows them (docs/api.md, "Header fields"): every field
 * of the top-level header section, in order, duplicates kept, values unfolded and
 * RFC 2047-decoded. Works on the header section alone (readHeaderSection()), so the
 * body and the MIME parts' own headers are never looked at.
 */

import libmime from 'libmime';

/** One header field: its name as written and its value as a reader sees it. */
export interface HeaderField {
    name: string;
    value: string;
}

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const COLON = 0x3a;
// A decoded word can hold a line break (`=?utf-8?Q?a=0D=0Ab?=`); a value shown on one
// line must not, as for the email's `subject`.
const LINE_BREAK = /\r\n|[\r\n]/g;
const TRAILING_BLANKS = /[ \t]+$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The fields of a header section (the bytes before the first empty line; anything
 * after an empty line is ignored). CRLF and bare LF line ends are both accepted. A
 * line that starts with white space continues the field before it; a line that is
 * neither (no colon, or before any field) is skipped, as mail readers do.
 */
export function parseHeaderFields(section: Buffer): HeaderField[] {
    const fields: HeaderField[] = [];
    let current: Buffer[] | null = null;
    const flush = () => {
        if (current) {
            const field = toField(current.length === 1 ? current[0] : Buffer.concat(current));
            if (field) {
                fields.push(field);
            }
        }

        current = null;
    };

    let start = 0;
    while (start < section.length) {
        const lf = section.indexOf(LF, start);
        const end = lf === -1 ? section.length : lf;
        const line = section.subarray(start, end > start && section[end - 1] === CR ? end - 1 : end);
        start = end + 1;
        if (line.length === 0) {
            break;
        }

        const first = line[0];
        if (first === SPACE || first === TAB) {
            // Unfolding: the line break goes, the white space that follows it stays.
            (current as Buffer[] | null)?.push(line);
            continue;
        }

        flush();
        current = [line];
    }

    flush();
    return fields;
}

/**
 * One unfolded field line → name and value, or null when it is not a field: no colon,
 * or white space inside the name (an mbox `From ` line). White space between name
 * and colon (RFC 5322's obsolete syntax) is dropped.
 */
function toField(line: Buffer): HeaderField | null {
    const colon = line.indexOf(COLON);
    if (colon <= 0) {
        return null;
    }

    const name = text(line.subarray(0, colon)).replace(TRAILING_BLANKS, '');
    if (name.length === 0 || /\s/.test(name)) {
        return null;
    }

    return { name, value: decodeValue(text(line.subarray(colon + 1))) };
}

/** Raw header bytes as text: UTF-8 (RFC 6532) when they are valid UTF-8, else Latin-1, the usual 8-bit legacy. */
function text(bytes: Buffer): string {
    try {
        return strictUtf8.decode(bytes);
    }
    catch {
        return bytes.toString('latin1');
    }
}

function decodeValue(raw: string): string {
    let decoded: string;
    try {
        decoded = raw.includes('=?') ? libmime.decodeWords(raw) : raw;
    }
    catch {
        // A word libmime cannot decode leaves the value as written.
        decoded = raw;
    }

    return decoded.replace(LINE_BREAK, ' ').trim();
}
