import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createHash } from 'node:crypto';
import { deriveMessageId, firstChoiceId, generateMessageId, HASH_IN_THREAD_BYTES, isAddressableId, MAX_MESSAGE_ID_BYTES, rawSha256Hex, sha256Hex, shortId } from '../../../lib/identity/ids';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('ids', () => {

    describe('rawSha256Hex()', () => {

        const bytesOf = (size: number) => Buffer.alloc(size, 'inbox-capture ');
        const expected = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

        it('gives the SHA-256 of the bytes at every size, either side of the in-thread bound', async () => {
            expect(await rawSha256Hex(Buffer.alloc(0))).to.equal('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
            for (const size of [1, 1024, HASH_IN_THREAD_BYTES, HASH_IN_THREAD_BYTES + 1, 3 * 1024 * 1024]) {
                const bytes = bytesOf(size);
                expect(await rawSha256Hex(bytes), `${size} bytes`).to.equal(expected(bytes));
                // A view into a larger buffer hashes its own bytes only.
                const whole = Buffer.concat([Buffer.from('xx'), bytes, Buffer.from('yy')]);
                const view = new Uint8Array(whole.buffer, whole.byteOffset + 2, size);
                expect(await rawSha256Hex(view), `a view of ${size} bytes`).to.equal(expected(bytes));
            }
        });

        it('hashes a small message at once, without a round trip through the thread pool', async () => {
            // Settles in this turn's microtasks: a thread pool job needs a turn of the event loop.
            const later = new Promise<'later'>((resolve) => setImmediate(() => resolve('later')));
            const small = bytesOf(4096);
            expect(await Promise.race([rawSha256Hex(small), later])).to.equal(expected(small));
        });
    });

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
            ['x'.repeat(MAX_MESSAGE_ID_BYTES), true, 'at the length limit'],
            ['x'.repeat(MAX_MESSAGE_ID_BYTES + 1), false, 'over the length limit'],
            ['/'.repeat(MAX_MESSAGE_ID_BYTES), true, 'counted in bytes, not encoded characters'],
            ['日'.repeat(Math.floor(MAX_MESSAGE_ID_BYTES / 3)), true, 'UTF-8 (3 bytes each) at the limit'],
            ['日'.repeat(Math.floor(MAX_MESSAGE_ID_BYTES / 3) + 1), false, 'UTF-8 (3 bytes each) over the limit'],
            ['😀'.repeat(MAX_MESSAGE_ID_BYTES / 4), true, '4-byte characters at the limit'],
            [`${'😀'.repeat(MAX_MESSAGE_ID_BYTES / 4)}a`, false, '4-byte characters over the limit']
        ];

        for (const [id, addressable, why] of table) {
            it(`${addressable ? 'keeps' : 'refuses'} ${JSON.stringify(id.length > 20 ? `${id.slice(0, 8)}…(${id.length})` : id)}: ${why}`, () => {
                expect(isAddressableId(id)).to.equal(addressable);
                expect(Buffer.byteLength(id) <= MAX_MESSAGE_ID_BYTES && id !== '.' && id !== '..').to.equal(addressable);
            });
        }

        it('measures a lone surrogate as the 3 bytes of U+FFFD', () => {
            const id = `${'a'.repeat(MAX_MESSAGE_ID_BYTES - 3)}\uD800`;
            expect(isAddressableId(id)).to.be.true();
            expect(isAddressableId(`${id}a`)).to.be.false();
        });
    });

    describe('shortId()', () => {

        it('keeps an id up to the limit and replaces a longer one by its SHA-256 hex @inbox-capture', () => {
            const limit = 'a'.repeat(MAX_MESSAGE_ID_BYTES);
            expect(shortId(limit)).to.equal(limit);
            expect(shortId(`${limit}b`)).to.equal(`${sha256Hex(`${limit}b`)}@inbox-capture`);
            expect(shortId(shortId(`${limit}b`))).to.equal(shortId(`${limit}b`));
        });
    });

    describe('deriveMessageId()', () => {

        it('is <id>~<inbox>, shortened when it would pass the limit', () => {
            expect(deriveMessageId('a@x', 'inbox')).to.equal('a@x~inbox');
            const long = 'l'.repeat(1000);
            expect(deriveMessageId(long, 'inbox')).to.equal(`${sha256Hex(long)}@inbox-capture~inbox`);
            const near = 'n'.repeat(MAX_MESSAGE_ID_BYTES - 3);
            expect(deriveMessageId(near, 'inbox')).to.equal(`${sha256Hex(`${near}~inbox`)}@inbox-capture`);
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

        it('keeps a derived id of a Message-ID near the limit under the limit', () => {
            const near = 'n'.repeat(MAX_MESSAGE_ID_BYTES);
            const inbox = 'i'.repeat(64);
            expect(firstChoiceId(near, inbox, true)).to.equal(near);
            expect(firstChoiceId(near, inbox, false)).to.equal(`${sha256Hex(`${near}~${inbox}`)}@inbox-capture`);
            expect(Buffer.byteLength(deriveMessageId(deriveMessageId(near, inbox), inbox))).to.be.at.most(MAX_MESSAGE_ID_BYTES);
        });

        it('gives only addressable ids, deterministically', () => {
            for (const id of ['.', '..', 'x'.repeat(256), 'x'.repeat(257), 'x'.repeat(10_000), '日'.repeat(2000), 'ok@x', generateMessageId()]) {
                for (const single of [true, false]) {
                    const chosen = firstChoiceId(id, 'some-inbox', single);
                    expect(isAddressableId(chosen)).to.be.true();
                    expect(firstChoiceId(id, 'some-inbox', single)).to.equal(chosen);
                }
            }
        });
    });
});
