import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { parseHeaderFields, type HeaderField } from '../../../lib/mime/header-fields';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** A header section from lines joined with CRLF (or `eol`), ending with the empty line. */
function section(lines: string[], eol = '\r\n'): Buffer {
    return Buffer.from(lines.join(eol) + eol + eol, 'utf8');
}

const field = (name: string, value: string): HeaderField => ({ name, value });

describe('header-fields', () => {

    describe('parseHeaderFields()', () => {

        // One row per rule of docs/api.md, "Header fields"; each input is a header section as stored.
        const table: Array<{ rule: string; lines: string[]; expected: HeaderField[] }> = [
            {
                rule: 'unfolds a line break followed by spaces into those spaces',
                lines: ['Subject: a long', '   subject line'],
                expected: [field('Subject', 'a long   subject line')]
            },
            {
                rule: 'unfolds a line break followed by a tab into the tab',
                lines: ['X-Folded: one', '\ttwo', ' three'],
                expected: [field('X-Folded', 'one\ttwo three')]
            },
            {
                rule: 'decodes a Q encoded-word',
                lines: ['Subject: =?ISO-8859-1?Q?Caf=E9_cr=E8me?='],
                expected: [field('Subject', 'Café crème')]
            },
            {
                rule: 'decodes a B encoded-word',
                lines: ['Subject: =?UTF-8?B?SGVsbG8g4pyT?='],
                expected: [field('Subject', 'Hello ✓')]
            },
            {
                rule: 'joins adjacent encoded-words without the white space between them (RFC 2047 section 6.2)',
                lines: ['Subject: =?UTF-8?Q?Your_code?= =?UTF-8?Q?_is?=   =?UTF-8?B?IDEyMzQ1Ng==?='],
                expected: [field('Subject', 'Your code is 123456')]
            },
            {
                rule: 'joins adjacent encoded-words across a fold',
                lines: ['Subject: =?UTF-8?Q?part_one?=', '\t=?UTF-8?Q?_part_two?='],
                expected: [field('Subject', 'part one part two')]
            },
            {
                rule: 'keeps the white space between an encoded-word and plain text',
                lines: ['Subject: Hello =?UTF-8?Q?W=C3=B6rld?= again'],
                expected: [field('Subject', 'Hello Wörld again')]
            },
            {
                rule: 'joins a UTF-8 character split over two encoded-words',
                lines: ['Subject: =?UTF-8?Q?=E2=9C?= =?UTF-8?Q?=93?='],
                expected: [field('Subject', '✓')]
            },
            {
                rule: 'decodes mixed charsets in one value',
                lines: ['Subject: =?ISO-8859-1?Q?caf=E9?= and =?KOI8-R?B?8NLJ18XU?= and =?UTF-8?B?5pel5pys?='],
                expected: [field('Subject', 'café and Привет and 日本')]
            },
            {
                rule: 'decodes encoded display names in address fields',
                lines: ['From: =?UTF-8?Q?J=C3=B6rg_M=C3=BCller?= <jorg@example.test>'],
                expected: [field('From', 'Jörg Müller <jorg@example.test>')]
            },
            {
                rule: 'turns a line break inside a decoded word into a space, as for subject',
                lines: ['Subject: =?UTF-8?Q?a=0D=0ABcc:_x?='],
                expected: [field('Subject', 'a Bcc: x')]
            },
            {
                rule: 'gives an empty field the value ""',
                lines: ['Subject:', 'X-Empty:    ', 'X-Folded-Empty:', '   '],
                expected: [field('Subject', ''), field('X-Empty', ''), field('X-Folded-Empty', '')]
            },
            {
                rule: 'keeps duplicates, in message order',
                lines: ['Received: from a', 'X-Tag: 1', 'Received: from b', 'X-Tag: 2', 'Received: from c'],
                expected: [field('Received', 'from a'), field('X-Tag', '1'), field('Received', 'from b'), field('X-Tag', '2'), field('Received', 'from c')]
            },
            {
                rule: 'keeps the name as written and trims the value',
                lines: ['message-ID:   <abc@example.test>   ', 'X-CASE-Mixed:x', 'Subject :obsolete space before the colon'],
                expected: [field('message-ID', '<abc@example.test>'), field('X-CASE-Mixed', 'x'), field('Subject', 'obsolete space before the colon')]
            },
            {
                rule: 'keeps the angle brackets of Message-ID',
                lines: ['Message-ID: <a.b+c@example.test>'],
                expected: [field('Message-ID', '<a.b+c@example.test>')]
            },
            {
                rule: 'reads raw UTF-8 header bytes (RFC 6532)',
                lines: ['Subject: Grüße aus Köln 日本', 'From: Zoë <zoe@exämple.test>'],
                expected: [field('Subject', 'Grüße aus Köln 日本'), field('From', 'Zoë <zoe@exämple.test>')]
            },
            {
                rule: 'keeps only the first colon as the separator',
                lines: ['Subject: Re: re: time 10:30'],
                expected: [field('Subject', 'Re: re: time 10:30')]
            },
            {
                rule: 'leaves text that only looks like an encoded-word as it is',
                lines: ['Subject: =?not an encoded word', 'X-Price: 5 =? 6'],
                expected: [field('Subject', '=?not an encoded word'), field('X-Price', '5 =? 6')]
            },
            {
                rule: 'skips lines that are not fields (no colon, or a continuation before any field)',
                lines: ['  orphan continuation', 'From nobody Mon Jan 1 00:00:00 2024', 'Subject: kept', ':no name'],
                expected: [field('Subject', 'kept')]
            }
        ];

        for (const row of table) {
            it(row.rule, () => {
                expect(parseHeaderFields(section(row.lines))).to.equal(row.expected);
            });
        }

        it('drops C0 control characters from values, as from every text field, encoded ones included', () => {
            const bytes = Buffer.from('Subject: a\u0001b =?utf-8?Q?c=00=1Bd?=\r\nX-Tab: e\tf\r\n\r\n', 'latin1');
            expect(parseHeaderFields(bytes)).to.equal([field('Subject', 'ab cd'), field('X-Tab', 'e\tf')]);
        });

        it('reads 8-bit header bytes that are not UTF-8 as Latin-1', () => {
            const bytes = Buffer.concat([Buffer.from('Subject: caf'), Buffer.from([0xe9]), Buffer.from(' au lait\r\nX-Ok: yes\r\n\r\n')]);
            expect(parseHeaderFields(bytes)).to.equal([field('Subject', 'café au lait'), field('X-Ok', 'yes')]);
        });

        it('reads a section with LF line ends as one with CRLF', () => {
            const lines = ['Subject: =?UTF-8?Q?one?=', '\t=?UTF-8?Q?_two?=', 'To: a@example.test', 'X-Empty:'];
            const expected = [field('Subject', 'one two'), field('To', 'a@example.test'), field('X-Empty', '')];
            expect(parseHeaderFields(section(lines, '\n'))).to.equal(expected);
            expect(parseHeaderFields(section(lines, '\r\n'))).to.equal(expected);
        });

        it('stops at the first empty line: the body and the MIME parts\' headers are not listed', () => {
            const raw = section([
                'From: a@example.test',
                'Content-Type: multipart/mixed; boundary="b"'
            ]).toString() + [
                '--b',
                'Content-Type: text/plain; charset=utf-8',
                'X-Part-Header: not top-level',
                '',
                'Body: looks like a header',
                '--b--',
                ''
            ].join('\r\n');
            expect(parseHeaderFields(Buffer.from(raw))).to.equal([
                field('From', 'a@example.test'),
                field('Content-Type', 'multipart/mixed; boundary="b"')
            ]);
        });

        it('reads a section without the final empty line, and an empty one', () => {
            expect(parseHeaderFields(Buffer.from('Subject: cut\r\nX-Last: here'))).to.equal([field('Subject', 'cut'), field('X-Last', 'here')]);
            expect(parseHeaderFields(Buffer.alloc(0))).to.equal([]);
            expect(parseHeaderFields(Buffer.from('\r\nSubject: body, not a header\r\n'))).to.equal([]);
        });
    });
});
