/**
 * The links of an email (docs/api.md, "Links and codes"): the anchors of its HTML body, then the bare
 * URLs of its text body, for "click the link in the mail". Computed once at ingest.
 */

import { bareUrls } from './bare-urls';
import { CELLS, decodeEntities, LINE_BLOCKS, PARAGRAPH_BLOCKS, readMarkup, skipElementContent } from './html-scan';
import type { Link } from '../types';

/** Most links kept per email, after deduplication. */
export const MAX_LINKS = 100;

/** Schemes an anchor's href must start with to count, in any case. */
const LINK_SCHEME = /^(?:https?:\/\/|mailto:)/i;

/** Elements whose content is never shown, so never part of a link's text. */
const HIDDEN_CONTENT = new Set(['script', 'style', 'template', 'title', 'xml', 'textarea']);

const WHITESPACE_RUN = /\s+/g;

/**
 * The links of an email, at most MAX_LINKS: every `<a href>` of `htmlBody` whose href
 * is http(s) or mailto, in document order, then every bare http(s) URL of `body`;
 * deduplicated by exact href, the first occurrence winning.
 */
export function extractLinks(htmlBody: string, body: string): Link[] {
    const links: Link[] = [];
    const seen = new Set<string>();
    const add = (href: string, text: string): boolean => {
        if (!seen.has(href)) {
            seen.add(href);
            links.push({ href, text });
        }

        return links.length < MAX_LINKS;
    };

    for (const anchor of anchors(htmlBody)) {
        if (!add(anchor.href, anchor.text)) {
            return links;
        }
    }

    for (const { start, end } of bareUrls(body)) {
        const url = body.slice(start, end);
        if (!add(url, url)) {
            return links;
        }
    }

    return links;
}

/** An anchor being read: its target and the raw pieces of its text, each already decoded. */
interface OpenAnchor {
    href: string;
    text: string;
}

/**
 * The anchors of `html` with an http(s) or mailto href, in document order, as a
 * browser sees them: an `<a>` ends at `</a>`, at the next `<a>` or at the end; text in
 * comments, scripts and styles is not shown; line breaks and blocks separate words.
 */
function* anchors(html: string): Generator<Link> {
    let open: OpenAnchor | null = null;
    const finish = (anchor: OpenAnchor): Link => ({ href: anchor.href, text: anchor.text.replace(WHITESPACE_RUN, ' ').trim() });

    // `pos` is where unread text starts, `search` where the next `<` is looked for:
    // a `<` that opens no markup (as in `a < b`) stays part of the text around it.
    let pos = 0;
    let search = 0;
    while (pos < html.length) {
        const lt = html.indexOf('<', search);
        if (lt === -1) {
            if (open) {
                open.text += decodeEntities(html.slice(pos));
            }

            break;
        }

        const markup = readMarkup(html, lt);
        if (markup === null) {
            search = lt + 1;
            continue;
        }

        if (open && lt > pos) {
            open.text += decodeEntities(html.slice(pos, lt));
        }

        // Comments and the like show nothing.
        pos = search = markup.end;
        if (!markup.tag) {
            continue;
        }

        const { name, closing, attributesStart, tagEnd } = markup;
        if (name === 'a') {
            // A new anchor closes the open one, as in a browser: anchors do not nest.
            if (open) {
                yield finish(open);
                open = null;
            }

            if (!closing) {
                const href = attributeValue(html, attributesStart, tagEnd, 'href');
                const target = href === null ? '' : decodeEntities(href).trim();
                open = LINK_SCHEME.test(target) ? { href: target, text: '' } : null;
            }
        }
        else if (!closing && HIDDEN_CONTENT.has(name)) {
            if (html.charCodeAt(tagEnd - 1) !== 0x2f /* self-closing */) {
                pos = search = skipElementContent(html, pos, name);
            }
        }
        else if (open && (name === 'br' || LINE_BLOCKS.has(name) || PARAGRAPH_BLOCKS.has(name) || CELLS.has(name))) {
            // Words on two lines of a button are two words, not one.
            open.text += ' ';
        }
    }

    if (open) {
        yield finish(open);
    }
}

/**
 * The raw value of the first attribute `name` (lower case) in `html[from, to)`, the
 * attributes of one tag: double-quoted, single-quoted, unquoted or empty; null when absent.
 */
function attributeValue(html: string, from: number, to: number, name: string): string | null {
    let i = from;
    while (i < to) {
        if (isSpace(html.charCodeAt(i)) || html.charCodeAt(i) === 0x2f /* / */) {
            i++;
            continue;
        }

        const nameStart = i;
        while (i < to && !isSpace(html.charCodeAt(i)) && html.charCodeAt(i) !== 0x3d /* = */ && html.charCodeAt(i) !== 0x2f) {
            i++;
        }

        // The first character of a name may be `=` (`<a =x>`), as browsers read it.
        if (i === nameStart) {
            i++;
        }

        const attribute = html.slice(nameStart, i).toLowerCase();
        while (i < to && isSpace(html.charCodeAt(i))) {
            i++;
        }

        let value = '';
        if (html.charCodeAt(i) === 0x3d /* = */ && i < to) {
            i++;
            while (i < to && isSpace(html.charCodeAt(i))) {
                i++;
            }

            const quote = html.charCodeAt(i);
            if (quote === 0x22 /* " */ || quote === 0x27 /* ' */) {
                const close = html.indexOf(String.fromCharCode(quote), i + 1);
                const valueEnd = close === -1 || close > to ? to : close;
                value = html.slice(i + 1, valueEnd);
                i = valueEnd + 1;
            }
            else {
                const valueStart = i;
                while (i < to && !isSpace(html.charCodeAt(i))) {
                    i++;
                }

                value = html.slice(valueStart, i);
            }
        }

        if (attribute === name) {
            return value;
        }
    }

    return null;
}

function isSpace(c: number): boolean {
    return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
}
