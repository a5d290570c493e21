import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import {
    isSmallMessage, SMALL_MAX_BOUNDARY_LINES, SMALL_MAX_ENCODED_WORDS, SMALL_MAX_HEADER_ADDRESSES, SMALL_MAX_HEADER_LINES,
    SMALL_MAX_PUNYCODE_LABELS, SMALL_MESSAGE_BYTES
} from '../../../lib/mime/small-message';
import { adversarialMessages } from '../../fixtures/adversarial/generate';
import { hostileLabel, nestedGroupsMessage, punycodeMessage } from '../../helpers/hostile-addresses';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const HEAD = 'From: a@x.test\r\nTo: b@x.test\r\nSubject: s\r\nMessage-ID: <m@x.test>\r\n';

/** A plain message of exactly `bytes` bytes. */
function plainOf(bytes: number): Buffer {
    const start = `${HEAD}\r\n`;
    return Buffer.from(start + 'x'.repeat(bytes - start.length));
}

/** `HEAD` plus `lines` more header lines, then a body. */
function withHeaderLines(lines: number): Buffer {
    return Buffer.from(`${HEAD}${'X-A: b\r\n'.repeat(lines - 4)}\r\nbody\r\n`);
}

/** A message whose header section holds `count` `@` in all (From and Message-ID hold two). */
function withAddresses(count: number): Buffer {
    return Buffer.from(`From: a@x.test\r\nMessage-ID: <m@x.test>\r\nTo: ${Array.from({ length: count - 2 }, (_, i) => `r${i}@x.test`).join(', ')}\r\n\r\nbody\r\n`);
}

/** A message with `count` encoded words in its subject. */
function withEncodedWords(count: number): Buffer {
    return Buffer.from(`${HEAD}X-Subject: ${'=?utf-8?Q?caf=C3=A9?= '.repeat(count)}\r\n\r\nbody\r\n`);
}

/** A message whose To holds `count` punycode domains. */
function withPunycode(count: number): Buffer {
    return Buffer.from(`From: a@x.test\r\nTo: ${Array.from({ length: count }, (_, i) => `r${i}@XN--bcher-kva.test`).join(', ')}\r\n\r\nbody\r\n`);
}

/** A multipart message with `parts` text parts: parts + 1 boundary lines. */
function withParts(parts: number): Buffer {
    return Buffer.from(`${HEAD}Content-Type: multipart/mixed; boundary="b"\r\n\r\n${'--b\r\nContent-Type: text/plain\r\n\r\nx\r\n'.repeat(parts)}--b--\r\n`);
}

describe('small-message', () => {

    describe('isSmallMessage()', () => {

        it('takes a plain message up to SMALL_MESSAGE_BYTES, and not one byte more', () => {
            expect(isSmallMessage(plainOf(1024))).to.be.true();
            expect(isSmallMessage(plainOf(SMALL_MESSAGE_BYTES))).to.be.true();
            expect(isSmallMessage(plainOf(SMALL_MESSAGE_BYTES + 1))).to.be.false();
            expect(isSmallMessage(Buffer.alloc(0))).to.be.true();
        });

        it('takes a usual small message: text and HTML with two attachments, encoded words in its headers', () => {
            const raw = Buffer.from([
                'From: =?utf-8?Q?Ren=C3=A9?= <rene@x.test>', 'To: a@x.test, b@x.test', 'Cc: c@x.test', 'Subject: =?utf-8?B?Y2Fmw6k=?=',
                'Message-ID: <m@x.test>', 'Content-Type: multipart/mixed; boundary="m"', '',
                '--m', 'Content-Type: multipart/alternative; boundary="a"', '',
                '--a', 'Content-Type: text/plain', '', 'Your code is 123456 -- see https://x.test/v', '',
                '--a', 'Content-Type: text/html', '', '<p>Your code is <a href="https://x.test/v">123456</a></p>', '--a--',
                '--m', 'Content-Type: text/plain; name="a.txt"', 'Content-Disposition: attachment', '', 'one',
                '--m', 'Content-Type: text/plain; name="=?utf-8?Q?b=C3=A9.txt?="', 'Content-Disposition: attachment', '', 'two', '--m--', ''
            ].join('\r\n'));
            expect(isSmallMessage(raw)).to.be.true();
        });

        it(`sends a message with more than ${SMALL_MAX_HEADER_LINES} header lines to a worker`, () => {
            expect(isSmallMessage(withHeaderLines(SMALL_MAX_HEADER_LINES))).to.be.true();
            expect(isSmallMessage(withHeaderLines(SMALL_MAX_HEADER_LINES + 1))).to.be.false();
        });

        it(`sends a message with more than ${SMALL_MAX_HEADER_ADDRESSES} @ in its header section to a worker, and counts none in its body`, () => {
            expect(isSmallMessage(withAddresses(SMALL_MAX_HEADER_ADDRESSES))).to.be.true();
            expect(isSmallMessage(withAddresses(SMALL_MAX_HEADER_ADDRESSES + 1))).to.be.false();
            expect(isSmallMessage(Buffer.from(`${HEAD}\r\n${'a@x.test '.repeat(SMALL_MAX_HEADER_ADDRESSES * 2)}\r\n`))).to.be.true();
        });

        it(`sends a message with more than ${SMALL_MAX_ENCODED_WORDS} encoded words to a worker`, () => {
            expect(isSmallMessage(withEncodedWords(SMALL_MAX_ENCODED_WORDS))).to.be.true();
            expect(isSmallMessage(withEncodedWords(SMALL_MAX_ENCODED_WORDS + 1))).to.be.false();
        });

        it(`sends a message with more than ${SMALL_MAX_PUNYCODE_LABELS} xn-- labels (either case) to a worker`, () => {
            expect(isSmallMessage(withPunycode(SMALL_MAX_PUNYCODE_LABELS))).to.be.true();
            expect(isSmallMessage(withPunycode(SMALL_MAX_PUNYCODE_LABELS + 1))).to.be.false();
        });

        it(`sends a message with more than ${SMALL_MAX_BOUNDARY_LINES} boundary lines (parts, nesting) to a worker`, () => {
            expect(isSmallMessage(withParts(SMALL_MAX_BOUNDARY_LINES - 1))).to.be.true();
            expect(isSmallMessage(withParts(SMALL_MAX_BOUNDARY_LINES))).to.be.false();
        });

        it('never takes a hostile message: the address shapes (small ones too) and every costly adversarial case', () => {
            expect(isSmallMessage(punycodeMessage())).to.be.false();
            expect(isSmallMessage(nestedGroupsMessage())).to.be.false();
            // Within the size: the shapes are what sends them away.
            expect(isSmallMessage(Buffer.from(`To: ${Array.from({ length: 200 }, () => `r@${hostileLabel(20)}`).join(', ')}\r\n\r\nx\r\n`))).to.be.false();
            expect(isSmallMessage(nestedGroupsMessage(100))).to.be.false();
            const costly = ['header-lines-10000', 'mime-nesting-100', 'mime-parts-10000', 'html-nesting-5000', 'binary-garbage-64k', 'long-line-1mib'];
            const cases = adversarialMessages().filter((c) => costly.includes(c.name));
            expect(cases.map((c) => c.name).sort()).to.equal([...costly].sort());
            for (const { name, raw } of cases) {
                expect(isSmallMessage(raw), name).to.be.false();
            }
        });
    });
});
