import { Readable } from 'node:stream';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { isInboxCaptureError } from '../../../lib/errors';
import { createMessageBudget } from '../../../lib/util/message-budget';
import { readBounded } from '../../../lib/util/read-bounded';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const MIB = 1024 * 1024;

/** An endless stream of 64 KiB chunks that counts how many were pulled from it. */
function endlessStream(): { stream: Readable; pulled: () => number } {
    let count = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const stream = new Readable({
        read() {
            count++;
            this.push(chunk);
        }
    });

    return { stream, pulled: () => count };
}

describe('read-bounded', () => {

    describe('readBounded()', () => {

        it('returns a Buffer within the cap as the same object (no copy)', async () => {
            const input = Buffer.from('hello');
            const output = await readBounded(input, 5);
            expect(output).to.shallow.equal(input);
        });

        it('refuses a Buffer one byte over the cap with TOO_LARGE', async () => {
            const err = await expect(readBounded(Buffer.alloc(6), 5)).to.reject();
            expect(isInboxCaptureError(err, 'TOO_LARGE')).to.be.true();
            expect((err as Error).message).to.equal('message exceeds 5 bytes');
            const named = await expect(readBounded(Buffer.alloc(6), 5, 'blob')).to.reject();
            expect((named as Error).message).to.equal('blob exceeds 5 bytes');
        });

        it('encodes a string as UTF-8 and counts its bytes, not its characters', async () => {
            const output = await readBounded('Grüße', 7);
            expect(output.toString('utf8')).to.equal('Grüße');
            expect(output.length).to.equal(7);

            // Five characters, seven bytes: over a cap of six.
            const err = await expect(readBounded('Grüße', 6)).to.reject();
            expect(isInboxCaptureError(err, 'TOO_LARGE')).to.be.true();
        });

        it('concatenates a stream in order', async () => {
            const output = await readBounded(Readable.from([Buffer.from('ab'), Buffer.from('cd'), 'ef']), 6);
            expect(output.toString()).to.equal('abcdef');
        });

        it('reads an empty stream to an empty Buffer', async () => {
            const output = await readBounded(Readable.from([]), 10);
            expect(output.length).to.equal(0);
        });

        it('accepts a stream of exactly the cap', async () => {
            const output = await readBounded(Readable.from([Buffer.alloc(MIB), Buffer.alloc(MIB)]), 2 * MIB);
            expect(output.length).to.equal(2 * MIB);
        });

        it('stops reading an oversized stream early and destroys it', async () => {
            const { stream, pulled } = endlessStream();
            const err = await expect(readBounded(stream, MIB)).to.reject();
            expect(isInboxCaptureError(err, 'TOO_LARGE')).to.be.true();
            expect(stream.destroyed).to.be.true();
            // 1 MiB is 16 chunks; allow the stream's read-ahead (highWaterMark) on top, never the rest.
            expect(pulled()).to.be.at.most(16 + 4);
        });

        it('passes the error of a failing stream through', async () => {
            const stream = new Readable({
                read() {
                    this.destroy(new Error('disk gone'));
                }
            });
            await expect(readBounded(stream, MIB)).to.reject(Error, 'disk gone');
        });

        it('reserves what it holds from a reservation, a Buffer or string at once and a stream chunk by chunk', async () => {
            const budget = createMessageBudget(3 * MIB);
            const other = budget.reserve(MIB)!;
            const forBuffer = budget.reserve(0)!;
            await readBounded(Buffer.alloc(MIB), 2 * MIB, 'message', forBuffer);
            expect(forBuffer.bytes).to.equal(MIB);
            forBuffer.release();
            const forString = budget.reserve(0)!;
            await readBounded('é'.repeat(10), MIB, 'message', forString);
            expect(forString.bytes).to.equal(20);
            forString.release();
            const forStream = budget.reserve(0)!;
            await readBounded(Readable.from([Buffer.alloc(MIB), Buffer.alloc(MIB)]), 2 * MIB, 'message', forStream);
            expect(forStream.bytes).to.equal(2 * MIB);
            forStream.release();
            other.release();
        });

        it('refuses with BUSY, and stops reading the stream, once the budget cannot hold more', async () => {
            const budget = createMessageBudget(MIB);
            const other = budget.reserve(MIB / 2)!;
            const { stream, pulled } = endlessStream();
            const reservation = budget.reserve(0)!;
            const err = await expect(readBounded(stream, 10 * MIB, 'message', reservation)).to.reject();
            expect(isInboxCaptureError(err, 'BUSY')).to.be.true();
            expect(stream.destroyed).to.be.true();
            expect(pulled()).to.be.at.most(8 + 4);
            expect(budget.heldBytes).to.be.at.most(MIB);
            const busy = await expect(readBounded(Buffer.alloc(MIB), 10 * MIB, 'message', budget.reserve(0)!)).to.reject();
            expect(isInboxCaptureError(busy, 'BUSY')).to.be.true();
            other.release();
        });

        it('refuses an input that is not a Buffer, string or stream with INVALID_INPUT', async () => {
            const err = await expect(readBounded(42 as unknown as string, 10)).to.reject();
            expect(isInboxCaptureError(err, 'INVALID_INPUT')).to.be.true();
        });

        it('refuses a negative or fractional cap with INVALID_INPUT', async () => {
            for (const cap of [-1, 1.5, Number.NaN]) {
                const err = await expect(readBounded(Buffer.alloc(0), cap)).to.reject();
                expect(isInboxCaptureError(err, 'INVALID_INPUT')).to.be.true();
            }
        });
    });
});
