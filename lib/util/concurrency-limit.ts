/**
 * The one concurrency limiter of the code base: group-commit turns, key lookups,
 * version probes and file deletes all queue here. Jobs start in the order they were
 * queued; a slot passes straight from a finished job to the next one waiting.
 */

/** A line of async jobs, at most `slots` running at a time. */
export interface ConcurrencyLimit {
    /**
     * Runs `fn` once every job queued before it has started and a slot is free. A job
     * starts from a microtask even when a slot is free, so that calls made in the
     * same tick can still join work queued earlier (group commit relies on it).
     */
    run<T>(fn: () => Promise<T> | T): Promise<T>;
    /** Jobs queued so far, ever: unchanged since a job was queued means it is still the last in line. */
    readonly queued: number;
    /** Jobs running now. */
    readonly active: number;
    /** Jobs waiting for a slot now. */
    readonly waiting: number;
}

// Start functions of waiting jobs, oldest first from `head`; compacted now and then so
// 10,000 queued jobs cost no O(n) shift each.
const COMPACT_AFTER = 1024;

/** A limiter for `slots` jobs at once (1: one at a time). */
export function createConcurrencyLimit(slots: number): ConcurrencyLimit {
    if (!(Number.isSafeInteger(slots) && slots >= 1)) {
        throw new TypeError(`slots must be a positive integer, not ${slots}`);
    }

    let active = 0;
    let queued = 0;
    let line: (() => void)[] = [];
    let head = 0;

    const release = () => {
        if (head < line.length) {
            const next = line[head];
            line[head++] = undefined!;
            if (head > COMPACT_AFTER && head * 2 > line.length) {
                line = line.slice(head);
                head = 0;
            }

            next();
            return;
        }

        active--;
    };

    return {
        get queued() {
            return queued;
        },

        get active() {
            return active;
        },

        get waiting() {
            return line.length - head;
        },

        run<T>(fn: () => Promise<T> | T): Promise<T> {
            queued++;
            return new Promise<T>((resolve, reject) => {
                const start = () => {
                    const job = Promise.resolve().then(fn);
                    job.then(release, release);
                    job.then(resolve, reject);
                };

                if (active < slots) {
                    active++;
                    start();
                }
                else {
                    line.push(start);
                }
            });
        }
    };
}

/** Calls `fn` on every item with at most `slots` calls in flight; resolves when all have settled, rejects with the first failure. */
export async function forEachLimited<I>(items: readonly I[], slots: number, fn: (item: I) => Promise<void>): Promise<void> {
    const limit = createConcurrencyLimit(slots);
    await Promise.all(items.map((item) => limit.run(() => fn(item))));
}
