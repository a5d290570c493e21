import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { defaultInboxFromAddress, isValidInbox, MAX_INBOX_LENGTH } from '../../../lib/ingest/recipients';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('recipients', () => {

    describe('defaultInboxFromAddress()', () => {

        it('maps Test+Run42@x to test-run42 (the DECISIONS example)', () => {
            expect(defaultInboxFromAddress('Test+Run42@x')).to.equal('test-run42');
        });

        it('lowercases the local part', () => {
            expect(defaultInboxFromAddress('UPPER.Case_Name-1@Example.COM')).to.equal('upper.case_name-1');
        });

        it('keeps only the local part', () => {
            expect(defaultInboxFromAddress('inbox@sub.example.com')).to.equal('inbox');
        });

        it('unquotes an RFC 5322 quoted local part before mapping it', () => {
            expect(defaultInboxFromAddress('"john doe"@example.com')).to.equal('john-doe');
        });

        it('unescapes a quoted pair inside a quoted local part', () => {
            expect(defaultInboxFromAddress('"a\\"b"@example.com')).to.equal('a-b');
        });

        it('splits at the last @ (an @ inside a quoted local part)', () => {
            expect(defaultInboxFromAddress('"a@b"@example.com')).to.equal('a-b');
        });

        it('removes the angle brackets of an envelope address', () => {
            expect(defaultInboxFromAddress('<Inbox@example.com>')).to.equal('inbox');
        });

        it('cuts a 100-character local part to its first 64 characters', () => {
            const local = 'abcdefghij'.repeat(10);
            const inbox = defaultInboxFromAddress(`${local}@example.com`);
            expect(inbox).to.equal(local.slice(0, 64));
            expect(inbox!.length).to.equal(MAX_INBOX_LENGTH);
        });

        it('replaces each non-ASCII character by one hyphen', () => {
            expect(defaultInboxFromAddress('jürgen@example.com')).to.equal('j-rgen');
            expect(defaultInboxFromAddress('東京@example.com')).to.equal('--');
            // An astral character (two UTF-16 units) is still one character.
            expect(defaultInboxFromAddress('a🎉b@example.com')).to.equal('a-b');
        });

        it('returns null for an empty address', () => {
            expect(defaultInboxFromAddress('')).to.be.null();
            expect(defaultInboxFromAddress('   ')).to.be.null();
        });

        it('returns null for an empty local part', () => {
            expect(defaultInboxFromAddress('@example.com')).to.be.null();
            expect(defaultInboxFromAddress('<>')).to.be.null();
        });

        it('always yields a valid inbox or null', () => {
            const samples = ['Test+Run42@x', '"john doe"@x', 'x'.repeat(300) + '@x', 'ü@x', '...@x', '-@x', 'a b@x', '\u0000@x'];
            for (const address of samples) {
                const inbox = defaultInboxFromAddress(address);
                expect(inbox === null || isValidInbox(inbox), address).to.be.true();
            }
        });
    });

    describe('isValidInbox()', () => {

        it('accepts lowercase letters, digits, dot, underscore and hyphen', () => {
            expect(isValidInbox('a.b_c-9')).to.be.true();
        });

        it('rejects uppercase, other characters, empty and over 64 characters', () => {
            expect(isValidInbox('Abc')).to.be.false();
            expect(isValidInbox('a+b')).to.be.false();
            expect(isValidInbox('')).to.be.false();
            expect(isValidInbox('a'.repeat(65))).to.be.false();
            expect(isValidInbox('a'.repeat(64))).to.be.true();
        });
    });
});
