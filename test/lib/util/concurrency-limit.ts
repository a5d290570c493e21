import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createConcurrencyLimit, forEachLimited } from '../../../lib/util/concurrency-limit';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

// A promise and the function that settles it, so a test decides when a job ends.
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (err: Error) => void } {
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
    });
    return { promise, resolve, reject };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('concurrency-limit', () => {

    describe('createConcurrencyLimit()', () => {

        it('refuses a slot count that is not a positive integer', () => {
            for (const slots of [0, -1, 1.5, NaN, Infinity]) {
                expect(() => createConcurrencyLimit(slots)).to.throw(TypeError, /slots must be a positive integer/);
            }
        });
    });

    describe('run()', () => {

        it('runs at most `slots` jobs at once and starts the rest in the order queued', async () => {
            const limit = createConcurrencyLimit(2);
            const gates = [deferred(), deferred(), deferred(), deferred()];
            const started: number[] = [];
            const done = gates.map((gate, i) => limit.run(async () => {
                started.push(i);
                await gate.promise;
                return i;
            }));

            await tick();
            expect(started).to.equal([0, 1]);
            expect(limit.active).to.equal(2);
            expect(limit.waiting).to.equal(2);

            gates[1].resolve();
            await tick();
            expect(started).to.equal([0, 1, 2]);
            expect(limit.active).to.equal(2);

            gates[0].resolve();
            gates[2].resolve();
            gates[3].resolve();
            expect(await Promise.all(done)).to.equal([0, 1, 2, 3]);
            expect(limit.active).to.equal(0);
            expect(limit.waiting).to.equal(0);
        });

        it('passes a failed job\'s error to its caller and frees its slot', async () => {
            const limit = createConcurrencyLimit(1);
            const failing = limit.run(() => Promise.reject(new Error('boom')));
            const next = limit.run(() => 'after');
            await expect(failing).to.reject('boom');
            expect(await next).to.equal('after');
            expect(limit.active).to.equal(0);
        });

        it('turns a synchronous throw into a rejection', async () => {
            const limit = createConcurrencyLimit(1);
            await expect(limit.run(() => {
                throw new Error('sync');
            })).to.reject('sync');
            expect(await limit.run(() => 1)).to.equal(1);
        });

        it('starts a job from a microtask, so work queued in the same tick can still be joined', async () => {
            const limit = createConcurrencyLimit(1);
            const batch: string[] = [];
            const seen: string[][] = [];
            const flush = () => limit.run(() => {
                seen.push(batch.splice(0));
            });

            batch.push('a');
            const first = flush();
            batch.push('b');
            await first;
            expect(seen).to.equal([['a', 'b']]);
        });

        it('counts every job ever queued', async () => {
            const limit = createConcurrencyLimit(3);
            expect(limit.queued).to.equal(0);
            await Promise.all([limit.run(() => 1), limit.run(() => 2)]);
            expect(limit.queued).to.equal(2);
        });

        it('keeps order through thousands of queued jobs (the line compacts)', async () => {
            const limit = createConcurrencyLimit(1);
            const order: number[] = [];
            await Promise.all(Array.from({ length: 5000 }, (_, i) => limit.run(async () => {
                order.push(i);
            })));
            expect(order).to.equal(Array.from({ length: 5000 }, (_, i) => i));
            expect(limit.waiting).to.equal(0);
        });
    });

    describe('forEachLimited()', () => {

        it('calls every item with at most `slots` in flight', async () => {
            let inFlight = 0;
            let most = 0;
            const seen: number[] = [];
            await forEachLimited([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
                inFlight++;
                most = Math.max(most, inFlight);
                await tick();
                seen.push(item);
                inFlight--;
            });
            expect(most).to.equal(3);
            expect(seen.sort()).to.equal([1, 2, 3, 4, 5, 6, 7]);
        });

        it('rejects with a failure of an item', async () => {
            await expect(forEachLimited([1, 2, 3], 2, (item) => (item === 2 ? Promise.reject(new Error('two')) : Promise.resolve()))).to.reject('two');
        });
    });
});
