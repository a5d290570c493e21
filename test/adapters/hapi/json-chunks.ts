import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { SLICE_CHARS, toJsonChunks } from '../../../adapters/hapi/json-chunks';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const bytesOf = (chunks: Buffer[]) => Buffer.concat(chunks);

describe('json-chunks', () => {
    describe('toJsonChunks()', () => {
        it('equals JSON.stringify, slicing long strings without splitting escapes or surrogate pairs', async () => {
            // A pair straddles the first slice boundary; quotes, controls and lone halves around it.
            const body = `${'a'.repeat(SLICE_CHARS - 1)}\u{1F600}"\n\u0001\ud800${'é'.repeat(SLICE_CHARS)}`;
            const value = { messageId: 'm@x', body, htmlBody: '<p>x</p>'.repeat(SLICE_CHARS / 4), nested: [{ a: 1 }], skipped: undefined, last: 'end' };
            const chunks = await toJsonChunks(value);
            expect(bytesOf(chunks).toString()).to.equal(JSON.stringify(value));
            expect(chunks.length).to.be.above(4);
            expect(Math.max(...chunks.map((c) => c.length))).to.be.below(3 * SLICE_CHARS);
        });

        it('tells reserve() of every chunk before keeping it, and stops when it throws', async () => {
            const value = { body: 'b'.repeat(3 * SLICE_CHARS), last: 'end' };
            const sizes: number[] = [];
            const chunks = await toJsonChunks(value, (bytes) => sizes.push(bytes));
            expect(sizes).to.equal(chunks.map((c) => c.length));
            let seen = 0;
            await expect(toJsonChunks(value, (bytes) => {
                seen += bytes;
                if (seen > SLICE_CHARS) {
                    throw new Error('spent');
                }
            })).to.reject('spent');
        });

        it('serialises small objects in one chunk', async () => {
            expect(await toJsonChunks({ a: 'b', n: 1 })).to.equal([Buffer.from('{"a":"b","n":1}')]);
            expect(await toJsonChunks({})).to.equal([Buffer.from('{}')]);
        });
    });
});
