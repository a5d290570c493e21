import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { isInboxCaptureError } from '../../../lib/errors';
import { parseSearchQuery } from '../../../lib/search/parse-query';
import { MAX_QUERY_CHARS, MAX_QUERY_TERMS } from '../../../lib/search/search-query';
import type { SearchTerm } from '../../../lib/types';
import { isSearchSyntaxError, type SearchSyntaxError } from '../../../lib/search/search-syntax-error';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const text = (value: string, negated = false): SearchTerm => ({ negated, field: 'text', text: value });

/** Queries and their parse: every field, quoting, escapes, negation, and what is plain text. */
const PARSES: Array<[string, SearchTerm[]]> = [
    ['order', [text('order')]],
    ['ORDER 12345', [text('ORDER'), text('12345')]],
    ['  two   spaces\tand\ttabs ', [text('two'), text('spaces'), text('and'), text('tabs')]],
    ['"order 12345"', [text('order 12345')]],
    ['"say \\"hi\\"" "back\\\\slash"', [text('say "hi"'), text('back\\slash')]],
    ['"a\\nb"', [text('a\\nb')]],
    ['"two  spaces kept"', [text('two  spaces kept')]],
    ['ab"cd ef"gh', [text('abcd efgh')]],
    ['-spam', [text('spam', true)]],
    ['-"spam offer"', [text('spam offer', true)]],
    ['"-not negated"', [text('-not negated')]],
    ['-', [text('-')]],
    ['a - b', [text('a'), text('-'), text('b')]],
    ['--x', [text('-x', true)]],
    ['from:alice@example.com', [{ negated: false, field: 'from', text: 'alice@example.com' }]],
    ['FROM:Alice', [{ negated: false, field: 'from', text: 'Alice' }]],
    ['to:signup', [{ negated: false, field: 'to', text: 'signup' }]],
    ['subject:"Your order"', [{ negated: false, field: 'subject', text: 'Your order' }]],
    ['body:ORD-4242', [{ negated: false, field: 'body', text: 'ORD-4242' }]],
    ['filename:.pdf', [{ negated: false, field: 'filename', text: '.pdf' }]],
    ['-from:noreply', [{ negated: true, field: 'from', text: 'noreply' }]],
    ['from:-x', [{ negated: false, field: 'from', text: '-x' }]],
    ['subject:a:b', [{ negated: false, field: 'subject', text: 'a:b' }]],
    ['"from:x"', [text('from:x')]],
    ['tag:Welcome', [{ negated: false, field: 'tag', tag: 'welcome' }]],
    ['-tag:"beta"', [{ negated: true, field: 'tag', tag: 'beta' }]],
    ['tag:not/a-tag', [{ negated: false, field: 'tag', tag: 'not/a-tag' }]],
    ['is:unread -is:READ', [
        { negated: false, field: 'is', seen: false },
        { negated: true, field: 'is', seen: true }
    ]],
    ['has:attachment has:LINK -has:code', [
        { negated: false, field: 'has', has: 'attachment' },
        { negated: false, field: 'has', has: 'link' },
        { negated: true, field: 'has', has: 'code' }
    ]],
    ['before:1700000000000', [{ negated: false, field: 'before', at: 1_700_000_000_000 }]],
    ['after:2024-01-15', [{ negated: false, field: 'after', at: Date.UTC(2024, 0, 15) }]],
    ['after:2024-01-15T10:20:30Z', [{ negated: false, field: 'after', at: Date.UTC(2024, 0, 15, 10, 20, 30) }]],
    ['before:"2024-01-15T10:20+02:00"', [{ negated: false, field: 'before', at: Date.UTC(2024, 0, 15, 8, 20) }]],
    ['larger:1000 smaller:10K', [
        { negated: false, field: 'larger', bytes: 1000 },
        { negated: false, field: 'smaller', bytes: 10 * 1024 }
    ]],
    ['larger:2m', [{ negated: false, field: 'larger', bytes: 2 * 1024 * 1024 }]],
    ['https://example.com/verify?token=abc', [text('https://example.com/verify?token=abc')]],
    ['mailto:x@y', [text('mailto:x@y')]],
    ['10:30', [text('10:30')]],
    ['unknown:field', [text('unknown:field')]],
    ['foo:', [text('foo:')]],
    [':colon', [text(':colon')]],
    ['sub-ject:x', [text('sub-ject:x')]],
    ['üñî "çødé 🙂"', [text('üñî'), text('çødé 🙂')]],
    ['order from:shop -subject:test has:attachment after:2024-01-01', [
        text('order'),
        { negated: false, field: 'from', text: 'shop' },
        { negated: true, field: 'subject', text: 'test' },
        { negated: false, field: 'has', has: 'attachment' },
        { negated: false, field: 'after', at: Date.UTC(2024, 0, 1) }
    ]],
    [Array.from({ length: MAX_QUERY_TERMS }, (_, i) => `t${i}`).join(' '), Array.from({ length: MAX_QUERY_TERMS }, (_, i) => text(`t${i}`))],
    ['x'.repeat(MAX_QUERY_CHARS), [text('x'.repeat(MAX_QUERY_CHARS))]],
    ['🙂'.repeat(MAX_QUERY_CHARS), [text('🙂'.repeat(MAX_QUERY_CHARS))]]
];

