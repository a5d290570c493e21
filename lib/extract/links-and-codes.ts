/**
 * `links` and `codes` of an email, worked out from its subject and bodies: once, at
 * ingest (by the parse pool, with the parse), and for emails stored before
 * they existed by the back-fill of migrate(). Stores keep what they are given
 * (docs/design.md, "The email object").
 */

import { extractCodes, MAX_CODES } from './codes';
import { extractLinks, MAX_LINKS } from './links';
import type { Link } from '../types';

/** The two fields, as an email record holds them. */
export interface LinksAndCodes {
    links: Link[];
    codes: string[];
}

/** The text fields of an email the search reads. */
export interface EmailText {
    subject: string;
    body: string;
    htmlBody: string;
}

/**
 * The links and codes of an email with this subject and these bodies: the one function
 * that decides them (links of the HTML, then of the text body; codes of the subject, then
 * of the body). linksAndCodesInSlices() gives the same answer without holding the event loop.
 */
export function linksAndCodesOf(fields: EmailText): LinksAndCodes {
    return { links: extractLinks(fields.htmlBody, fields.body), codes: extractCodes(fields.subject, fields.body) };
}

/**
 * Characters of a text body searched in one step by linksAndCodesInSlices(): the search of
 * a 23 MiB body in one go held the event loop for hundreds of ms.
 */
export const SEARCH_SLICE_CHARS = 1024 * 1024;

/**
 * linksAndCodesOf(), the same answer, with a long body searched slice by slice, the event
 * loop free between slices. A slice ends after a line break, which the next one starts
 * with: no URL, address or digit run crosses a line break, and every character keeps the
 * neighbours the search looks at (one or two on each side).
 */
export async function linksAndCodesInSlices(fields: EmailText): Promise<LinksAndCodes> {
    if (fields.body.length <= SEARCH_SLICE_CHARS) {
        return linksAndCodesOf(fields);
    }

    const links = extractLinks(fields.htmlBody, '');
    const codes = extractCodes(fields.subject, '');
    const hrefs = new Set(links.map((l) => l.href));
    for (let from = 0; from < fields.body.length && (links.length < MAX_LINKS || codes.length < MAX_CODES);) {
        await new Promise((resolve) => setImmediate(resolve));
        const lineEnd = fields.body.indexOf('\n', from + SEARCH_SLICE_CHARS);
        const to = lineEnd === -1 ? fields.body.length : lineEnd + 1;
        const slice = fields.body.slice(from, to);
        // Each slice's own first MAX_LINKS (MAX_CODES) distinct hold every new one the cap still has room for.
        for (const link of links.length < MAX_LINKS ? extractLinks('', slice) : []) {
            if (links.length < MAX_LINKS && !hrefs.has(link.href)) {
                hrefs.add(link.href);
                links.push(link);
            }
        }

        for (const code of codes.length < MAX_CODES ? extractCodes('', slice) : []) {
            if (codes.length < MAX_CODES && !codes.includes(code)) {
                codes.push(code);
            }
        }

        from = to === fields.body.length ? to : to - 1;
    }

    return { links, codes };
}
