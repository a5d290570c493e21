import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { decodeInboxCursor, encodeInboxCursor } from '../../../lib/cursor/inbox-cursor';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('inbox-cursor', () => {

    describe('encodeInboxCursor()', () => {
        it('writes `<lastReceivedAt>#<name>`, the email list\'s form', () => {
            expect(encodeInboxCursor({ lastReceivedAt: 1714564800000, name: 'signup-1' })).to.equal('1714564800000#signup-1');
        });
    });

    describe('decodeInboxCursor()', () => {
        it('reads back what encodeInboxCursor() wrote', () => {
            for (const position of [{ lastReceivedAt: 0, name: 'a' }, { lastReceivedAt: 1714564800000, name: 'x.y_z-9' }, { lastReceivedAt: 1, name: 'a'.repeat(64) }]) {
                expect(decodeInboxCursor(encodeInboxCursor(position))).to.equal(position);
            }
        });

        const BAD: Array<[string, string]> = [
            ['no #', '123'],
            ['no time', '#abc'],
            ['a time that is no number', 'abc#box'],
            ['a negative time', '-1#box'],
            ['no name', '123#'],
            ['an uppercase name', '123#Box'],
            ['a name with @ (an email cursor)', '123#a@example.com'],
            ['a name of 65 characters', `123#${'a'.repeat(65)}`],
            ['a time beyond 2^53', '99999999999999999#box']
        ];
        for (const [what, cursor] of BAD) {
            it(`answers null for ${what}`, () => {
                expect(decodeInboxCursor(cursor)).to.be.null();
            });
        }
    });
});
