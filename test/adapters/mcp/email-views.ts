import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { boundedHeaders, describeDetail, MAX_HEADER_CHARS, MAX_TEXT_CHARS, readableText, toDetail, toSummary } from '../../../adapters/mcp/email-views';
import type { MailEmail } from '../../../adapters/mcp/mail-access';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const email = (overrides: Partial<MailEmail> = {}): MailEmail => ({
    messageId: 'a@b',
    seen: false,
    size: 1,
    inbox: 'box',
    sender: 'app@example.test',
    senderName: '',
    recipient: 'box@example.test',
    subject: 'Your code',
    body: 'Code 123456',
    htmlBody: '',
    receivedAt: 0,
    links: [{ href: 'https://x.test/v', text: 'verify' }],
    codes: ['123456'],
    attachments: [{ filename: '0-a.txt', contentType: 'text/plain', size: 3 }],
    tags: [],
    ...overrides
});

describe('email views', () => {

    describe('readableText()', () => {

        it('is the text body when there is one', () => {
            expect(readableText({ body: 'plain', htmlBody: '<p>html</p>' })).to.equal({ text: 'plain', textTruncated: false });
        });

        it('is the HTML as text when the text body is empty or only white space', () => {
            for (const body of ['', ' \r\n ']) {
                const { text } = readableText({ body, htmlBody: '<p>Hello <b>you</b></p><script>x()</script>' });
                expect(text).to.contain('Hello you');
                expect(text).to.not.contain('<');
                expect(text).to.not.contain('x()');
            }
        });

        it('is cut at 100,000 characters with textTruncated, never inside a character', () => {
            const long = readableText({ body: 'a'.repeat(MAX_TEXT_CHARS + 1), htmlBody: '' });
            expect(long.text).to.have.length(MAX_TEXT_CHARS);
            expect(long.textTruncated).to.be.true();

            // An emoji (two UTF-16 units) straddling the cut is left out whole.
            const emoji = readableText({ body: `${'a'.repeat(MAX_TEXT_CHARS - 1)}😀tail`, htmlBody: '' });
            expect(emoji.text).to.equal('a'.repeat(MAX_TEXT_CHARS - 1));
            expect(emoji.textTruncated).to.be.true();

            expect(readableText({ body: 'a'.repeat(MAX_TEXT_CHARS), htmlBody: '' }).textTruncated).to.be.false();
        });
    });

    describe('toSummary()', () => {

        it('counts attachments and reads absent tags as none', () => {
            expect(toSummary(email())).to.equal({
                messageId: 'a@b', sender: 'app@example.test', recipient: 'box@example.test', subject: 'Your code', receivedAt: 0,
                codes: ['123456'], links: [{ href: 'https://x.test/v', text: 'verify' }], tags: [], attachmentCount: 1
            });
            expect(toSummary(email({ tags: ['signup'] })).tags).to.equal(['signup']);
        });
    });

    describe('boundedHeaders()', () => {

        it('keeps every field up to 100,000 characters of names and values', () => {
            const fields = [{ name: 'Subject', value: 'a'.repeat(MAX_HEADER_CHARS - 'Subject'.length) }];
            expect(boundedHeaders(fields)).to.equal({ headers: fields, headersTruncated: false });
            expect(toDetail(email(), fields).headersTruncated).to.be.false();
        });

        it('cuts the field that passes the limit, never inside a character, and leaves out the rest', () => {
            // A section of 1 MiB (a hostile mail) would be 1 MiB of JSON for each reader.
            const many = Array.from({ length: 100 }, (_, i) => ({ name: `X-Field-${i}`, value: '\u{1F600}'.repeat(6_000) }));
            const { headers, headersTruncated } = boundedHeaders(many);
            expect(headersTruncated).to.be.true();
            expect(headers.reduce((n, h) => n + h.name.length + h.value.length, 0)).to.be.at.most(MAX_HEADER_CHARS);
            expect(headers.reduce((n, h) => n + h.name.length + h.value.length, 0)).to.be.above(MAX_HEADER_CHARS - 2);
            expect(headers.slice(0, -1)).to.equal(many.slice(0, headers.length - 1));
            const last = headers.at(-1)!;
            expect(last.name).to.equal(`X-Field-${headers.length - 1}`);
            expect(last.value).to.not.match(/[\uD800-\uDBFF]$/);
            expect(toDetail(email(), many).headersTruncated).to.be.true();
        });
    });

    describe('describeDetail()', () => {

        it('shows the headers an agent needs, codes, links, attachments, then the text', () => {
            const text = describeDetail(toDetail(email(), [{ name: 'Subject', value: 'Your code' }]));
            expect(text).to.contain('from: app@example.test\n');
            expect(text).to.contain('codes: 123456\n');
            expect(text).to.contain('link: https://x.test/v (verify)\n');
            expect(text).to.contain('attachment: 0-a.txt (text/plain, 3 bytes)\n');
            expect(text).to.endWith('\n\nCode 123456');
        });

        it('says when the text was cut', () => {
            expect(describeDetail(toDetail(email({ body: 'a'.repeat(MAX_TEXT_CHARS + 5) }), []))).to.endWith(`[text cut at ${MAX_TEXT_CHARS} characters]`);
        });
    });
});
