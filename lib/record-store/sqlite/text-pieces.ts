/** Splitting a long text for writing it in pieces. */

/**
 * Characters of `body` or `html_body` bound in one SQLite parameter; a longer text is
 * inserted empty and appended piece by piece. node-sqlite3 copies a bound string to
 * UTF-8 on the main thread in one step (and the batch's rows travel as one JSON
 * string): for a 23 MiB body that held the event loop for over 100 ms.
 * Measured: bench/README.md, "the seven attacks".
 */
export const TEXT_PIECE_CHARS = 4 * 1024 * 1024;

/** `text` in pieces of at most `size` characters, never splitting a surrogate pair. */
export function textPieces(text: string, size = TEXT_PIECE_CHARS): string[] {
    const pieces: string[] = [];
    let from = 0;
    while (from < text.length) {
        let to = Math.min(from + size, text.length);
        // A high surrogate at the cut would leave both halves unpaired (and bound as U+FFFD).
        if (to < text.length && to - from > 1 && isHighSurrogate(text.charCodeAt(to - 1))) {
            to -= 1;
        }

        pieces.push(text.slice(from, to));
        from = to;
    }

    return pieces;
}

function isHighSurrogate(code: number): boolean {
    return code >= 0xd800 && code <= 0xdbff;
}
