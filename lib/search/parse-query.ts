/**
 * The search language of `q` (docs/api.md, "Search"): terms separated by white space, all
 * of which must match; `"..."` quotes (with `\"` and `\\`), a leading `-` negates, and
 * `field:value` picks a field. Knows no HTTP: a malformed query throws a SearchSyntaxError
 * (INVALID_INPUT with a reason and a position) and the adapter says how it answers.
 */

import { echoed, SearchSyntaxError } from './search-syntax-error';
import { parseInstant } from '../util/instant';
import { MAX_QUERY_CHARS, MAX_QUERY_TERMS } from './search-query';
import type { HasWhat, SearchTerm } from '../types';

/** The fields a term may name; any other `name:` is part of a plain term's text (a URL, a time). */
const FIELDS = ['from', 'to', 'subject', 'body', 'filename', 'tag', 'has', 'is', 'before', 'after', 'larger', 'smaller'] as const;
type FieldName = typeof FIELDS[number];

const HAS: readonly HasWhat[] = ['attachment', 'link', 'code'];
/** `is:` values: whether the email was opened. */
const IS = ['read', 'unread'] as const;

/** `larger:`/`smaller:` values: digits, then an optional K (KiB) or M (MiB). At most 15 digits keeps every value a safe integer. */
const SIZE = /^(\d{1,15})([km]?)$/i;
const SIZE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 * 1024 };

const WHITE_SPACE = /\s/;
/** A character a term can be searched by: anything but controls (NUL, which stores drop, among them), format characters and white space. */
const VISIBLE = /[^\p{Cc}\p{Cf}\s]/u;
const FIELD_NAME = /^[a-z]+$/i;

/** One term as written: its sign, the field it names (if a known one), and its value with quotes resolved. */
interface RawTerm {
    /** UTF-16 index of its first character (the `-` of a negated one). */
    start: number;
    negated: boolean;
    field: FieldName | undefined;
    value: string;
}

/**
 * The terms of a search; throws SearchSyntaxError (INVALID_INPUT) when it is malformed: over
 * MAX_QUERY_CHARS characters or MAX_QUERY_TERMS terms, an unclosed quote, an empty
 * `field:` or `""`, a `has:` or `is:`, date or size it cannot read, a query with no term at all (empty,
 * or white space alone) or a term of only control or invisible characters, which would match every email.
 */
export function parseSearchQuery(q: string): SearchTerm[] {
    // Code points, not UTF-16 units: an emoji is one character to whoever typed it.
    // A string of more UTF-16 units than twice the limit has more code points than the limit.
    if (q.length > MAX_QUERY_CHARS && (q.length > 2 * MAX_QUERY_CHARS || Array.from(q).length > MAX_QUERY_CHARS)) {
        throw new SearchSyntaxError(`longer than ${MAX_QUERY_CHARS} characters`, MAX_QUERY_CHARS + 1);
    }

    const terms = readTerms(q);
    // Present but with nothing to search for would match every email: a DELETE would empty the inbox.
    if (terms.length === 0) {
        throw new SearchSyntaxError('has no term to search for (only white space, or nothing)', 1);
    }

    return terms.map((term) => toTerm(term, characterAt(q, term.start)));
}

function readTerms(q: string): RawTerm[] {
    const terms: RawTerm[] = [];
    let i = 0;
    for (;;) {
        while (i < q.length && WHITE_SPACE.test(q[i])) {
            i++;
        }

        if (i >= q.length) {
            return terms;
        }

        if (terms.length === MAX_QUERY_TERMS) {
            throw new SearchSyntaxError(`more than ${MAX_QUERY_TERMS} terms (the next starts at character ${characterAt(q, i)})`, characterAt(q, i));
        }

        const start = i;
        // A `-` alone is the text "-", not a sign.
        const negated = q[i] === '-' && i + 1 < q.length && !WHITE_SPACE.test(q[i + 1]);
        if (negated) {
            i++;
        }

        // A field is named only outside quotes: `"from:x"` is the text `from:x`.
        let field: FieldName | undefined;
        const colon = q.indexOf(':', i);
        if (colon > i) {
            const name = q.slice(i, colon);
            const known = FIELD_NAME.test(name) ? FIELDS.find((f) => f === name.toLowerCase()) : undefined;
            if (known) {
                field = known;
                i = colon + 1;
            }
        }

        const read = readValue(q, i);
        i = read.end;
        terms.push({ start, negated, field, value: read.value });
    }
}

/** The value starting at `from` up to white space outside quotes, quotes resolved. */
function readValue(q: string, from: number): { value: string; end: number } {
    let value = '';
    let i = from;
    while (i < q.length && !WHITE_SPACE.test(q[i])) {
        if (q[i] !== '"') {
            value += q[i++];
            continue;
        }

        // A quoted section: white space kept, `\"` and `\\` are the characters; any other `\` is itself.
        const opened = i;
        i++;
        for (;;) {
            if (i >= q.length) {
                const at = characterAt(q, opened);
                throw new SearchSyntaxError(`unclosed quote at character ${at}`, at);
            }

            const c = q[i];
            if (c === '"') {
                i++;
                break;
            }

            if (c === '\\' && (q[i + 1] === '"' || q[i + 1] === '\\')) {
                value += q[i + 1];
                i += 2;
                continue;
            }

            value += c;
            i++;
        }
    }

    return { value, end: i };
}

function toTerm({ negated, field, value }: RawTerm, position: number): SearchTerm {
    if (value.length === 0) {
        throw new SearchSyntaxError(field ? `${field}: needs a value` : `empty phrase "" at character ${position}`, position);
    }

    if (!VISIBLE.test(value)) {
        throw new SearchSyntaxError(`the term at character ${position} has nothing to search for (only control or invisible characters)`, position);
    }

    switch (field) {
        case undefined:
            return { negated, field: 'text', text: value };
        case 'from':
        case 'to':
        case 'subject':
        case 'body':
        case 'filename':
            return { negated, field, text: value };
        case 'tag':
            return { negated, field, tag: value.toLowerCase() };
        case 'has': {
            const has = HAS.find((h) => h === value.toLowerCase());
            if (!has) {
                throw new SearchSyntaxError(`has:${echoed(value)} is not a known has: value (${HAS.join(', ')})`, position);
            }

            return { negated, field, has };
        }

        case 'is': {
            const is = IS.find((i) => i === value.toLowerCase());
            if (!is) {
                throw new SearchSyntaxError(`is:${echoed(value)} is not a known is: value (${IS.join(', ')})`, position);
            }

            return { negated, field, seen: is === 'read' };
        }

        case 'before':
        case 'after': {
            const at = parseInstant(value);
            if (at === null) {
                throw new SearchSyntaxError(`${field}:${echoed(value)} is not a date (Unix ms or ISO 8601)`, position);
            }

            return { negated, field, at };
        }

        case 'larger':
        case 'smaller': {
            const match = SIZE.exec(value);
            if (!match) {
                throw new SearchSyntaxError(`${field}:${echoed(value)} is not a size (bytes, or a number with K or M)`, position);
            }

            return { negated, field, bytes: Number(match[1]) * SIZE_UNITS[match[2].toLowerCase()] };
        }
    }
}

/** The 1-based character (code point, as whoever typed it counts) at UTF-16 index `index`. */
function characterAt(q: string, index: number): number {
    return Array.from(q.slice(0, index)).length + 1;
}
