import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { cleanDraft, cleanText, containsPattern } from '../../../../lib/record-store/sql/clean-text';
import type { EmailDraft } from '../../../../lib/types';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('clean-text', () => {

    describe('cleanText()', () => {

        it('leaves ordinary text, astral characters and paired surrogates unchanged', () => {
            for (const text of ['', 'hello', 'Grüße 日本', '😀 emoji', '\uD83D\uDE00']) {
                expect(cleanText(text)).to.equal(text);
            }
        });

        it('drops NUL characters', () => {
            expect(cleanText('a\u0000b\u0000')).to.equal('ab');
        });

        it('replaces a lone high or low surrogate with U+FFFD', () => {
            expect(cleanText('a\uD800b')).to.equal('a\uFFFDb');
            expect(cleanText('a\uDC00b')).to.equal('a\uFFFDb');
            expect(cleanText('\uD83D')).to.equal('\uFFFD');
            expect(cleanText('\uDE00\uD83D')).to.equal('\uFFFD\uFFFD');
        });

        it('keeps a pair and replaces the stray half next to it', () => {
            expect(cleanText('\uD83D\uD83D\uDE00')).to.equal('\uFFFD\uD83D\uDE00');
            expect(cleanText('\uD83D\uDE00\uDE00')).to.equal('\uD83D\uDE00\uFFFD');
        });

        it('gives text that encodes to UTF-8 and back unchanged', () => {
            const cleaned = cleanText('x\u0000\uD800y\uDFFF');
            expect(Buffer.from(cleaned, 'utf8').toString('utf8')).to.equal(cleaned);
        });
    });

    describe('cleanDraft()', () => {

        it('cleans every text field and keeps numbers and blob keys as given', () => {
            const dirty: EmailDraft = {
                sourceId: '<m\u0000@x>',
                inbox: 'in\uD800box',
                sender: 's\u0000',
                senderName: 'N\u0000ame',
                recipient: 'r\uDC00',
                subject: 'su\u0000b',
                body: 'b\uD800',
                htmlBody: 'h\u0000',
                receivedAt: 123,
                rawKey: 'raw\u0000key',
                rawSize: 45,
                rawSha256: 'a'.repeat(64),
                attachments: [{ filename: 'f\u0000.txt', contentType: 'text/\uD800plain', size: 6, blobKey: 'blob\u0000', contentId: 'c\u0000id' }],
                links: [{ href: 'https://x.test/\u0000a', text: 't\uDC00' }],
                codes: ['1234'],
                tags: ['ok', 'Not OK', 'ok', 'b'],
                searchText: 'b\uD800'
            };
            expect(cleanDraft(dirty)).to.equal({
                sourceId: '<m@x>',
                inbox: 'in\uFFFDbox',
                sender: 's',
                senderName: 'Name',
                recipient: 'r\uFFFD',
                subject: 'sub',
                body: 'b\uFFFD',
                htmlBody: 'h',
                receivedAt: 123,
                rawKey: 'raw\u0000key',
                rawSize: 45,
                rawSha256: 'a'.repeat(64),
                attachments: [{ filename: 'f.txt', contentType: 'text/\uFFFDplain', size: 6, blobKey: 'blob\u0000', contentId: 'cid' }],
                links: [{ href: 'https://x.test/a', text: 't\uFFFD' }],
                codes: ['1234'],
                tags: ['ok', 'b'],
                searchText: 'b\uFFFD'
            });
            expect(dirty.sourceId).to.equal('<m\u0000@x>');
        });

        it('keeps the links and codes given, never working them out', () => {
            const draft: EmailDraft = {
                sourceId: '<m@x>', inbox: 'i', sender: '', senderName: '', recipient: 'i@x', subject: 'Code 482913', body: 'https://x.test/go',
                htmlBody: '', receivedAt: 1, rawKey: 'k', rawSize: 1, rawSha256: 'a'.repeat(64), attachments: [], links: [], codes: [], tags: [], searchText: ''
            };
            expect(cleanDraft(draft)).to.include({ links: [], codes: [] });
        });
    });

    describe('containsPattern()', () => {

        it('wraps the lowercased text in %', () => {
            expect(containsPattern('Hello')).to.equal('%hello%');
        });

        it('escapes %, _ and backslash so they match literally', () => {
            expect(containsPattern('50%_off\\now')).to.equal('%50\\%\\_off\\\\now%');
        });

        it('cleans the text first, as stored text was', () => {
            expect(containsPattern('A\u0000B\uD800')).to.equal('%ab\uFFFD%');
        });
    });
});
