/**
 * Bare `http://` / `https://` URLs in plain text (docs/api.md, "Links and codes"): the links of a text
 * body, and the spans the code search blanks out. One forward scan, linear in the text.
 */

/** Where a URL starts: the scheme, in any case. */
const SCHEME = /https?:\/\//gi;
/** What ends a URL. */
const URL_END = /[\s<>"]/g;
/** Punctuation that closes a sentence or a bracket rather than the URL. */
const TRAILING = new Set(['.', ',', ';', ':', '!', '?', ')', ']', '\'']);

/** One URL found in a text: `text.slice(start, end)`. */
export interface UrlSpan {
    start: number;
    end: number;
}

/** Every bare http(s) URL of `text`, in order: each ends at whitespace, `<`, `>` or `"`, minus trailing punctuation. */
export function* bareUrls(text: string): Generator<UrlSpan> {
    // Fresh regexes per call: a generator may be left mid-way and another call started.
    const scheme = new RegExp(SCHEME.source, SCHEME.flags);
    const urlEnd = new RegExp(URL_END.source, URL_END.flags);
    for (let match = scheme.exec(text); match !== null; match = scheme.exec(text)) {
        const start = match.index;
        const afterScheme = start + match[0].length;
        urlEnd.lastIndex = afterScheme;
        const stop = urlEnd.exec(text);
        let end = stop === null ? text.length : stop.index;
        while (end > afterScheme && TRAILING.has(text[end - 1])) {
            end--;
        }

        // The next scheme is looked for after this URL: a URL inside a URL is part of it.
        scheme.lastIndex = stop === null ? text.length : stop.index;
        if (end > afterScheme) {
            yield { start, end };
        }
    }
}
