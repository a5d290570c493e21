import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { attachmentFilename, extensionFor, MAX_ATTACHMENT_NAME_BYTES, safeAttachmentName } from '../../../lib/mime/attachment-name';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

interface NameCase {
    title: string;
    filename: string | undefined;
    contentType: string;
    expected: string;
}

// One row per rule of the safe file name (docs/design.md, "The email object"); each runs as its own test.
const cases: NameCase[] = [
    { title: 'keeps an ordinary name', filename: 'report.pdf', contentType: 'application/pdf', expected: 'report.pdf' },
    { title: 'keeps spaces and unicode', filename: 'Grüße à vous 東京.pdf', contentType: 'application/pdf', expected: 'Grüße à vous 東京.pdf' },
    { title: 'replaces slashes of a traversal and drops the leading dots', filename: '../../etc/passwd', contentType: 'text/plain', expected: '_.._etc_passwd' },
    { title: 'replaces a backslash (Windows path)', filename: 'C:\\evil.exe', contentType: 'application/octet-stream', expected: 'C:_evil.exe' },
    { title: 'replaces backslash traversal', filename: '..\\..\\windows\\win.ini', contentType: 'text/plain', expected: '_.._windows_win.ini' },
    { title: 'replaces the right-to-left override', filename: 'invoice\u202efdp.exe', contentType: 'application/octet-stream', expected: 'invoice_fdp.exe' },
    { title: 'replaces the other bidi controls', filename: 'a\u200eb\u200fc\u061cd\u202ae\u2066f\u2069g', contentType: 'text/plain', expected: 'a_b_c_d_e_f_g' },
    { title: 'replaces NUL', filename: 'evil\u0000.txt', contentType: 'text/plain', expected: 'evil_.txt' },
    { title: 'replaces CR and LF', filename: 'a\r\nContent-Type: text/html.txt', contentType: 'text/plain', expected: 'a__Content-Type: text_html.txt' },
    { title: 'replaces DEL and C1 controls', filename: 'a\u007fb\u0085c\u009fd', contentType: 'text/plain', expected: 'a_b_c_d' },
    { title: 'replaces line and paragraph separators', filename: 'a\u2028b\u2029c', contentType: 'text/plain', expected: 'a_b_c' },
    { title: 'replaces a lone surrogate', filename: 'a\ud800b.txt', contentType: 'text/plain', expected: 'a_b.txt' },
    { title: 'keeps a surrogate pair (emoji)', filename: '🎉.png', contentType: 'image/png', expected: '🎉.png' },
    { title: 'drops the leading dot of a hidden file', filename: '.htaccess', contentType: 'text/plain', expected: 'htaccess' },
    { title: 'drops leading whitespace and dots together', filename: ' . .bashrc', contentType: 'text/plain', expected: 'bashrc' },
    { title: 'drops trailing whitespace', filename: 'name.txt   ', contentType: 'text/plain', expected: 'name.txt' },
    { title: 'falls back when the name is only dots', filename: '..', contentType: 'application/pdf', expected: 'attachment.pdf' },
    { title: 'falls back when the name is empty', filename: '', contentType: 'image/png', expected: 'attachment.png' },
    { title: 'falls back when there is no name', filename: undefined, contentType: 'image/jpeg', expected: 'attachment.jpg' },
    { title: 'uses .gif for image/gif', filename: undefined, contentType: 'image/gif', expected: 'attachment.gif' },
    { title: 'uses .txt for text/plain', filename: undefined, contentType: 'text/plain', expected: 'attachment.txt' },
    { title: 'uses .html for text/html', filename: undefined, contentType: 'text/html', expected: 'attachment.html' },
    { title: 'uses .csv for text/csv', filename: undefined, contentType: 'text/csv', expected: 'attachment.csv' },
    { title: 'uses .json for application/json', filename: undefined, contentType: 'application/json', expected: 'attachment.json' },
    { title: 'uses .zip for application/zip', filename: undefined, contentType: 'application/zip', expected: 'attachment.zip' },
    { title: 'uses .ics for text/calendar', filename: undefined, contentType: 'text/calendar', expected: 'attachment.ics' },
    { title: 'uses .eml for message/rfc822', filename: undefined, contentType: 'message/rfc822', expected: 'attachment.eml' },
    { title: 'ignores media type parameters and case', filename: undefined, contentType: 'Application/PDF; name=x', expected: 'attachment.pdf' },
    { title: 'uses .bin for an unknown media type', filename: undefined, contentType: 'application/x-unknown', expected: 'attachment.bin' },
    { title: 'uses .bin for a malformed media type', filename: undefined, contentType: '', expected: 'attachment.bin' },
    { title: 'falls back when the name is only dots and spaces', filename: '...   ', contentType: 'text/csv', expected: 'attachment.csv' }
];

