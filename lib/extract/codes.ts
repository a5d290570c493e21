/**
 * Candidate one-time codes of an email (docs/api.md, "Links and codes"), for "read the code from the
 * mail": runs of 4 to 8 digits standing alone, not parts of dates, times, decimals,
 * phone or version numbers, years, URLs or e-mail addresses. Computed once at ingest.
 */

import { bareUrls } from './bare-urls';

/** Most codes kept per email. */
export const MAX_CODES = 10;

const DIGIT_RUN = /[0-9]+/g;
const LETTER = /\p{L}/u;
const DIGIT = /\p{Nd}/u;
/** Separators that make a digit run part of a longer number when a digit is on their other side. */
const NUMBER_SEPARATORS = new Set(['.', ',', ':', '/', '-']);
/** Characters of an e-mail address's local part and domain, as the blanking recognises them. */
const LOCAL_PART = /[A-Za-z0-9._%+-]/;
const DOMAIN = /[A-Za-z0-9.-]/;

/**
 * The distinct codes of the subject, then of the body, in order of first appearance,
 * at most MAX_CODES. Each text is searched on its own, after its URLs and e-mail
 * addresses are blanked out.
 */
export function extractCodes(subject: string, body: string): string[] {
    const codes: string[] = [];
    for (const text of [subject, body]) {
        for (const code of codesOf(blankAddresses(blankUrls(text)))) {
            if (!codes.includes(code)) {
                codes.push(code);
                if (codes.length === MAX_CODES) {
                    return codes;
                }
            }
        }
    }

    return codes;
}

/** The codes of one text, in order, repeats included. */
function* codesOf(text: string): Generator<string> {
    const runs = new RegExp(DIGIT_RUN.source, DIGIT_RUN.flags);
    for (let match = runs.exec(text); match !== null; match = runs.exec(text)) {
        const run = match[0];
        const start = match.index;
        const end = start + run.length;
        if (run.length < 4 || run.length > 8) {
            continue;
        }

        const before = charBefore(text, start);
        const after = charAt(text, end);
        if (LETTER.test(before) || DIGIT.test(before) || before === '+' || LETTER.test(after) || DIGIT.test(after)) {
            continue;
        }

        // `12.3456`, `10:3045`, `555-1234`: the run continues a number before it...
        if (NUMBER_SEPARATORS.has(before) && DIGIT.test(charBefore(text, start - 1))) {
            continue;
        }

        // ...or `2024-01`, `1234.56`: a number goes on after it.
        if (NUMBER_SEPARATORS.has(after) && DIGIT.test(charAt(text, end + 1))) {
            continue;
        }

        if (run.length === 4 && Number(run) >= 1900 && Number(run) <= 2099) {
            continue;
        }

        yield run;
    }
}

/** `text` with each bare URL replaced by one space: its digits are no code, and the digits around it stay apart. */
function blankUrls(text: string): string {
    let out = '';
    let from = 0;
    for (const { start, end } of bareUrls(text)) {
        out += `${text.slice(from, start)} `;
        from = end;
    }

    return from === 0 ? text : out + text.slice(from);
}

/** `text` with each e-mail address (`local@domain`) replaced by one space. */
function blankAddresses(text: string): string {
    let out = '';
    let from = 0;
    for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
        let start = at;
        while (start > from && LOCAL_PART.test(text[start - 1])) {
            start--;
        }

        let end = at + 1;
        while (end < text.length && DOMAIN.test(text[end])) {
            end++;
        }

        if (start < at && end > at + 1) {
            out += `${text.slice(from, start)} `;
            from = end;
            at = end - 1;
        }
    }

    return from === 0 ? text : out + text.slice(from);
}

/** The character (a whole code point) that ends just before `index`, or '' at the start. */
function charBefore(text: string, index: number): string {
    if (index <= 0) {
        return '';
    }

    const low = text.charCodeAt(index - 1);
    const pair = low >= 0xdc00 && low <= 0xdfff && index >= 2;
    return text.slice(pair ? index - 2 : index - 1, index);
}

/** The character (a whole code point) that starts at `index`, or '' past the end. */
function charAt(text: string, index: number): string {
    const point = text.codePointAt(index);
    return point === undefined ? '' : String.fromCodePoint(point);
}