/** Every malformed query of the search language: each is INVALID_INPUT. */
const MALFORMED: Array<[string, string]> = [
    ['longer than 1,024 characters', 'x'.repeat(MAX_QUERY_CHARS + 1)],
    ['1,025 characters of white space', ' '.repeat(MAX_QUERY_CHARS + 1)],
    ['longer than 1,024 code points', '🙂'.repeat(MAX_QUERY_CHARS + 1)],
    ['more than 20 terms', Array.from({ length: MAX_QUERY_TERMS + 1 }, (_, i) => `t${i}`).join(' ')],
    ['more than 20 terms of fields', Array.from({ length: MAX_QUERY_TERMS + 1 }, () => 'has:link').join(' ')],
    ['an unclosed quote', '"order 123'],
    ['an unclosed quote after a field', 'subject:"order'],
    ['a quote closed by an escaped quote only', '"abc\\"'],
    ['an unclosed quote after a negation', '-"'],
    ['an empty from:', 'from:'],
    ['an empty to:', 'to: x'],
    ['an empty subject:', 'subject:'],
    ['an empty body:', 'body:'],
    ['an empty filename:', 'filename:'],
    ['an empty tag:', 'tag:'],
    ['an empty has:', 'has:'],
    ['an empty before:', 'before:'],
    ['an empty after:', 'after:'],
    ['an empty larger:', 'larger:'],
    ['an empty smaller:', 'smaller:'],
    ['a negated empty field', '-from:'],
    ['an empty quoted field', 'from:""'],
    ['an empty phrase', '""'],
    ['has: something else', 'has:attachments'],
    ['has: a word', 'has:image'],
    ['a date it cannot read', 'before:yesterday'],
    ['a month 13', 'after:2024-13-01'],
    ['February 30th', 'after:2024-02-30'],
    ['a negative timestamp', 'before:-5'],
    ['a timestamp beyond the Date range', 'after:9999999999999999'],
    ['a size it cannot read', 'larger:big'],
    ['a size with a unit it does not know', 'larger:10G'],
    ['a size in KB', 'smaller:10KB'],
    ['a fractional size', 'larger:1.5M'],
    ['a negative size', 'smaller:-1'],
    ['a size of 16 digits', `larger:${'9'.repeat(16)}`]
];

