import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { bareMessageId, parseMessage } from '../../../lib/mime/parse';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const fixture = (name: string): Buffer => readFileSync(join(__dirname, '..', '..', 'fixtures', 'eml', name));
const crlf = (text: string): Buffer => Buffer.from(text.replace(/\r?\n/g, '\r\n'));

/** 1x1 PNG of the attachments fixture. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

describe('parse', () => {

    describe('parseMessage()', () => {

        it('reads the header fields and the text of a plain message', async () => {
            const parsed = await parseMessage(fixture('plain-text.eml'));
            expect(parsed.messageId).to.equal('plain-1@example.com');
            expect(parsed.from).to.equal('sender@example.com');
            expect(parsed.to).to.equal(['inbox@example.com']);
            expect(parsed.cc).to.equal([]);
            expect(parsed.subject).to.equal('Plain text');
            expect(parsed.text).to.equal('Hello,\nthis is the plain text body.\n');
            expect(parsed.html).to.equal('');
            expect(parsed.textFromHtml).to.equal('');
            expect(parsed.attachments).to.equal([]);
            expect(parsed.error).to.not.exist();
        });

        it('drops C0 control characters but TAB, LF and CR from every text field, the text derived from HTML included', async () => {
            const controls = '\u0001\u0002\u0008\u000b\u000c\u001b\u001f';
            const plain = await parseMessage(Buffer.from(`From: =?utf-8?Q?A=01n=1Bn?= <a${controls}@x.test>\r\nTo: b${controls}@x.test\r\nMessage-ID: <m${controls}@x.test>\r\nSubject: =?utf-8?Q?s=01=1Bt?=\r\n\r\ntab\there ${controls}${controls}\r\nend\r\n`, 'latin1'));
            expect([plain.from, plain.fromName, plain.to, plain.subject, plain.text]).to.equal(['a@x.test', 'Ann', ['b@x.test'], 'st', 'tab\there \nend\n']);
            // The Message-ID is the email's identity: kept as sent (and addressable).
            expect(plain.messageId).to.equal(`m${controls}@x.test`);
            const html = await parseMessage(Buffer.from(`To: b@x.test\r\nContent-Type: text/html\r\n\r\n<p>a${controls}b &#1;&#x1b;c</p>\r\n`, 'latin1'));
            expect(html.html).to.equal('<p>ab &#1;&#x1b;c</p>\n');
            expect(html.textFromHtml).to.equal('ab c');
        });

        it('drops control characters from an inline image\'s Content-ID as from the HTML\'s cid: link, so the two still match', async () => {
            const raw = [
                'To: b@x.test',
                'Content-Type: multipart/related; boundary="b"',
                '',
                '--b',
                'Content-Type: text/html',
                '',
                '<img src="cid:logo\u0001\u001b@x.test">',
                '--b',
                'Content-Type: image/png',
                'Content-ID: <logo\u0001\u001b@x.test>',
                'Content-Transfer-Encoding: base64',
                '',
                'iVBORw0KGgo=',
                '--b--',
                ''
            ].join('\r\n');
            const parsed = await parseMessage(Buffer.from(raw, 'latin1'));
            expect(parsed.attachments.map((a) => a.contentId)).to.equal(['logo@x.test']);
            expect(parsed.html).to.contain('cid:logo@x.test');
        });

        it('takes both parts of multipart/alternative, and the HTML\'s text for search', async () => {
            const parsed = await parseMessage(fixture('alternative.eml'));
            expect(parsed.text).to.equal('Plain version');
            expect(parsed.html).to.equal('<html><body><p>HTML version</p></body></html>');
            expect(parsed.textFromHtml).to.equal('HTML version');
        });

        it('reads the From display name, decoded, and the tags of every X-Tags field', async () => {
            const raw = Buffer.from([
                'From: "=?utf-8?q?M=C3=BCller?=, Anna" <anna@example.com>, bob@example.com',
                'To: inbox@example.com',
                'X-Tags: Welcome, beta,bad tag',
                'x-tags: ONBOARDING',
                'Subject: hi',
                '',
                'hi',
                ''
            ].join('\r\n'));
            const parsed = await parseMessage(raw);
            expect(parsed.from).to.equal('anna@example.com');
            expect(parsed.fromName).to.equal('Müller, Anna');
            expect(parsed.tags).to.equal(['welcome', 'beta', 'onboarding']);
        });

        it('has no display name and no tags when the message gives none', async () => {
            const parsed = await parseMessage(Buffer.from('From: a@example.com\r\nTo: b@example.com\r\n\r\nx\r\n'));
            expect(parsed.fromName).to.equal('');
            expect(parsed.tags).to.equal([]);
        });

        it('lists attachments in message order, the inline image included, with decoded contents', async () => {
            const parsed = await parseMessage(fixture('attachments.eml'));
            expect(parsed.attachments.map((a) => [a.filename, a.contentType, a.size, a.contentId])).to.equal([
                ['logo.png', 'image/png', PNG.length, 'logo@example.com'],
                ['report.pdf', 'application/pdf', 77, undefined],
                [undefined, 'application/octet-stream', 256, undefined]
            ]);
            expect(parsed.attachments[0].content.equals(PNG)).to.be.true();
            expect(parsed.attachments[1].content.toString('latin1').startsWith('%PDF-1.4')).to.be.true();
            const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
            expect(parsed.attachments[2].content.equals(bytes)).to.be.true();
        });

        it('keeps cid: references in the HTML as sent (no data: URIs)', async () => {
            const parsed = await parseMessage(fixture('attachments.eml'));
            expect(parsed.html).to.equal('<p>See the logo <img src="cid:logo@example.com"> and the report.</p>');
            expect(parsed.html).to.not.contain('data:');
        });

        it('decodes a UTF-8 subject, sender name and body', async () => {
            const parsed = await parseMessage(fixture('unicode.eml'));
            expect(parsed.subject).to.equal('Grüße aus Köln – 東京 🎉');
            expect(parsed.text).to.equal('Grüße, 東京, emoji 🎉 and a rocket 🚀.\n');
            expect(parsed.from).to.equal('juergen@example.com');
        });

        it('decodes RFC 2047 B and Q encoded words in the subject and file names', async () => {
            const parsed = await parseMessage(fixture('encoded-words.eml'));
            expect(parsed.subject).to.equal('Überweisung für März');
            expect(parsed.attachments.map((a) => a.filename)).to.equal(['Rechnung März.txt', 'Grüße à vous.pdf']);
        });

        it('decodes RFC 2231 file names, continuations included', async () => {
            const parsed = await parseMessage(fixture('rfc2231.eml'));
            expect(parsed.attachments.map((a) => a.filename)).to.equal(['€ rates 2025.csv', 'Sehr langer Dateiname für den Test.txt']);
            expect(parsed.attachments[0].content.toString()).to.equal('a,b\r\n1,2');
        });

        it('keeps the subject on one line when an encoded word smuggles in CR LF', async () => {
            const parsed = await parseMessage(crlf('To: a@example.com\nSubject: =?utf-8?Q?Hello=0D=0ABcc:_victim@evil.test?= and =?utf-8?Q?a=0Ab?=\n\nbody\n'));
            expect(parsed.subject).to.equal('Hello Bcc: victim@evil.test and a b');
            expect(parsed.cc).to.equal([]);
        });

        it('reports a missing Message-ID as undefined', async () => {
            const parsed = await parseMessage(fixture('no-message-id.eml'));
            expect(parsed.messageId).to.be.undefined();
        });

        it('keeps / + % # ? & = in a Message-ID and trims the space around it', async () => {
            const parsed = await parseMessage(fixture('message-id-special.eml'));
            expect(parsed.messageId).to.equal('a/b+c%d#e?f&g=h@example.com');
        });

        it('keeps spaces inside a Message-ID', async () => {
            const parsed = await parseMessage(fixture('message-id-space.eml'));
            expect(parsed.messageId).to.equal('with some spaces@example.com');
        });

        it('reads a raw UTF-8 Message-ID', async () => {
            const parsed = await parseMessage(fixture('message-id-unicode.eml'));
            expect(parsed.messageId).to.equal('ünïcødé-東京@exämple.com');
        });

        it('lists To and Cc addresses in order, groups flattened, quoted local part kept', async () => {
            const parsed = await parseMessage(fixture('recipients.eml'));
            expect(parsed.to).to.equal(['Alice+Tag@example.com', '"john doe"@example.com', 'carol@example.com', 'dave@example.com']);
            expect(parsed.cc).to.equal(['bob@example.com', 'alice+tag@another.example', 'UPPER@Example.com']);
        });

        it('collects the addresses of several To header lines', async () => {
            const parsed = await parseMessage(crlf('To: a@example.com\nTo: b@example.com, c@example.com\nSubject: x\n\nbody\n'));
            expect(parsed.to).to.equal(['a@example.com', 'b@example.com', 'c@example.com']);
        });

        it('takes the first address of the From header', async () => {
            const parsed = await parseMessage(crlf('From: "One" <one@example.com>, two@example.com\nTo: x@example.com\n\nbody\n'));
            expect(parsed.from).to.equal('one@example.com');
        });

        it('derives text from a message with only HTML, never from a message with a plain part', async () => {
            const parsed = await parseMessage(fixture('html-only.eml'));
            expect(parsed.text).to.equal('');
            expect(parsed.html).to.startWith('<html><head><title>Ignored title</title>');
            expect(parsed.textFromHtml).to.equal('Welcome\n\nYour code is 123456.\n\nOpen this link [https://example.com/verify?token=abc&x=1] to verify.\n\nFish & chips <3');
        });

        it('derives text when the only HTML part sits in multipart/mixed next to an attachment', async () => {
            const parsed = await parseMessage(fixture('html-with-attachment.eml'));
            expect(parsed.text).to.equal('');
            expect(parsed.html).to.equal('<div>Only <i>HTML</i> here</div>');
            expect(parsed.textFromHtml).to.equal('Only HTML here');
            expect(parsed.attachments.map((a) => a.filename)).to.equal(['a.pdf']);
        });

        it('reports a missing subject as ""', async () => {
            const parsed = await parseMessage(fixture('no-subject.eml'));
            expect(parsed.subject).to.equal('');
        });

        it('reports a missing From as undefined', async () => {
            const parsed = await parseMessage(fixture('no-from.eml'));
            expect(parsed.from).to.be.undefined();
        });

        it('hands hostile attachment names through untouched (attachment-name makes them safe)', async () => {
            const parsed = await parseMessage(fixture('hostile-names.eml'));
            expect(parsed.attachments.map((a) => a.filename)).to.equal([
                '../../etc/passwd',
                'C:\\evil.exe',
                'invoice\u202efdp.exe',
                'evil\u0000name\r\n.txt',
                '.htaccess'
            ]);
        });

        it('keeps two attachments with the same name apart', async () => {
            const parsed = await parseMessage(fixture('same-name.eml'));
            expect(parsed.attachments.map((a) => [a.filename, a.content.toString()])).to.equal([
                ['data.csv', 'first,file'],
                ['data.csv', 'second,file']
            ]);
        });

        it('reads HTML nested 5,000 elements deep (regression: html-to-text overflowed the stack)', async () => {
            const html = '<div>'.repeat(5000) + 'deep inside' + '</div>'.repeat(5000);
            const parsed = await parseMessage(crlf(`From: a@example.com\nTo: b@example.com\nContent-Type: text/html\n\n${html}\n`));
            expect(parsed.error).to.not.exist();
            expect(parsed.html).to.equal(html + '\n');
            expect(parsed.textFromHtml).to.equal('deep inside');
        });

        it('replaces a missing or malformed attachment media type by application/octet-stream', async () => {
            const parsed = await parseMessage(crlf([
                'To: a@example.com',
                'Content-Type: multipart/mixed; boundary="b"',
                '',
                '--b',
                'Content-Type: text/plain',
                '',
                'body',
                '--b',
                'Content-Type: bad type<script>; name="x.dat"',
                'Content-Disposition: attachment; filename="x.dat"',
                '',
                'data',
                '--b--',
                ''
            ].join('\n')));
            expect(parsed.attachments.map((a) => a.contentType)).to.equal(['application/octet-stream']);
        });

        it('resolves with empty fields for random bytes', async () => {
            const parsed = await parseMessage(randomBytes(64 * 1024));
            expect(parsed.messageId).to.be.undefined();
            expect(parsed.to).to.be.an.array();
            expect(parsed.text).to.be.a.string();
            expect(parsed.attachments).to.be.an.array();
        });

        it('resolves with empty fields for an empty message', async () => {
            const parsed = await parseMessage(Buffer.alloc(0));
            expect(parsed).to.include({ messageId: undefined, from: undefined, subject: '', text: '', html: '', textFromHtml: '' });
            expect(parsed.to).to.equal([]);
            expect(parsed.attachments).to.equal([]);
        });

        it('resolves with the error and empty fields when the header block is over 1 MiB', async () => {
            const parsed = await parseMessage(crlf(`X-Big: ${'a'.repeat(2 * 1024 * 1024)}\nTo: a@example.com\n\nbody\n`));
            expect(parsed.error).to.be.an.error();
            expect(parsed.to).to.equal([]);
            expect(parsed.text).to.equal('');
        });

        it('resolves with the error and keeps the headers when a message has over 1000 parts', async () => {
            let message = 'To: a@example.com\nSubject: many\nContent-Type: multipart/mixed; boundary="b"\n\n';
            for (let i = 0; i < 1100; i++) {
                message += `--b\nContent-Type: application/octet-stream\n\nx${i}\n`;
            }

            const parsed = await parseMessage(crlf(message + '--b--\n'));
            expect(parsed.error).to.be.an.error();
            expect(parsed.to).to.equal(['a@example.com']);
            expect(parsed.subject).to.equal('many');
        });

        it('reads a message cut off inside an attachment', async () => {
            const whole = fixture('attachments.eml');
            const parsed = await parseMessage(whole.subarray(0, whole.indexOf('--mixed--') - 100));
            expect(parsed.messageId).to.equal('att-1@example.com');
            expect(parsed.attachments.map((a) => a.filename)).to.equal(['logo.png', 'report.pdf', undefined]);
        });
    });

    describe('bareMessageId()', () => {

        it('trims and removes one pair of angle brackets', () => {
            expect(bareMessageId('  <a@b>  ')).to.equal('a@b');
            expect(bareMessageId('a@b')).to.equal('a@b');
            expect(bareMessageId('<<a@b>>')).to.equal('<a@b>');
        });

        it('returns undefined when nothing is left', () => {
            expect(bareMessageId('<>')).to.be.undefined();
            expect(bareMessageId('  ')).to.be.undefined();
        });
    });
});
