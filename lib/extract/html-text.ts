/**
 * Plain text derived from an HTML body, for messages that carry no text/plain part.
 *
 * Why not html-to-text (mailparser's converter): it walks the DOM recursively
 * and overflows the stack on HTML nested a few thousand elements deep, and it
 * builds a DOM of the whole document first. This is one forward scan with no
 * recursion and no DOM: work and memory are linear in the input whatever its
 * shape, so hostile HTML can cost time in proportion to its size but never a crash.
 * It keeps what a reader of the text needs: words, line structure, link targets.
 */

import { CELLS, decodeEntities, LINE_BLOCKS, PARAGRAPH_BLOCKS, readMarkup, skipElementContent } from './html-scan';

/** Longest attribute text searched for `href`, UTF-16 units: real links fit, hostile tags cost nothing. */
const MAX_ATTRIBUTES_LENGTH = 16 * 1024;

// Elements whose content is never shown as text.
const HIDDEN_CONTENT = new Set(['head', 'script', 'style', 'template', 'title', 'xml']);

const WHITESPACE_RUN = /[\t\n\f\r ]+/g;
const LINE_BREAKS = /\r\n?/g;
const HREF = /(?:^|[\s"'/])href\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i;

/** Collects text, collapsing whitespace and turning block boundaries into line breaks. */
class TextBuilder {
    // One growing string: V8 appends by building a rope, far cheaper than an array of millions of pieces.
    value = '';
    /** Text written since `capture()`, or null: the text of the open link (`value` is never read back mid-way, that would flatten it). */
    captured: string | null = null;
    private pendingNewlines = 0;
    private pendingSpace = false;

    /** Adds text as the browser would show it: whitespace runs collapsed, unless inside `<pre>`. */
    text(raw: string, preformatted: boolean): void {
        if (preformatted) {
            this.push(decodeEntities(raw.replace(LINE_BREAKS, '\n')));
            return;
        }

        const collapsed = raw.replace(WHITESPACE_RUN, ' ');
        const startsWithSpace = collapsed.charCodeAt(0) === 0x20;
        const endsWithSpace = collapsed.length > 1 && collapsed.charCodeAt(collapsed.length - 1) === 0x20;
        if (startsWithSpace) {
            this.pendingSpace = true;
        }

        const words = collapsed.slice(startsWithSpace ? 1 : 0, endsWithSpace ? -1 : undefined);
        if (words.length > 0) {
            this.push(decodeEntities(words));
        }

        if (endsWithSpace) {
            this.pendingSpace = true;
        }
    }

    /** Ends the current line; `2` also leaves an empty line. */
    block(newlines: 1 | 2): void {
        this.pendingNewlines = Math.max(this.pendingNewlines, newlines);
        this.pendingSpace = false;
    }

    /** A `<br>`: always one more line break, even right after another. */
    lineBreak(): void {
        this.pendingNewlines++;
        this.pendingSpace = false;
    }

    /** A separator between table cells. */
    space(): void {
        this.pendingSpace = true;
    }

    /** Starts recording the text written from now on into `captured`. */
    capture(): void {
        this.captured = '';
    }

    /** Writes text as is, after the separator pending before it. */
    push(text: string): void {
        // Separators only ever go between pieces of text: none leads, none trails.
        if (this.value.length > 0) {
            if (this.pendingNewlines > 0) {
                this.value += '\n'.repeat(this.pendingNewlines);
            }
            else if (this.pendingSpace) {
                this.value += ' ';
            }
        }

        this.pendingNewlines = 0;
        this.pendingSpace = false;
        this.value += text;
        if (this.captured !== null) {
            this.captured += text;
        }
    }
}

/** Plain text of an HTML document: visible text, line structure kept, links as `text [url]`. */
export function htmlToPlainText(html: string): string {
    const out = new TextBuilder();
    const length = html.length;
    let pos = 0;
    let preDepth = 0;
    let link: string | null = null;

    // `pos` is where unwritten text starts, `search` where the next `<` is looked for:
    // a `<` that opens no markup (as in `a < b`) stays part of the text around it.
    let search = 0;
    while (pos < length) {
        const lt = html.indexOf('<', search);
        if (lt === -1) {
            out.text(html.slice(pos), preDepth > 0);
            break;
        }

        const markup = readMarkup(html, lt);
        if (markup === null) {
            search = lt + 1;
            continue;
        }

        if (lt > pos) {
            out.text(html.slice(pos, lt), preDepth > 0);
        }

        // Comment, doctype, CDATA, processing instruction: markup, not text.
        pos = search = markup.end;
        if (!markup.tag) {
            continue;
        }

        const { name, closing, attributesStart, tagEnd } = markup;
        if (closing) {
            if (name === 'a' && link !== null) {
                const text = (out.captured ?? '').trim();
                out.captured = null;
                if (link !== text && link !== `mailto:${text}`) {
                    out.space();
                    out.push(`[${link}]`);
                }

                link = null;
            }
            else if (name === 'pre' && preDepth > 0) {
                preDepth--;
            }
        }
        else if (HIDDEN_CONTENT.has(name)) {
            if (html.charCodeAt(tagEnd - 1) !== 0x2f /* self-closing */) {
                pos = search = skipElementContent(html, pos, name);
            }

            continue;
        }
        else if (name === 'br') {
            out.lineBreak();
            continue;
        }
        else if (name === 'a') {
            link = linkTarget(html.slice(attributesStart, Math.min(tagEnd, attributesStart + MAX_ATTRIBUTES_LENGTH)));
            if (link !== null) {
                out.capture();
            }
            else {
                out.captured = null;
            }
        }
        else if (name === 'pre') {
            preDepth++;
        }

        if (PARAGRAPH_BLOCKS.has(name)) {
            out.block(2);
        }
        else if (LINE_BLOCKS.has(name)) {
            out.block(1);
        }
        else if (CELLS.has(name)) {
            out.space();
        }
    }

    return out.value;
}

/** The http(s) target of a link, entities decoded; null for anchors, scripts and the like. */
function linkTarget(attributes: string): string | null {
    const match = HREF.exec(attributes);
    if (!match) {
        return null;
    }

    const href = decodeEntities(match[1] ?? match[2] ?? match[3] ?? '').trim();
    return /^(?:https?:|mailto:)/i.test(href) ? href : null;
}

/**
 * htmlToPlainText(), or `''` when there is no HTML or the converter fails (it has no
 * recursion, but a string it builds can still exceed V8's limits): the message is stored
 * anyway, without that text.
 */
export function htmlTextOrNothing(html: string): string {
    if (html.length === 0) {
        return '';
    }

    try {
        return htmlToPlainText(html);
    }
    catch {
        return '';
    }
}
