import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createBatcher, createWriteTurns, type Outcome } from '../lib/record-store/save-batch';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** A batcher whose run answers each item with itself after `runTicks` event-loop turns, recording every batch's size. */
function recordingBatcher(gatherMs: number, runTicks = 3) {
    const sizes: number[] = [];
    const save = createBatcher<number, number>({
        turns: createWriteTurns(1),
        maxWeight: 64,
        weight: () => 1,
        gatherMs,
        async run(items) {
            sizes.push(items.length);
            for (let i = 0; i < runTicks; i++) {
                await new Promise((resolve) => setImmediate(resolve));
            }

            return items.map((value): Outcome<number> => ({ ok: true, value }));
        }
    });
    return { save, sizes };
}

/** `clients` callers, each saving `rounds` items one after another, with `pauseTicks` turns between its saves. */
async function clients(save: (item: number) => Promise<number>, count: number, rounds: number, pauseTicks: (client: number) => number) {
    await Promise.all(Array.from({ length: count }, async (_, client) => {
        for (let round = 0; round < rounds; round++) {
            expect(await save(client * 1000 + round)).to.equal(client * 1000 + round);
            for (let i = 0; i < pauseTicks(client); i++) {
                await new Promise((resolve) => setImmediate(resolve));
            }
        }
    }));
}

describe('save-batch', () => {

    describe('createBatcher()', () => {

        it('stores clients that come back together in one batch per round, not split into a first one and the rest', async () => {
            // Client 0 comes back a few turns before the others: without gathering, its
            // item starts a batch alone and the other 15 commit in the next one, every round.
            const { save, sizes } = recordingBatcher(10_000);
            await clients(save, 16, 20, (client) => (client === 0 ? 0 : 2));
            expect(sizes.reduce((a, b) => a + b, 0)).to.equal(16 * 20);
            // The first round arrives in one tick; every round after it gathers all 16.
            expect(sizes.length).to.equal(20);
            expect(sizes.every((n) => n === 16)).to.be.true();
        });

        it('splits rounds when it may not wait (gatherMs 0)', async () => {
            const { save, sizes } = recordingBatcher(0);
            await clients(save, 16, 20, (client) => (client === 0 ? 0 : 2));
            expect(sizes.reduce((a, b) => a + b, 0)).to.equal(16 * 20);
            expect(sizes.length).to.be.above(30);
        });

        it('never waits for a lone client (a wait would outlast the test timeout)', { timeout: 5000 }, async () => {
            const { save, sizes } = recordingBatcher(60_000);
            await clients(save, 1, 50, () => 1);
            expect(sizes).to.equal(new Array(50).fill(1));
        });

        it('stops waiting after gatherMs when fewer come back than last round', { timeout: 5000 }, async () => {
            const { save, sizes } = recordingBatcher(20);
            await clients(save, 8, 3, () => 0);
            // One client leaves: the rest are stored after at most one wait, none is lost.
            await clients(save, 7, 3, () => 0);
            expect(sizes.reduce((a, b) => a + b, 0)).to.equal(8 * 3 + 7 * 3);
        });

        it('starts a gathering batch at once when its batch is full', { timeout: 5000 }, async () => {
            const sizes: number[] = [];
            const save = createBatcher<number, number>({
                turns: createWriteTurns(1),
                maxWeight: 4,
                weight: () => 1,
                gatherMs: 60_000,
                run(items) {
                    sizes.push(items.length);
                    return Promise.resolve(items.map((value): Outcome<number> => ({ ok: true, value })));
                }
            });
            // Rounds of 6 expect 6 but a batch holds 4: the full one runs, the rest follow.
            await clients(save, 6, 4, () => 0);
            expect(sizes.reduce((a, b) => a + b, 0)).to.equal(24);
            expect(Math.max(...sizes)).to.equal(4);
        });
    });
});
