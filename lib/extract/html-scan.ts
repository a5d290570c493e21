/**
 * The pieces of a forward HTML scan that html-text.ts (text of a body) and links.ts
 * (its anchors) share: tag ends, skipped elements, character references. No recursion
 * and no DOM, so work is linear in the input whatever its shape.
 */

const ENTITY = /&(?:#([0-9]{1,7});?|#[xX]([0-9a-fA-F]{1,6});?|([A-Za-z][A-Za-z0-9]{1,31});)/g;

/** Named character references common in mail; others stay as written. */
const NAMED_ENTITIES: Record<string, string> = {
    amp: '&', lt: '<', gt: '>', quot: '"', apos: '\'', nbsp: '\u00a0', ensp: '\u2002', emsp: '\u2003',
    thinsp: '\u2009', zwnj: '\u200c', zwj: '\u200d', shy: '\u00ad', copy: '\u00a9', reg: '\u00ae',
    trade: '\u2122', hellip: '\u2026', mdash: '\u2014', ndash: '\u2013', lsquo: '\u2018', rsquo: '\u2019',
    sbquo: '\u201a', ldquo: '\u201c', rdquo: '\u201d', bdquo: '\u201e', laquo: '\u00ab', raquo: '\u00bb',
    bull: '\u2022', middot: '\u00b7', euro: '\u20ac', pound: '\u00a3', yen: '\u00a5', cent: '\u00a2',
    sect: '\u00a7', deg: '\u00b0', plusmn: '\u00b1', times: '\u00d7', divide: '\u00f7', iexcl: '\u00a1',
    iquest: '\u00bf', para: '\u00b6', larr: '\u2190', rarr: '\u2192', uarr: '\u2191', darr: '\u2193'
};

/** Elements that start a new line. */
export const LINE_BLOCKS = new Set([
    'address', 'article', 'aside', 'center', 'dd', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure',
    'footer', 'form', 'header', 'li', 'main', 'nav', 'section', 'tbody', 'tfoot', 'thead', 'tr'
]);
/** Elements that start a paragraph: a new line and an empty one. */
export const PARAGRAPH_BLOCKS = new Set(['blockquote', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'ol', 'p', 'pre', 'table', 'ul']);

/** Cells of a row: separated, not glued together. */
export const CELLS = new Set(['td', 'th']);

/** A piece of markup opened by a `<`: a declaration (comment, doctype, CDATA, processing instruction) or a tag. */
export type Markup =
    | { tag: false; end: number }
    | {
        tag: true;
        /** Lower-cased tag name. */
        name: string;
        closing: boolean;
        /** Where the attributes start (right after the name). */
        attributesStart: number;
        /** Index of the `>` that ends the tag, or the end of the document. */
        tagEnd: number;
        end: number;
    };

/** The markup opened by the `<` at `lt` and where it ends, or null when that `<` is text (as in `a < b`). */
export function readMarkup(html: string, lt: number): Markup | null {
    const next = html.charCodeAt(lt + 1);
    if (next === 0x21 /* ! */ || next === 0x3f /* ? */) {
        const comment = html.startsWith('<!--', lt);
        const close = comment ? html.indexOf('-->', lt + 4) : html.indexOf('>', lt + 2);
        return { tag: false, end: close === -1 ? html.length : close + (comment ? 3 : 1) };
    }

    const closing = next === 0x2f /* / */;
    const nameStart = closing ? lt + 2 : lt + 1;
    if (!isLetter(html.charCodeAt(nameStart))) {
        return null;
    }

    let nameEnd = nameStart;
    while (nameEnd < html.length && isNameChar(html.charCodeAt(nameEnd))) {
        nameEnd++;
    }

    const tagEnd = findTagEnd(html, nameEnd);
    return { tag: true, name: html.slice(nameStart, nameEnd).toLowerCase(), closing, attributesStart: nameEnd, tagEnd, end: tagEnd + 1 };
}

/** Index of the `>` that ends the tag whose attributes start at `from` (quotes respected), or the end. */
export function findTagEnd(html: string, from: number): number {
    let quote = 0;
    let afterEquals = false;
    for (let i = from; i < html.length; i++) {
        const c = html.charCodeAt(i);
        if (quote !== 0) {
            if (c === quote) {
                quote = 0;
                afterEquals = false;
            }
        }
        else if (c === 0x3e /* > */) {
            return i;
        }
        else if ((c === 0x22 || c === 0x27) && afterEquals) {
            // Only an attribute value opens a quote, as in browsers: a stray `"` does not hide the `>`.
            quote = c;
        }
        else if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0c) {
            afterEquals = c === 0x3d /* = */;
        }
    }

    return html.length;
}

/** Position after `</name ...>` closing a hidden element, or the end when it is never closed. */
export function skipElementContent(html: string, from: number, name: string): number {
    let pos = from;
    for (;;) {
        const close = html.indexOf('</', pos);
        if (close === -1) {
            return html.length;
        }

        const after = close + 2 + name.length;
        if (html.slice(close + 2, after).toLowerCase() === name && !isNameChar(html.charCodeAt(after))) {
            return findTagEnd(html, after) + 1;
        }

        pos = close + 2;
    }
}

/** `text` with its character references decoded as a browser would show them. */
export function decodeEntities(text: string): string {
    if (!text.includes('&')) {
        return text;
    }

    // exec() in a loop instead of a replace() callback: text can hold millions of references.
    let out = '';
    let from = 0;
    ENTITY.lastIndex = 0;
    for (let match = ENTITY.exec(text); match !== null; match = ENTITY.exec(text)) {
        out += text.slice(from, match.index) + decodeReference(match);
        from = ENTITY.lastIndex;
    }

    return from === 0 ? text : out + text.slice(from);
}

function decodeReference(match: RegExpExecArray): string {
    const [whole, decimal, hex, named] = match;
    if (named !== undefined) {
        // Own properties only: `&constructor;` must not find Object.prototype.constructor.
        const key = Object.hasOwn(NAMED_ENTITIES, named) ? named : named.toLowerCase();
        return Object.hasOwn(NAMED_ENTITIES, key) ? NAMED_ENTITIES[key] : whole;
    }

    const code = decimal !== undefined ? Number.parseInt(decimal, 10) : Number.parseInt(hex, 16);
    // As browsers do: NUL, surrogates and values beyond Unicode become U+FFFD.
    if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
        return '\ufffd';
    }

    return String.fromCodePoint(code);
}

function isLetter(c: number): boolean {
    return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

function isNameChar(c: number): boolean {
    return isLetter(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x3a || c === 0x5f;
}
