import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { deriveMessageId, firstChoiceId, generateMessageId, isAddressableId, MAX_ADDRESSABLE_ID_LENGTH, sha256Hex } from '../../lib/ids';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('ids', () => {

    describe('isAddressableId()', () => {

        // What WHATWG URL parsing (fetch), curl and hapi do to the id as one encoded path segment.
        const table: Array<[string, boolean, string]> = [
            ['.', false, 'a dot segment: /v1/emails/./raw becomes /v1/emails/raw'],
            ['..', false, 'a dot segment: /v1/emails/../raw becomes /v1/raw'],
            ['./x', true, 'encoded as .%2Fx, one segment'],
            ['../x', true, 'encoded as ..%2Fx, one segment'],
            ['x/..', true, 'encoded as x%2F.., one segment'],
            ['a/b', true, 'encoded as a%2Fb'],
            ['%2e', true, 'encoded as %252e, not a dot segment'],
            ['%2e%2e', true, 'encoded as %252e%252e'],
            ['.%2e', true, 'encoded as .%252e'],
            ['...', true, 'three dots are no dot segment'],
            [' . ', true, 'spaces are encoded'],
            ['a b', true, 'encoded as a%20b'],
            ['a\tb', true, 'a tab is encoded, not stripped'],
            ['\uFF0E', true, 'a fullwidth full stop is not a dot'],
            ['x'.repeat(MAX_ADDRESSABLE_ID_LENGTH), true, 'at the length limit'],
            ['x'.repeat(MAX_ADDRESSABLE_ID_LENGTH + 1), false, 'over the length limit'],
            ['/'.repeat(Math.floor(MAX_ADDRESSABLE_ID_LENGTH / 3)), true, 'encoded (3 characters each) at the limit'],
            ['/'.repeat(Math.floor(MAX_ADDRESSABLE_ID_LENGTH / 3) + 1), false, 'encoded (3 characters each) over the limit'],
            ['日'.repeat(Math.floor(MAX_ADDRESSABLE_ID_LENGTH / 9)), true, 'UTF-8 encoded (9 characters each) at the limit'],
            ['日'.repeat(Math.floor(MAX_ADDRESSABLE_ID_LENGTH / 9) + 1), false, 'UTF-8 encoded (9 characters each) over the limit']
        ];

        for (const [id, addressable, why] of table) {
            it(`${addressable ? 'keeps' : 'refuses'} ${JSON.stringify(id.length > 20 ? `${id.slice(0, 8)}…(${id.length})` : id)}: ${why}`, () => {
                expect(isAddressableId(id)).to.equal(addressable);
                expect(encodeURIComponent(id).length <= MAX_ADDRESSABLE_ID_LENGTH && id !== '.' && id !== '..').to.equal(addressable);
            });
        }

        it('measures a lone surrogate as encodeURIComponent would encode U+FFFD', () => {
            const id = `${'a'.repeat(MAX_ADDRESSABLE_ID_LENGTH - 9)}\uD800`;
            expect(isAddressableId(id)).to.be.true();
            expect(isAddressableId(`${id}a`)).to.be.false();
        });
    });

    describe('firstChoiceId()', () => {

        it('keeps an addressable Message-ID for a single-inbox delivery', () => {
            expect(firstChoiceId('./x', 'inbox', true)).to.equal('./x');
            expect(firstChoiceId('a b@x', 'inbox', true)).to.equal('a b@x');
        });

        it('derives <id>~<inbox> for a dot segment, as for a collision', () => {
            expect(firstChoiceId('.', 'inbox', true)).to.equal('.~inbox');
            expect(firstChoiceId('..', 'inbox', true)).to.equal('..~inbox');
            expect(firstChoiceId('.', 'inbox', false)).to.equal(deriveMessageId('.', 'inbox'));
        });

        it('replaces an overlong id by its SHA-256 hex @inbox-capture', () => {
            const long = '€'.repeat(1500);
            expect(firstChoiceId(long, 'inbox', true)).to.equal(`${sha256Hex(long)}@inbox-capture`);
            expect(firstChoiceId(long, 'inbox', false)).to.equal(`${sha256Hex(long)}@inbox-capture~inbox`);
        });

        it('gives only addressable ids, deterministically', () => {
            for (const id of ['.', '..', 'x'.repeat(10_000), 'x'.repeat(20_000), 'ok@x', generateMessageId()]) {
                for (const single of [true, false]) {
                    const chosen = firstChoiceId(id, 'some-inbox', single);
                    expect(isAddressableId(chosen)).to.be.true();
                    expect(firstChoiceId(id, 'some-inbox', single)).to.equal(chosen);
                }
            }
        });
    });
});
