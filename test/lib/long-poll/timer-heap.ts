import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { TimerHeap, type Timed } from '../../../lib/long-poll/timer-heap';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

interface Item extends Timed {
    name: string;
}

const item = (name: string): Item => ({ name, dueAt: 0, heapIndex: -1 });

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Node timers currently active in this process. */
const activeTimers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

/** A heap that records what it woke, with the time it was told and the clock when it ran. */
const recordingHeap = () => {
    const woken: Array<{ item: Item; now: number; clock: number }> = [];
    const heap = new TimerHeap<Item>((due, now) => woken.push({ item: due, now, clock: Date.now() }));
    return { heap, woken, names: () => woken.map((w) => w.item.name) };
};

/** A deterministic shuffle (a small LCG), so a failure can be replayed. */
const shuffled = <T>(values: T[], seed: number): T[] => {
    const out = values.slice();
    let state = seed;
    for (let i = out.length - 1; i > 0; i--) {
        state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
        const j = state % (i + 1);
        [out[i], out[j]] = [out[j], out[i]];
    }

    return out;
};

describe('timer-heap', () => {

    describe('schedule()', () => {

        it('wakes items in order of due time, whatever the order they were scheduled in', async () => {
            const { heap, names } = recordingHeap();
            const base = Date.now() - 1000;
            for (const n of [5, 3, 9, 1, 7, 2, 8, 0, 6, 4]) {
                heap.schedule(item(`i${n}`), base + n);
            }

            expect(heap.size).to.equal(10);
            await sleep(5);
            expect(names()).to.equal(['i0', 'i1', 'i2', 'i3', 'i4', 'i5', 'i6', 'i7', 'i8', 'i9']);
            expect(heap.size).to.equal(0);
        });

        it('wakes each item once, marked out of the heap, and wakes later items at their own time', async () => {
            const { heap, woken, names } = recordingHeap();
            const now = Date.now();
            const late = item('late');
            const early = item('early');
            heap.schedule(late, now + 60);
            heap.schedule(early, now + 10);
            await sleep(35);
            expect(names()).to.equal(['early']);
            expect(early.heapIndex).to.equal(-1);
            expect(late.heapIndex).to.equal(0);
            await sleep(60);
            expect(names()).to.equal(['early', 'late']);
            expect(woken.map((w) => w.clock - w.item.dueAt).every((lateBy) => lateBy >= 0)).to.be.true();
        });

        it('moves an item already scheduled instead of adding it twice', async () => {
            const { heap, names } = recordingHeap();
            const now = Date.now();
            const a = item('a');
            const b = item('b');
            const c = item('c');
            heap.schedule(a, now + 500);
            heap.schedule(b, now + 20);
            heap.schedule(c, now + 30);
            // Earlier than the timer armed for b, later than where it was, and the same place again.
            heap.schedule(a, now + 5);
            heap.schedule(b, now + 40);
            heap.schedule(c, now + 30);
            expect(heap.size).to.equal(3);
            expect(a.dueAt).to.equal(now + 5);
            await sleep(80);
            expect(names()).to.equal(['a', 'c', 'b']);
        });

        it('can be given an item again from its own wake-up', async () => {
            const woken: string[] = [];
            const again = item('again');
            let rounds = 0;
            const heap = new TimerHeap<Item>((due, now) => {
                woken.push(due.name);
                if (++rounds < 3) {
                    heap.schedule(due, now + 5);
                }
            });
            heap.schedule(again, Date.now());
            await sleep(60);
            expect(woken).to.equal(['again', 'again', 'again']);
            expect(heap.size).to.equal(0);
        });

        it('keeps its order over many items scheduled, moved and removed', async () => {
            const { heap, names } = recordingHeap();
            const base = Date.now() - 10_000;
            const items = Array.from({ length: 2000 }, (_, i) => item(`${i}`));
            for (const [n, each] of shuffled(items, 7).entries()) {
                heap.schedule(each, base + (n * 37) % 1000);
            }

            // Move a third of them, remove another third.
            for (const [n, each] of items.entries()) {
                if (n % 3 === 1) {
                    heap.schedule(each, base + (n * 13) % 1000);
                }
                else if (n % 3 === 2) {
                    heap.remove(each);
                }
            }

            const kept = items.filter((_, n) => n % 3 !== 2);
            expect(heap.size).to.equal(kept.length);
            await sleep(5);
            expect(names()).to.have.length(kept.length);
            const dues = names().map((name) => items[Number(name)].dueAt);
            for (let i = 1; i < dues.length; i++) {
                expect(dues[i]).to.be.at.least(dues[i - 1]);
            }

            expect(new Set(names())).to.equal(new Set(kept.map((each) => each.name)));
        });

        it('never wakes an item before its due time, even when its timer fires early by the clock', async () => {
            const { heap, woken } = recordingHeap();
            const realNow = Date.now;
            const start = realNow();
            heap.schedule(item('due'), start + 30);
            // The wall clock falls 300 ms behind the timer: when the timer fires, the item is not
            // due yet (for 300 ms more: a busy machine may run the check below late by far less).
            Date.now = () => realNow() - 300;
            try {
                await sleep(40);
                expect(woken).to.have.length(0);
                expect(heap.size).to.equal(1);
                await sleep(400);
            }
            finally {
                Date.now = realNow;
            }

            expect(woken).to.have.length(1);
            expect(woken[0].now).to.be.at.least(woken[0].item.dueAt);
            expect(woken[0].clock).to.be.at.least(woken[0].item.dueAt);
        });
    });

    describe('remove()', () => {

        it('takes out any item (first, middle, last), which then never wakes', async () => {
            const { heap, names } = recordingHeap();
            const base = Date.now() + 10;
            const items = Array.from({ length: 9 }, (_, i) => item(`i${i}`));
            for (const [i, each] of items.entries()) {
                heap.schedule(each, base + i);
            }

            heap.remove(items[0]);
            heap.remove(items[4]);
            heap.remove(items[8]);
            expect([items[0], items[4], items[8]].map((each) => each.heapIndex)).to.equal([-1, -1, -1]);
            // Removing again, or an item never scheduled, changes nothing.
            heap.remove(items[4]);
            heap.remove(item('stranger'));
            expect(heap.size).to.equal(6);
            await sleep(50);
            expect(names()).to.equal(['i1', 'i2', 'i3', 'i5', 'i6', 'i7']);
        });

        it('stops its timer once the heap is empty, and holds one timer for many items', async () => {
            const { heap, woken } = recordingHeap();
            const before = activeTimers();
            const items = Array.from({ length: 100 }, (_, i) => item(`i${i}`));
            for (const [i, each] of items.entries()) {
                heap.schedule(each, Date.now() + 60_000 + i);
            }

            expect(activeTimers()).to.equal(before + 1);
            for (const each of items) {
                heap.remove(each);
            }

            expect(heap.size).to.equal(0);
            expect(activeTimers()).to.equal(before);
            expect(woken).to.have.length(0);
        });
    });
});
