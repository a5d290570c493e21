import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs';
import * as Path from 'node:path';
import { defaultInboxFromAddress, isValidInbox, MAX_INBOX_LENGTH } from '../../../lib/identity/recipients';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('recipients', () => {

    describe('defaultInboxFromAddress()', () => {

        it('maps Test+Run42@x to test-run42 (the example of the documented rule)', () => {
            // docs/design.md, "Identity and inboxes".
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

    describe('addresses that share an inbox', () => {

        // Each address, by code point where the glyph could hide it, and the inbox it maps to.
        const SHARED: Array<[string, string]> = [
            ['a+b@x', 'a-b'],
            ['a%b@x', 'a-b'],
            ['a-b@x', 'a-b'],
            ['"a+b"@x', 'a-b'],
            ['A-B@x', 'a-b'],
            ['a-b@y.test', 'a-b'],
            ['j\u00f6rg@x', 'j-rg'],
            ['j\u00fcrg@x', 'j-rg'],
            ['J\u00d6RG@x', 'j-rg'],
            ['jo\u0308rg@x', 'jo-rg'],
            ['\u212a@x', 'k'],
            ['k@x', 'k'],
            ['K@x', 'k'],
            ['\u212aate@x', 'kate'],
            ['\u0130nbox@x', 'i-nbox']
        ];

        for (const [address, inbox] of SHARED) {
            it(`maps ${JSON.stringify(address)} to ${inbox}`, () => {
                expect(defaultInboxFromAddress(address)).to.equal(inbox);
            });
        }

        it('lowers only two non-ASCII characters to an ASCII letter: the Kelvin sign and capital I with dot', () => {
            const toAscii: string[] = [];
            for (let code = 0x80; code <= 0x10ffff; code++) {
                if (code >= 0xd800 && code <= 0xdfff) {
                    continue;
                }

                // A local part of Unicode space alone is trimmed away: no inbox (null).
                const inbox = defaultInboxFromAddress(`${String.fromCodePoint(code)}@x`);
                if (inbox !== null && inbox !== '-') {
                    toAscii.push(`U+${code.toString(16).toUpperCase()} ${inbox}`);
                }
            }

            expect(toAscii).to.equal(['U+130 i-', 'U+212A k']);
        });

        it("matches docs/design.md's table, row by row", () => {
            const design = Fs.readFileSync(Path.join(__dirname, '..', '..', '..', 'docs', 'design.md'), 'utf8');
            const section = design.split('### Addresses that share an inbox')[1]!.split(/\n#/)[0]!;
            const rows = section.split('\n').filter((line) => line.startsWith('| `'));
            const documented: Array<[string, string]> = [];
            for (const row of rows) {
                const [addresses, inbox] = row.split(' | ');
                const spans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
                for (const address of spans(addresses!)) {
                    documented.push([address, spans(inbox!)[0]!]);
                }
            }

            for (const [address, inbox] of documented) {
                expect(defaultInboxFromAddress(address), `docs/design.md: ${JSON.stringify(address)}`).to.equal(inbox);
            }

            // The doc names each case of the table above (the glyphs, not look-alikes).
            const names = documented.map(([address]) => address);
            for (const address of ['a+b@x', 'a%b@x', 'a-b@x', 'j\u00f6rg@x', 'j\u00fcrg@x', 'jo\u0308rg@x', '\u212aate@x', 'kate@x']) {
                expect(names, address).to.include(address);
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
