import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { createDirectorySync, fsyncDirectory } from '../../../lib/blob-store/directory-sync';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** What happened, in order: the log every test reads its verdict from. */
type Event =
    | { type: 'request'; waiter: number }
    | { type: 'start'; sync: number }
    | { type: 'end'; sync: number }
    | { type: 'resolved'; waiter: number };

/**
 * The real fsync of a directory, held at a gate the test opens: so a test decides
 * when each sync may finish and sees when each one starts.
 */
function gatedSync(events: Event[]) {
    const gates: Array<() => void> = [];
    const dirs: string[] = [];
    let started = 0;
    const sync = async (dir: string) => {
        const id = started++;
        dirs.push(dir);
        events.push({ type: 'start', sync: id });
        await new Promise<void>((resolve) => gates.push(resolve));
        await fsyncDirectory(dir);
        events.push({ type: 'end', sync: id });
    };

    return {
        sync,
        dirs,
        started: () => started,
        // Lets the oldest sync still held go on to its real fsync.
        release: () => gates.shift()!()
    };
}

/** Lets pending callbacks run (the real fsync included) until `check` holds. */
async function until(check: () => boolean, what: string): Promise<void> {
    for (let i = 0; !check(); i++) {
        if (i > 2000) {
            throw new Error(`never happened: ${what}`);
        }

        await new Promise((resolve) => setTimeout(resolve, 1));
    }
}

/**
 * The rule, checked on a log: every waiter was resolved only after a sync that
 * started after its request had ended. Returns the sync that covered each waiter.
 */
function coveringSyncs(events: Event[]): Map<number, number> {
    const covered = new Map<number, number>();
    events.forEach((event, index) => {
        if (event.type !== 'resolved') {
            return;
        }

        const requested = events.findIndex((e) => e.type === 'request' && e.waiter === event.waiter);
        expect(requested, `request of waiter ${event.waiter}`).to.be.within(0, index - 1);
        const covering = events.slice(requested, index).find((e): e is Extract<Event, { type: 'start' }> => {
            return e.type === 'start' && events.slice(requested, index).some((f) => f.type === 'end' && f.sync === e.sync);
        });
        expect(covering, `a sync started after waiter ${event.waiter}'s request and ended before it resolved`).to.exist();
        covered.set(event.waiter, covering!.sync);
    });
    return covered;
}

