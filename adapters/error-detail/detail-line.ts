// The words of an error answer (docs/api.md, "Errors"): one line a person or an agent can
// read, the same over HTTP, MCP, the client, the CLI and the web interface.

/** The response header that says what is wrong with a refused request (never on a 401 or a 5xx). */
export const ERROR_DETAIL_HEADER = 'Inbox-Capture-Error-Detail';

/** Longest detail, characters: one line of a log or a terminal, and far below any header limit. */
export const MAX_DETAIL_CHARS = 300;

/** Longest piece of the request repeated in a detail, characters after escaping. */
const MAX_QUOTED_CHARS = 80;

const CUT = '...';

// One UTF-16 unit outside printable ASCII as an escape: `\xNN` below 0x100, else `\uNNNN`.
function escapeUnit(unit: number): string {
    return unit < 0x100 ? `\\x${unit.toString(16).padStart(2, '0')}` : `\\u${unit.toString(16).padStart(4, '0')}`;
}

function printable(text: string, escapeQuotes: boolean): string {
    let out = '';
    for (let i = 0; i < text.length; i++) {
        const unit = text.charCodeAt(i);
        const c = text[i];
        if (escapeQuotes && (c === '"' || c === '\\')) {
            out += `\\${c}`;
        }
        else {
            out += unit >= 0x20 && unit <= 0x7e ? c : escapeUnit(unit);
        }
    }

    return out;
}

/**
 * `text` as a detail line: every byte outside printable ASCII escaped (no CR, LF or
 * non-ASCII can reach a header), at most MAX_DETAIL_CHARS characters, `...` marking a cut.
 */
export function detailLine(text: string): string {
    const line = printable(text, false);
    if (line.length <= MAX_DETAIL_CHARS) {
        return line;
    }

    // Never leave half of an escape at the cut.
    let end = MAX_DETAIL_CHARS - CUT.length;
    const tail = line.slice(Math.max(0, end - 5), end);
    const partial = /\\(?:x[0-9a-f]?|u[0-9a-f]{0,3})?$/.exec(tail);
    if (partial) {
        end -= partial[0].length;
    }

    return `${line.slice(0, end)}${CUT}`;
}

/** A value of the request repeated in a detail: in double quotes, `"` `\` and anything unprintable escaped, cut. */
export function quoted(value: unknown): string {
    const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
    let out = '';
    // Escapes whole or not at all: a cut never leaves half of one.
    for (const c of text) {
        const piece = printable(c, true);
        if (out.length + piece.length > MAX_QUOTED_CHARS) {
            return `"${out}${CUT}"`;
        }

        out += piece;
    }

    return `"${out}"`;
}