describe('parseSearchQuery()', () => {

    for (const [q, terms] of PARSES) {
        it(`parses ${JSON.stringify(q.length > 60 ? `${q.slice(0, 60)}…` : q)}`, () => {
            expect(parseSearchQuery(q)).to.equal(terms);
        });
    }

    for (const [name, q] of MALFORMED) {
        it(`refuses ${name}`, () => {
            let caught: unknown;
            try {
                parseSearchQuery(q);
            }
            catch (err) {
                caught = err;
            }

            expect(isInboxCaptureError(caught, 'INVALID_INPUT'), String(caught)).to.be.true();
        });
    }

    it('parses the longest query of the most terms in well under a millisecond each', () => {
        const q = Array.from({ length: MAX_QUERY_TERMS }, () => `"${'a\\"'.repeat(16)}"`).join(' ').slice(0, MAX_QUERY_CHARS - 1) + '"';
        const started = process.hrtime.bigint();
        for (let i = 0; i < 100; i++) {
            try {
                parseSearchQuery(q);
            }
            catch {
                // Malformed or not: only the time counts here.
            }
        }

        // A far bound (100 parses in 1 s): the parse is linear, a regular expression gone wrong would not be.
        expect(Number(process.hrtime.bigint() - started) / 1e6).to.be.below(1000);
    });
});

/** What a malformed query says: the reason in words and the 1-based character (code point) where the fault starts. */
const REASONS: Array<[string, string, number]> = [
    ['subject:"unclosed', 'unclosed quote at character 9', 9],
    ['a b "c d', 'unclosed quote at character 5', 5],
    ['🙂🙂 "x', 'unclosed quote at character 4', 4],
    ['is:constructor', 'is:constructor is not a known is: value (read, unread)', 1],
    ['x is:seen', 'is:seen is not a known is: value (read, unread)', 3],
    ['has:html', 'has:html is not a known has: value (attachment, link, code)', 1],
    ['x -has:IMAGE', 'has:IMAGE is not a known has: value (attachment, link, code)', 3],
    ['after:yesterday', 'after:yesterday is not a date (Unix ms or ISO 8601)', 1],
    ['smaller:10KB', 'smaller:10KB is not a size (bytes, or a number with K or M)', 1],
    ['from:', 'from: needs a value', 1],
    ['x to: y', 'to: needs a value', 3],
    ['ab ""', 'empty phrase "" at character 4', 4],
    [`has:${'x'.repeat(50)}`, `has:${'x'.repeat(40)}... is not a known has: value (attachment, link, code)`, 1],
    [Array.from({ length: MAX_QUERY_TERMS + 1 }, () => 'ab').join(' '), `more than ${MAX_QUERY_TERMS} terms (the next starts at character ${3 * MAX_QUERY_TERMS + 1})`, 3 * MAX_QUERY_TERMS + 1],
    ['x'.repeat(MAX_QUERY_CHARS + 1), `longer than ${MAX_QUERY_CHARS} characters`, MAX_QUERY_CHARS + 1],
    // Present with nothing to search for: it would match every email (a DELETE would empty the inbox).
    ['', 'has no term to search for (only white space, or nothing)', 1],
    ['   \t\n ', 'has no term to search for (only white space, or nothing)', 1],
    ['\uFEFF', 'has no term to search for (only white space, or nothing)', 1],
    ['\u00A0', 'has no term to search for (only white space, or nothing)', 1],
    ['\u0000', 'the term at character 1 has nothing to search for (only control or invisible characters)', 1],
    ['order \u0000\u200B\u0007', 'the term at character 7 has nothing to search for (only control or invisible characters)', 7],
    ['"\u0000"', 'the term at character 1 has nothing to search for (only control or invisible characters)', 1],
    ['from:\u0000', 'the term at character 1 has nothing to search for (only control or invisible characters)', 1]
];

describe('parseSearchQuery() errors', () => {

    for (const [q, reason, position] of REASONS) {
        it(`says "${reason.slice(0, 60)}" at character ${position}`, () => {
            let caught: unknown;
            try {
                parseSearchQuery(q);
            }
            catch (err) {
                caught = err;
            }

            expect(isSearchSyntaxError(caught), String(caught)).to.be.true();
            const error = caught as SearchSyntaxError;
            expect(error.reason).to.equal(reason);
            expect(error.position).to.equal(position);
            expect(isInboxCaptureError(error, 'INVALID_INPUT')).to.be.true();
            expect(error.message).to.equal(`malformed search: ${reason}`);
        });
    }
});
