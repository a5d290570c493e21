/**
 * The search language of `q` (docs/api.md, "Search"): terms separated by white space, all
 * of which must match; `"..."` quotes (with `\"` and `\\`), a leading `-` negates, and
 * `field:value` picks a field. Knows no HTTP: a malformed query throws INVALID_INPUT and
 * the adapter says how it answers.
 */

import { InboxCaptureError } from '../errors';
import { parseInstant } from '../util/instant';
import { MAX_QUERY_CHARS, MAX_QUERY_TERMS, type HasWhat, type SearchTerm } from './search-query';

/** The fields a term may name; any other `name:` is part of a plain term's text (a URL, a time). */
const FIELDS = ['from', 'to', 'subject', 'body', 'filename', 'tag', 'has', 'before', 'after', 'larger', 'smaller'] as const;
type FieldName = typeof FIELDS[number];

const HAS: readonly HasWhat[] = ['attachment', 'link', 'code'];

/** `larger:`/`smaller:` values: digits, then an optional K (KiB) or M (MiB). At most 15 digits keeps every value a safe integer. */
const SIZE = /^(\d{1,15})([km]?)$/i;
const SIZE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 * 1024 };

const WHITE_SPACE = /\s/;
const FIELD_NAME = /^[a-z]+$/i;

/** One term as written: its sign, the field it names (if a known one), and its value with quotes resolved. */
interface RawTerm {
    negated: boolean;
    field: FieldName | undefined;
    value: string;
}

/**
 * The terms of a search; throws InboxCaptureError INVALID_INPUT when it is malformed: over
 * MAX_QUERY_CHARS characters or MAX_QUERY_TERMS terms, an unclosed quote, an empty
 * `field:` or `""`, a `has:`, date or size it cannot read. An empty query has no terms.
 */
export function parseSearchQuery(q: string): SearchTerm[] {
    // Code points, not UTF-16 units: an emoji is one character to whoever typed it.
    // A string of more UTF-16 units than twice the limit has more code points than the limit.
    if (q.length > MAX_QUERY_CHARS && (q.length > 2 * MAX_QUERY_CHARS || Array.from(q).length > MAX_QUERY_CHARS)) {
        throw malformed(`longer than ${MAX_QUERY_CHARS} characters`);
    }

    return readTerms(q).map(toTerm);
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
            throw malformed(`more than ${MAX_QUERY_TERMS} terms`);
        }

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
        terms.push({ negated, field, value: read.value });
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
        i++;
        for (;;) {
            if (i >= q.length) {
                throw malformed('an unclosed quote');
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

function toTerm({ negated, field, value }: RawTerm): SearchTerm {
    if (value.length === 0) {
        throw malformed(field ? `an empty ${field}:` : 'an empty phrase');
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
                throw malformed(`has:${value} (attachment, link or code)`);
            }

            return { negated, field, has };
        }

        case 'before':
        case 'after': {
            const at = parseInstant(value);
            if (at === null) {
                throw malformed(`${field}:${value} (Unix ms or an ISO 8601 date or date-time)`);
            }

            return { negated, field, at };
        }

        case 'larger':
        case 'smaller': {
            const match = SIZE.exec(value);
            if (!match) {
                throw malformed(`${field}:${value} (bytes, or a number with K or M)`);
            }

            return { negated, field, bytes: Number(match[1]) * SIZE_UNITS[match[2].toLowerCase()] };
        }
    }
}

function malformed(what: string): InboxCaptureError {
    return new InboxCaptureError('INVALID_INPUT', `malformed search: ${what}`);
}
