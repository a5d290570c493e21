import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createConcurrencyLimit } from '../../../lib/util/concurrency-limit';
import { createBatcher, type Outcome } from '../../../lib/util/group-commit';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** A batcher over numbers that records each batch it runs; `fail` items get their own error. */
function provisionBatcher(options: { maxWeight?: number; weight?: (n: number) => number; fail?: (n: number) => boolean; slots?: number } = {}) {
    const turns = createConcurrencyLimit(options.slots ?? 1);
    const batches: number[][] = [];
    let release: (() => void) | null = null;
    let hold = false;
    const add = createBatcher<number, string>({
        turns,
        maxWeight: options.maxWeight ?? 100,
        weight: options.weight ?? (() => 1),
        async run(items): Promise<Outcome<string>[]> {
            batches.push([...items]);
            if (hold) {
                await new Promise<void>((resolve) => {
                    release = resolve;
                });
            }

            return items.map((n) => (options.fail?.(n) ? { ok: false, error: new Error(`item ${n}`) } : { ok: true, value: `v${n}` }));
        }
    });

    return {
        add,
        turns,
        batches,
        holdNext() {
            hold = true;
        },
        releaseHeld() {
            hold = false;
            release?.();
        }
    };
}

describe('group-commit', () => {

    describe('createBatcher()', () => {

        it('puts items added in the same tick into one batch', async () => {
            const { add, batches } = provisionBatcher();
            const values = await Promise.all([1, 2, 3, 4].map(add));
            expect(values).to.equal(['v1', 'v2', 'v3', 'v4']);
            expect(batches).to.equal([[1, 2, 3, 4]]);
        });

        it('collects items arriving while a batch runs into the next batch', async () => {
            const batcher = provisionBatcher();
            batcher.holdNext();
            const first = batcher.add(1);
            await new Promise((resolve) => setImmediate(resolve));
            expect(batcher.batches).to.equal([[1]]);

            const later = [2, 3, 4].map(batcher.add);
            await new Promise((resolve) => setImmediate(resolve));
            expect(batcher.batches).to.equal([[1]]);

            batcher.releaseHeld();
            expect(await Promise.all([first, ...later])).to.equal(['v1', 'v2', 'v3', 'v4']);
            expect(batcher.batches).to.equal([[1], [2, 3, 4]]);
        });

        it('settles each item with its own outcome: one failure leaves the others stored', async () => {
            const { add, batches } = provisionBatcher({ fail: (n) => n === 2 });
            const settled = await Promise.allSettled([1, 2, 3].map(add));
            expect(batches).to.equal([[1, 2, 3]]);
            expect(settled[0]).to.equal({ status: 'fulfilled', value: 'v1' });
            expect(settled[1]!.status).to.equal('rejected');
            expect((settled[1] as PromiseRejectedResult).reason.message).to.equal('item 2');
            expect(settled[2]).to.equal({ status: 'fulfilled', value: 'v3' });
        });

        it('rejects every item of a batch whose run throws, and goes on with the next batch', async () => {
            const turns = createConcurrencyLimit(1);
            let calls = 0;
            const add = createBatcher<number, number>({
                turns,
                maxWeight: 10,
                weight: () => 1,
                run(items) {
                    calls++;
                    if (calls === 1) {
                        return Promise.reject(new Error('commit failed'));
                    }

                    return Promise.resolve(items.map((n) => ({ ok: true, value: n * 10 })));
                }
            });

            const failed = await Promise.allSettled([1, 2].map(add));
            expect(failed.map((s) => s.status)).to.equal(['rejected', 'rejected']);
            expect((failed[0] as PromiseRejectedResult).reason.message).to.equal('commit failed');
            expect((failed[1] as PromiseRejectedResult).reason.message).to.equal('commit failed');
            expect(await add(3)).to.equal(30);
        });

        it('rejects every item when run answers the wrong number of outcomes', async () => {
            const add = createBatcher<number, number>({
                turns: createConcurrencyLimit(1),
                maxWeight: 10,
                weight: () => 1,
                run: () => Promise.resolve([{ ok: true, value: 1 }])
            });

            const settled = await Promise.allSettled([1, 2].map(add));
            expect(settled.map((s) => s.status)).to.equal(['rejected', 'rejected']);
            expect((settled[0] as PromiseRejectedResult).reason.message).to.equal('A batch of 2 answered 1 outcomes');
        });

        it('closes a batch at maxWeight and starts the next one', async () => {
            const { add, batches } = provisionBatcher({ maxWeight: 3 });
            await Promise.all([1, 2, 3, 4, 5, 6, 7].map(add));
            expect(batches).to.equal([[1, 2, 3], [4, 5, 6], [7]]);
        });

        it('counts each item by its weight', async () => {
            const { add, batches } = provisionBatcher({ maxWeight: 10, weight: (n) => n });
            await Promise.all([4, 5, 2, 3].map(add));
            expect(batches).to.equal([[4, 5], [2, 3]]);
        });

        it('gives an item heavier than maxWeight a batch of its own', async () => {
            const { add, batches } = provisionBatcher({ maxWeight: 10, weight: (n) => n });
            await Promise.all([1, 50, 2].map(add));
            expect(batches).to.equal([[1], [50], [2]]);
        });

        it('keeps call order when other work joins the line between items', async () => {
            const { add, turns, batches } = provisionBatcher();
            const order: string[] = [];
            const first = add(1).then((v) => order.push(v));
            const other = turns.run(() => {
                order.push('other');
                return Promise.resolve();
            });
            const second = add(2).then((v) => order.push(v));
            await Promise.all([first, other, second]);
            expect(batches).to.equal([[1], [2]]);
            // The other work, waiting in line when the first batch ended, started before its caller went on.
            expect(order).to.equal(['other', 'v1', 'v2']);
        });

        it('runs batches one after the other in the order they were queued', async () => {
            const { add, batches } = provisionBatcher({ maxWeight: 2 });
            const values = await Promise.all([1, 2, 3, 4, 5].map(add));
            expect(values).to.equal(['v1', 'v2', 'v3', 'v4', 'v5']);
            expect(batches.flat()).to.equal([1, 2, 3, 4, 5]);
        });

        describe('when a batch ends', () => {
            /** A batcher whose first batch runs until release(); `events` tells runs, settles and anything the test adds, in order. */
            function tracedBatcher() {
                const events: string[] = [];
                let release!: () => void;
                let runs = 0;
                const add = createBatcher<number, number>({
                    turns: createConcurrencyLimit(1),
                    maxWeight: 100,
                    weight: () => 1,
                    async run(items) {
                        const n = ++runs;
                        events.push(`run ${n}`);
                        if (n === 1) {
                            await new Promise<void>((resolve) => {
                                release = resolve;
                            });
                        }

                        return items.map((value) => ({ ok: true, value }));
                    }
                });
                const settled = (n: number) => add(n).then((value) => void events.push(`settled ${value}`));
                return { events, settled, release: () => release() };
            }

            it('starts the batch waiting in line before its own callers go on', async () => {
                const { events, settled, release } = tracedBatcher();
                const first = settled(1);
                await new Promise((resolve) => setImmediate(resolve));
                const second = settled(2);
                release();
                await Promise.all([first, second]);
                expect(events).to.equal(['run 1', 'run 2', 'settled 1', 'settled 2']);
            });

            it('settles its callers at once when nothing waits behind it', async () => {
                const { events, settled, release } = tracedBatcher();
                const first = settled(1);
                await new Promise((resolve) => setImmediate(resolve));
                setImmediate(() => events.push('next turn'));
                release();
                await first;
                expect(events).to.equal(['run 1', 'settled 1']);
            });
        });
    });
});