describe('attachment-name', () => {

    describe('safeAttachmentName()', () => {

        for (const { title, filename, contentType, expected } of cases) {
            it(title, () => {
                expect(safeAttachmentName(filename, contentType)).to.equal(expected);
            });
        }

        it('cuts an ASCII name to 200 bytes and keeps its extension', () => {
            const name = safeAttachmentName('a'.repeat(300) + '.pdf', 'application/pdf');
            expect(Buffer.byteLength(name)).to.equal(MAX_ATTACHMENT_NAME_BYTES);
            expect(name).to.equal('a'.repeat(196) + '.pdf');
        });

        it('cuts a multi-byte name without splitting a character', () => {
            // 'ü' is 2 bytes, '東' 3 bytes, '🎉' 4 bytes: no cut point lands on a boundary by chance.
            for (const ch of ['ü', '東', '🎉']) {
                const name = safeAttachmentName(ch.repeat(150) + '.txt', 'text/plain');
                const bytes = Buffer.byteLength(name);
                expect(bytes).to.be.at.most(MAX_ATTACHMENT_NAME_BYTES);
                expect(bytes).to.be.above(MAX_ATTACHMENT_NAME_BYTES - 4);
                expect(name.endsWith('.txt')).to.be.true();
                expect(Buffer.from(name, 'utf8').toString('utf8')).to.equal(name);
                expect(name).to.not.contain('\ufffd');
                expect(name.slice(0, -4)).to.equal(ch.repeat(name.slice(0, -4).length / ch.length));
            }
        });

        it('cuts a long name without an extension to 200 bytes', () => {
            const name = safeAttachmentName('é'.repeat(500), 'text/plain');
            expect(name).to.equal('é'.repeat(100));
        });

        it('bounds the work on a huge name and keeps its extension', () => {
            const name = safeAttachmentName('x'.repeat(1_000_000) + '.zip', 'application/zip');
            expect(name).to.equal('x'.repeat(196) + '.zip');
        });

        it('never yields a name with a separator, control character or leading dot', () => {
            const hostile = ['/', '\\', '\u0000', '\r', '\n', '\u202e', '.', ' ', 'a'];
            for (let i = 0; i < 2000; i++) {
                const length = 1 + (i % 12);
                let input = '';
                for (let j = 0; j < length; j++) {
                    input += hostile[(i * 7 + j * 13 + (i >> 3)) % hostile.length];
                }

                const name = safeAttachmentName(input, 'text/plain');
                expect(name, JSON.stringify(input)).to.not.match(/[/\\\u0000-\u001f\u202e]/);
                expect(name.startsWith('.'), JSON.stringify(input)).to.be.false();
                expect(name.length).to.be.above(0);
            }
        });
    });

    describe('attachmentFilename()', () => {

        it('prefixes the zero-based index and a hyphen', () => {
            expect(attachmentFilename(0, 'report.pdf', 'application/pdf')).to.equal('0-report.pdf');
            expect(attachmentFilename(12, undefined, 'image/png')).to.equal('12-attachment.png');
        });

        it('makes two parts with the same name distinct', () => {
            expect(attachmentFilename(1, 'data.csv', 'text/csv')).to.not.equal(attachmentFilename(2, 'data.csv', 'text/csv'));
        });
    });

    describe('extensionFor()', () => {

        it('maps known media types and defaults to bin', () => {
            expect(extensionFor('application/pdf')).to.equal('pdf');
            expect(extensionFor('image/jpeg')).to.equal('jpg');
            expect(extensionFor('video/mp4')).to.equal('bin');
            expect(extensionFor('constructor')).to.equal('bin');
            expect(extensionFor('__proto__')).to.equal('bin');
        });
    });
});
