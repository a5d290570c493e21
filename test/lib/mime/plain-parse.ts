import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { parseMessage, parseWithMailparser } from '../../../lib/mime/parse';
import { parsePlainMessage } from '../../../lib/mime/plain-parse';
import { SMALL_MESSAGE_BYTES } from '../../../lib/mime/small-message';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const FIXTURES = join(__dirname, '..', '..', 'fixtures');

/** Every .eml under test/fixtures (the corpus the tests use), by name. */
function fixtureMessages(): Array<[string, Buffer]> {
    return readdirSync(FIXTURES, { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.eml'))
        .sort()
        .map((file) => [file, readFileSync(join(FIXTURES, file))]);
}

/** Both parses of `raw` when the fast one takes it: they must be equal in every field. */
async function compare(name: string, raw: Buffer): Promise<boolean> {
    const fast = parsePlainMessage(raw);
    if (fast === undefined) {
        return false;
    }

    const slow = await parseWithMailparser(raw);
    expect(slow.error, name).to.not.exist();
    expect(fast, name).to.equal(slow);
    return true;
}

/** A text in `bytes` as each transfer encoding writes it (lines of 76, the last one with or without a line break). */
function encodeBody(bytes: Buffer, encoding: string, eol: string): string {
    if (encoding === 'base64') {
        return (bytes.toString('base64').match(/.{1,76}/g) ?? []).join(eol);
    }

    if (encoding === 'quoted-printable') {
        // Enough of a QP encoder for the test: every byte not printable ASCII as =XX, soft breaks at 70.
        let out = '';
        let line = '';
        for (const byte of bytes) {
            const token = byte === 0x0a ? '\n' : (byte >= 0x20 && byte < 0x7f && byte !== 0x3d) || byte === 0x09 ? String.fromCharCode(byte) : `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
            if (token === '\n') {
                out += line + eol;
                line = '';
                continue;
            }

            if (line.length + token.length > 70) {
                out += `${line}=${eol}`;
                line = '';
            }

            line += token;
        }

        return out + line;
    }

    return bytes.toString('latin1');
}

const HEADER_SETS: Array<[string, string[]]> = [
    ['plain', ['From: Ann <ann@example.test>', 'To: bob@example.test', 'Subject: Hello', 'Message-ID: <m1@example.test>', 'Date: Sat, 28 Nov 2026 10:00:00 +0000']],
    ['folded', ['From: "Ann, the Sender"\r\n <ann@example.test>', 'To: bob@example.test,\r\n\tcarol@example.test', 'Subject: a long subject\r\n  folded twice\r\n\tover lines', 'Message-ID:\r\n <m2@example.test>']],
    ['encoded words', ['From: =?utf-8?B?w4Fubg==?= <ann@example.test>', 'To: =?iso-8859-1?Q?J=F6rg?= <jorg@example.test>', 'Subject: =?utf-8?Q?Gr=C3=BC=C3=9Fe?= =?utf-8?B?IGF1cyBLw7Zsbg==?= and more', 'Message-ID: m3@example.test']],
    ['smuggled line break', ['From: =?utf-8?Q?A=0D=0ABcc=3A_x?= <ann@example.test>', 'To: bob@example.test', 'Subject: =?utf-8?Q?a=0D=0ABcc:_evil@example.test?=']],
    ['groups and duplicates', ['From: ann@example.test', 'To: Team: a@example.test, "B" <b@example.test>;, c@example.test', 'To: d@example.test', 'Cc: undisclosed-recipients:;', 'Cc: e@example.test (comment)', 'Subject: first', 'Subject: second', 'Message-ID: <first@example.test>', 'Message-ID: <second@example.test>']],
    ['tags', ['From: ann@example.test', 'To: bob@example.test', 'X-Tags: one, two', 'X-Tags: three,,Bad Tag!, four', 'Subject: tagged']],
    ['missing headers', ['Subject: nobody']],
    ['8-bit headers', ['From: Jörg Ünicode <jorg@example.test>', 'To: bob@exämple.test', 'Subject: Grüße 日本語', 'Message-ID: <ü@example.test>']],
    ['punycode and odd addresses', ['From: <ann@xn--mnchen-3ya.test>', 'To: bob@xn--mnchen-3ya.test, , "quoted \\" name" <q@example.test>, =?utf-8?B?PGV2aWxAZXhhbXBsZS50ZXN0Pg==?=', 'Cc: "x@y" <real@example.test>', 'Subject:']],
    ['mime version and extras', ['MIME-Version: 1.0', 'From: Ann <ann@example.test>', 'To: bob@example.test', 'Reply-To: r@example.test', 'List-Unsubscribe: <mailto:u@example.test>', 'X-Priority: 1', 'References: <a@x> <b@x>', 'Subject: extras']]
];

/** Content-Type (undefined: none), transfer encoding (undefined: none), and the charset the body bytes are in. */
const CONTENT_SHAPES: Array<[string | undefined, string | undefined, 'utf8' | 'latin1']> = [
    [undefined, undefined, 'utf8'],
    ['text/plain', '7bit', 'utf8'],
    ['text/plain; charset=utf-8', '8bit', 'utf8'],
    ['text/plain; charset="UTF-8"', 'quoted-printable', 'utf8'],
    ['text/plain; charset=us-ascii', '7bit', 'utf8'],
    ['TEXT/PLAIN; CHARSET=utf-8', 'Base64', 'utf8'],
    ['text/plain; charset=iso-8859-1', 'quoted-printable', 'latin1'],
    ['text/plain; charset=windows-1252', '8bit', 'latin1'],
    ['text/html; charset=utf-8', 'quoted-printable', 'utf8'],
    ['text/html', undefined, 'utf8'],
    ['text/html; charset=utf-8', 'base64', 'utf8'],
    ['text/plain; charset=utf-8', 'binary', 'utf8'],
    ['text/plain; charset=utf-8', '(a comment) base64', 'utf8']
];

const BODIES: Array<[string, string]> = [
    ['short', 'Hello,\nthis is the body.\n'],
    ['empty', ''],
    ['no final line break', 'one line, no break'],
    ['8-bit', 'Grüße aus Köln – ça va? 日本語\n\nsecond paragraph\n'],
    ['long lines and trailing spaces', `${'word '.repeat(40)}\ntrailing spaces   \n\ttab line\t\n= an equals sign =3D\n`],
    ['boundary-like and From lines', '--foo\n--foo--\nFrom someone\n.\n..dot\n'],
    ['html', '<html><body><p>Hi &amp; <b>bold</b></p>\n<a href="https://example.test/x?a=1&b=2">link</a> code 123456</body></html>\n'],
    ['control characters', 'a\u0001b\u001bc\u007fd\n']
];

/** Every generated message: each header set with each content shape and body, with CRLF and with LF. */
function generatedMessages(): Array<[string, Buffer]> {
    const out: Array<[string, Buffer]> = [];
    for (const eol of ['\r\n', '\n']) {
        for (const [headerName, headers] of HEADER_SETS) {
            for (const [contentType, encoding, charset] of CONTENT_SHAPES) {
                for (const [bodyName, body] of BODIES) {
                    const bytes = Buffer.from(body.replace(/\n/g, eol), charset === 'latin1' ? 'latin1' : 'utf8');
                    const lines = [...headers.map((h) => h.replace(/\r\n/g, eol))];
                    if (contentType !== undefined) {
                        lines.push(`Content-Type: ${contentType}`);
                    }

                    if (encoding !== undefined) {
                        lines.push(`Content-Transfer-Encoding: ${encoding}`);
                    }

                    const encodingName = (encoding ?? '').replace(/\(.*\)/, '').trim().toLowerCase();
                    const text = `${lines.join(eol)}${eol}${eol}${encodeBody(bytes, encodingName, eol)}`;
                    out.push([`${JSON.stringify(eol)} ${headerName} / ${contentType} ${encoding} / ${bodyName}`, Buffer.from(text, 'latin1')]);
                }
            }
        }
    }

    // The odd ones a hand-written or broken encoder makes.
    const odd: Array<[string, string]> = [
        ['QP soft breaks and bad escapes', 'Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nsoft=\r\nbreak and =C3=A9 and =ZZ and =\r\n\r\nend =  \r\nlast='],
        ['QP with LF soft breaks', 'Content-Transfer-Encoding: quoted-printable\n\nab=\ncd=3D=3d\n'],
        ['base64 padded per line', 'Content-Transfer-Encoding: base64\r\n\r\nYQ==\r\nYmM=\r\nZGVm\r\n'],
        ['base64 without padding or final break', 'Content-Transfer-Encoding: base64\r\n\r\nSGVsbG8gd29ybGQ\r\nSGk'],
        ['base64 with junk', 'Content-Transfer-Encoding: base64\r\n\r\nSGVs*bG8g\r\n d29y bGQ=\r\n!!\r\nQUJD'],
        ['base64 with URL-safe characters', 'Content-Transfer-Encoding: base64\r\n\r\nSGVs-bG8_\r\nd2-9y_bGQ\r\nQU_JDRA'],
        ['base64 padding inside a line', 'Content-Transfer-Encoding: base64\r\n\r\nQQ==QUJDRA\r\nQQ=QUJ\r\nDRA='],
        ['base64 of a broken UTF-8 sequence', `Content-Transfer-Encoding: base64\r\n\r\n${Buffer.from([0x61, 0xc3, 0x28, 0xe2, 0x82, 0x0a, 0x62]).toString('base64')}\r\n`],
        ['headers only', 'From: a@example.test\r\nTo: b@example.test\r\nSubject: no body'],
        ['headers only with final break', 'From: a@example.test\r\nSubject: no body\r\n'],
        ['nothing but an empty line', '\r\nbody only\r\n'],
        ['empty message', ''],
        ['mbox From line', 'From ann@example.test Sat Nov 28 10:00:00 2026\r\nFrom: ann@example.test\r\nTo: b@example.test\r\n\r\nbody\r\n'],
        ['a header line without a colon', 'From: a@example.test\r\nnot a header\r\nTo: b@example.test\r\n\r\nbody\r\n'],
        ['continuation first', ' folded first\r\nFrom: a@example.test\r\n\r\nbody\r\n'],
        ['bare CR in headers', 'From: a@example.test\rTo: c@example.test\r\nSubject: x\r\n\r\nbody\r\n'],
        ['mixed line ends', 'From: a@example.test\nTo: b@example.test\r\nSubject: mixed\n\r\nline one\r\nline two\nline three\r'],
        ['empty Content-Type', 'Content-Type:\r\nFrom: a@example.test\r\n\r\nbody\r\n'],
        ['Content-Type without subtype', 'Content-Type: text\r\n\r\nbody\r\n'],
        ['inline disposition', 'Content-Type: text/plain\r\nContent-Disposition: inline\r\n\r\nbody\r\n'],
        ['two Content-Type headers', 'Content-Type: text/html\r\nContent-Type: text/plain\r\n\r\n<p>body</p>\r\n'],
        ['BOM in UTF-8 body', 'Content-Type: text/plain; charset=utf-8\r\n\r\n\uFEFFbody\r\n'],
        ['lone surrogate by encoded word', 'Subject: =?utf-8?B?7aCA?=\r\n\r\nbody\r\n'],
        ['charset in single quotes', 'Content-Type: text/plain; charset=\'utf-8\'\r\n\r\nbody\r\n'],
        ['charset spelt utf8', 'Content-Type: text/plain; charset=utf8\r\n\r\nbody\r\n'],
        ['message-id empty', 'Message-ID: <>\r\nFrom: a@example.test\r\n\r\nbody\r\n'],
        ['message-id with spaces', 'Message-ID:   < spaced@example.test >  \r\n\r\nbody\r\n'],
        ['From with several mailboxes', 'From: a@example.test, B <b@example.test>\r\n\r\nbody\r\n'],
        ['From group', 'From: Group: a@example.test;\r\n\r\nbody\r\n']
    ];
    for (const [name, text] of odd) {
        out.push([name, Buffer.from(text, 'utf8')]);
    }

    return out;
}

/** One part of an alternative: its header lines and its body as written. */
type Part = [string[], string];

const PART_SHAPES: Array<[string, Part[]]> = [
    ['text and HTML', [[['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 7bit'], 'Hello,\nthe text part.'], [['Content-Type: text/html; charset=utf-8', 'Content-Transfer-Encoding: 7bit'], '<p>Hello, <b>the HTML part</b>.</p>']]],
    ['nodemailer QP', [[['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: quoted-printable'], 'Gr=C3=BC=C3=9Fe, a long line soft=\nbroken\n'], [['Content-Type: text/html; charset=utf-8', 'Content-Transfer-Encoding: quoted-printable'], '<p>Gr=C3=BC=C3=9Fe <a href=3D"https://example.test/">x</a></p>']]],
    ['base64 parts', [[['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: base64'], `${Buffer.from('plain ü\r\ntext').toString('base64')}\n`], [['Content-Type: text/html', 'Content-Transfer-Encoding: base64'], Buffer.from('<i>html ü</i>').toString('base64')]]],
    ['HTML only', [[['Content-Type: text/html'], '<p>only html</p>\n']]],
    ['two text parts', [[['Content-Type: text/plain'], 'first'], [['Content-Type: text/plain'], 'second\n']]],
    ['two HTML parts', [[['Content-Type: text/html'], '<p>first</p>'], [['Content-Type: text/plain'], 'between'], [['Content-Type: text/html'], '<p>second</p>']]],
    ['parts without headers', [[[], 'no header at all'], [['Content-Type: text/html'], '<p>x</p>']]],
    ['empty parts', [[['Content-Type: text/plain'], ''], [['Content-Type: text/html'], '']]],
    ['blank lines around', [[['Content-Type: text/plain'], '\n\ntext with blank lines\n\n']]],
    ['latin1 part', [[['Content-Type: text/plain; charset=iso-8859-1', 'Content-Transfer-Encoding: quoted-printable'], 'J=F6rg'], [['Content-Type: text/html; charset=utf-8'], '<p>J\u00f6rg</p>']]],
    ['body with dashes', [[['Content-Type: text/plain'], '--not the boundary\n-- \nsignature'], [['Content-Type: text/html'], '<hr>']]],
    ['inline disposition', [[['Content-Type: text/plain', 'Content-Disposition: inline'], 'inline text']]],
    ['an attachment among them', [[['Content-Type: text/plain'], 'text'], [['Content-Type: image/png', 'Content-Transfer-Encoding: base64'], 'iVBORw0KGgo=']]],
    ['flowed part', [[['Content-Type: text/plain; format=flowed'], 'flowed \ntext']]],
    ['nested multipart', [[['Content-Type: multipart/related; boundary=inner'], '--inner\nContent-Type: text/html\n\n<p>x</p>\n--inner--']]]
];

/** Every generated multipart/alternative: each part shape with each boundary, preamble and epilogue, CRLF and LF. */
function alternativeMessages(): Array<[string, Buffer]> {
    const out: Array<[string, Buffer]> = [];
    const boundaries: Array<[string, string]> = [['plain', 'b1'], ['quoted', '"--==_mimepart_abc; x"'], ['nodemailer', '"--_NmP-1a2b3c4d5e6f-Part_1"']];
    for (const eol of ['\r\n', '\n']) {
        for (const [partsName, parts] of PART_SHAPES) {
            for (const [boundaryName, param] of boundaries) {
                const boundary = param.replace(/^"|"$/g, '');
                for (const [frameName, preamble, epilogue] of [['bare', '', ''], ['preamble and epilogue', 'This is a multi-part message.\n\n', '\nepilogue text\n--' + boundary + '\nnot a part\n']]) {
                    const body = parts.map(([headers, content]) => `--${boundary}\n${headers.map((h) => `${h}\n`).join('')}\n${content}\n`).join('');
                    const text = `From: Ann <ann@example.test>\nTo: bob@example.test\nSubject: alternative\nMIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=${param}\n\n${preamble}${body}--${boundary}--\n${epilogue}`;
                    out.push([`${JSON.stringify(eol)} alternative ${partsName} / ${boundaryName} / ${frameName}`, Buffer.from(text.replace(/\n/g, eol))]);
                }
            }
        }
    }

    const odd: Array<[string, string]> = [
        ['no closing delimiter', 'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\ntext\r\n'],
        ['closing delimiter without a line break', 'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\n\r\ntext\r\n--b--'],
        ['delimiter with trailing spaces', 'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b \r\n\r\npreamble?\r\n--b\r\n\r\ntext\r\n--b--  \r\nmore\r\n--b--\r\n'],
        ['delimiter after a lone CR', 'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\n\r\ntext\n\r--b\r\nContent-Type: text/html\r\n\r\n<p>h</p>\r\n--b--\r\n'],
        ['a part whose body is one line ending, then a part', 'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\n\r\n\r\n--b\r\n\r\ntext\r\n--b--\r\n'],
        ['a part whose body is one line ending, then the end', 'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\n\r\ntext\r\n--b\r\n\r\n\r\n--b--\r\n'],
        ['a delimiter inside a header block', 'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n--b\r\n\r\ntext\r\n--b--\r\n'],
        ['closing delimiter in the preamble', 'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b--\r\n--b\r\n\r\ntext\r\n--b--\r\n'],
        ['empty Content-Type in a part', 'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\nContent-Type:\r\n\r\ntext\r\n--b--\r\n'],
        ['many parts', `Content-Type: multipart/alternative; boundary=b\r\n\r\n${'--b\r\n\r\npart\r\n'.repeat(12)}--b--\r\n`],
        ['boundary prefix of a longer one', 'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\n\r\ntext\r\n--bb\r\nstill text\r\n--b--\r\n'],
        ['multipart/mixed', 'Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\ntext\r\n--b--\r\n'],
        ['alternative without a boundary', 'Content-Type: multipart/alternative\r\n\r\n--b\r\n\r\ntext\r\n--b--\r\n']
    ];
    for (const [name, text] of odd) {
        out.push([name, Buffer.from(text)]);
    }

    return out;
}

// compare() of every message; how many took the fast path.
async function comparedAll(messages: Array<[string, Buffer]>): Promise<number> {
    let taken = 0;
    for (const [name, raw] of messages) {
        taken += await compare(name, raw) ? 1 : 0;
    }

    return taken;
}

describe('plain-parse', () => {

    describe('parsePlainMessage()', () => {

        it('gives what mailparser gives for every generated small plain message, and takes most of them', async () => {
            const messages = generatedMessages();
            const taken = await comparedAll(messages);

            // Only the shapes it must leave to mailparser are left (the odd ones, mostly): without
            // this bound the test would pass by never taking the fast path.
            expect(messages.length).to.be.above(2000);
            expect(taken / messages.length).to.be.above(0.95);
        });

        it('gives what mailparser gives for every generated multipart/alternative, and takes the plain ones', async () => {
            const messages = alternativeMessages();
            const taken = await comparedAll(messages);

            // Four of the fifteen part shapes hold a part it must leave to mailparser, and most odd ones.
            expect(messages.length).to.be.above(150);
            expect(taken / messages.length).to.be.above(0.6);
        });

        it('gives what mailparser gives for every message under test/fixtures it takes', async () => {
            const messages = fixtureMessages();
            const taken = await comparedAll(messages);

            // The corpus is mostly multipart and odd on purpose; its single-part text messages are taken.
            expect(messages.length).to.be.above(300);
            expect(taken).to.be.above(100);
        });

        it('leaves what it is not sure of to mailparser', () => {
            const notMine = [
                'Content-Type: text/plain; format=flowed\r\n\r\nflowed \r\ntext\r\n',
                'Content-Type: text/plain; charset=x-unknown\r\n\r\nbody\r\n',
                'Content-Type: text/plain; charset=shift_jis\r\n\r\nbody\r\n',
                'Content-Transfer-Encoding: x-uuencode\r\n\r\nbody\r\n',
                'Content-Type: text/plain\r\nContent-Disposition: attachment; filename=a.txt\r\n\r\nbody\r\n',
                'Content-Type: application/pdf\r\n\r\nbody\r\n',
                'Content-Type: message/delivery-status\r\n\r\nbody\r\n',
                'Content-Type: text/plain; boundary=x\r\n\r\n--x\r\nbody\r\n',
                'Content-Type: multipart/alternative; boundary=x\r\n\r\n--x\r\nContent-Type: text/plain\r\n\r\nbody\r\n',
                'Content-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: text/plain\r\n\r\nbody\r\n--x--\r\n',
                `Content-Type: text/plain\r\n\r\n${'x'.repeat(SMALL_MESSAGE_BYTES)}\r\n`
            ];
            for (const text of notMine) {
                expect(parsePlainMessage(Buffer.from(text)), text.slice(0, 60)).to.not.exist();
            }
        });

        it('is what parseMessage() gives for a small plain message', async () => {
            const raw = Buffer.from('From: Ann <ann@example.test>\r\nTo: bob@example.test\r\nSubject: =?utf-8?Q?Gr=C3=BC=C3=9Fe?=\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nGr=C3=BC=C3=9Fe=\r\n, code 123456\r\n');
            expect(parsePlainMessage(raw)).to.exist();
            const parsed = await parseMessage(raw);
            expect([parsed.from, parsed.fromName, parsed.to, parsed.subject, parsed.text]).to.equal(['ann@example.test', 'Ann', ['bob@example.test'], 'Grüße', 'Grüße, code 123456\n']);
        });
    });
});