describe('directory-sync', () => {
    let dir: string;

    before(async () => {
        dir = await tempDir('directory-sync');
    });

    after(async () => {
        await Fs.rm(dir, { recursive: true, force: true });
    });

    describe('fsyncDirectory()', () => {

        it('fsyncs an existing directory and fails for a missing one', async () => {
            await fsyncDirectory(dir);
            await expect(fsyncDirectory(Path.join(dir, 'missing'))).to.reject(/ENOENT/);
        });
    });

    describe('createDirectorySync()', () => {

        it('never resolves a waiter with a sync that began before its request', async () => {
            const events: Event[] = [];
            const gated = gatedSync(events);
            const coalescer = createDirectorySync(gated.sync);
            const ask = (waiter: number) => {
                events.push({ type: 'request', waiter });
                return coalescer.sync(dir).then(() => {
                    events.push({ type: 'resolved', waiter });
                });
            };

            // Waiter 0 starts sync 0; waiters 1 and 2 arrive while it runs.
            const first = ask(0);
            expect(gated.started()).to.equal(1);
            const second = ask(1);
            const third = ask(2);
            expect(gated.started()).to.equal(1);

            gated.release();
            await first;
            // Sync 0 began before waiters 1 and 2 asked: they must still be waiting, on sync 1.
            await until(() => gated.started() === 2, 'the next sync starts');
            expect(events.filter((e) => e.type === 'resolved')).to.equal([{ type: 'resolved', waiter: 0 }]);

            // Waiter 3 arrives while sync 1 runs: not covered by it either.
            const fourth = ask(3);
            gated.release();
            await Promise.all([second, third]);
            expect(events.some((e) => e.type === 'resolved' && e.waiter === 3)).to.be.false();

            await until(() => gated.started() === 3, 'the sync after that starts');
            gated.release();
            await fourth;

            expect(coveringSyncs(events)).to.equal(new Map([[0, 0], [1, 1], [2, 1], [3, 2]]));
            expect(gated.dirs).to.equal([dir, dir, dir]);
        });

        it('keeps the rule under requests arriving at random moments', async () => {
            const events: Event[] = [];
            const gated = gatedSync(events);
            const coalescer = createDirectorySync(gated.sync);
            let seed = 42;
            const random = () => {
                seed = (seed * 1103515245 + 12345) % 2 ** 31;
                return seed / 2 ** 31;
            };

            const pending: Promise<void>[] = [];
            const waiters = 200;
            for (let waiter = 0; waiter < waiters; waiter++) {
                events.push({ type: 'request', waiter });
                pending.push(coalescer.sync(dir).then(() => {
                    events.push({ type: 'resolved', waiter });
                }));
                // Now and then a held sync may finish before the next request.
                if (random() < 0.3 && gated.started() > events.filter((e) => e.type === 'end').length) {
                    const ended = events.filter((e) => e.type === 'end').length;
                    gated.release();
                    await until(() => events.filter((e) => e.type === 'end').length > ended, 'the released sync ends');
                }
            }

            // Release whatever is still held until every waiter is answered.
            let resolved = 0;
            void Promise.all(pending).then(() => {
                resolved = waiters;
            });
            while (resolved < waiters) {
                const ended = events.filter((e) => e.type === 'end').length;
                if (gated.started() > ended) {
                    gated.release();
                    await until(() => events.filter((e) => e.type === 'end').length > ended, 'the released sync ends');
                }

                await new Promise((resolve) => setTimeout(resolve, 1));
            }

            const covered = coveringSyncs(events);
            expect(covered.size).to.equal(waiters);
            // Shared: far fewer syncs than waiters.
            expect(gated.started()).to.be.below(waiters / 2);
        });

        it('shares real fsyncs among concurrent renames into one directory: fewer fsyncs than renames', async () => {
            const target = Path.join(dir, 'shared');
            const temp = Path.join(dir, 'temp');
            await Fs.mkdir(target);
            await Fs.mkdir(temp);
            const calls: string[] = [];
            const coalescer = createDirectorySync(async (d) => {
                calls.push(d);
                await fsyncDirectory(d);
            });

            const renames = 16;
            await Promise.all(Array.from({ length: renames }, async (_, n) => {
                const file = Path.join(temp, `f${n}`);
                await Fs.writeFile(file, String(n));
                await Fs.rename(file, Path.join(target, `f${n}`));
                await coalescer.sync(target);
            }));

            expect(calls.length).to.be.within(1, renames - 1);
            expect(new Set(calls)).to.equal(new Set([target]));
            expect((await Fs.readdir(target)).length).to.equal(renames);
        });

        it('keeps directories apart: a sync of one never answers a waiter of another', async () => {
            const events: Event[] = [];
            const gated = gatedSync(events);
            const coalescer = createDirectorySync(gated.sync);
            const a = Path.join(dir, 'a');
            const b = Path.join(dir, 'b');
            await Fs.mkdir(a);
            await Fs.mkdir(b);

            let bDone = false;
            const syncA = coalescer.sync(a);
            const syncB = coalescer.sync(b).then(() => {
                bDone = true;
            });
            expect(gated.dirs).to.equal([a, b]);

            gated.release();
            await syncA;
            expect(bDone).to.be.false();
            gated.release();
            await syncB;
        });

        it('rejects every waiter of a failed sync, and the next request starts a fresh one', async () => {
            let calls = 0;
            const coalescer = createDirectorySync(async (d) => {
                calls++;
                await fsyncDirectory(d);
            });
            const missing = Path.join(dir, 'gone');

            // The first starts at once; the other two share the next one.
            const results = await Promise.allSettled([coalescer.sync(missing), coalescer.sync(missing), coalescer.sync(missing)]);
            expect(results.map((r) => r.status)).to.equal(['rejected', 'rejected', 'rejected']);
            expect(calls).to.equal(2);

            await Fs.mkdir(missing);
            await coalescer.sync(missing);
            expect(calls).to.equal(3);
        });

        it('rejects the callers of a sync function that throws instead of rejecting', async () => {
            const coalescer = createDirectorySync(() => {
                throw new Error('thrown synchronously');
            });

            await expect(coalescer.sync(dir)).to.reject('thrown synchronously');
            await expect(coalescer.sync(dir)).to.reject('thrown synchronously');
        });
    });
});
