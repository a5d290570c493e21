/**
 * Group commit. Each transaction commits (and fsyncs) once, and a commit costs
 * about as much for one delivery as for dozens, so deliveries that arrive while
 * a write transaction runs wait for the next one, which stores them all. Nothing
 * waits on a timer: a delivery that finds the line empty starts at once.
 */

import type { ConcurrencyLimit } from './concurrency-limit';

/** What became of one item of a batch: its value, or the error that was its own. */
export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/** How to batch. */
export interface BatcherOptions<I, R> {
    /**
     * The line batches wait in (shared with other writes that must keep their order).
     * It must start jobs from a microtask, as createConcurrencyLimit() does, so that
     * calls made in the same tick join the batch queued first.
     */
    turns: ConcurrencyLimit;
    /** Most weight one batch takes; an item heavier than this alone gets a batch of its own. */
    maxWeight: number;
    /** The weight of one item (for the store: its records). */
    weight(item: I): number;
    /**
     * Stores one batch and answers one outcome per item, in order. A throw means
     * nothing of the batch is stored: every item gets the error.
     */
    run(items: I[]): Promise<Outcome<R>[]>;
}

interface Batch<I, R> {
    items: I[];
    settle: { resolve: (value: R) => void; reject: (error: unknown) => void }[];
    weight: number;
    /** `turns.queued` right after this batch was queued. */
    ticket: number;
    started: boolean;
}

/**
 * Returns a function that puts an item in the batch waiting for its turn (or
 * queues a new batch when there is none, when that one is full, or when other
 * work was queued after it, so the line keeps the order calls were made in) and
 * settles with that item's own outcome once its batch has run.
 */
export function createBatcher<I, R>(options: BatcherOptions<I, R>): (item: I) => Promise<R> {
    const { turns, maxWeight } = options;
    let open: Batch<I, R> | null = null;
    // Settles of ended batches put off to the next turn of the event loop, oldest first.
    let deferred: (() => void)[] = [];
    const settleDeferred = () => {
        const due = deferred;
        deferred = [];
        for (const settle of due) {
            settle();
        }
    };

    const runBatch = async (batch: Batch<I, R>) => {
        batch.started = true;
        if (open === batch) {
            open = null;
        }

        let settle: () => void;
        try {
            const outcomes = await options.run(batch.items);
            if (outcomes.length !== batch.items.length) {
                throw new Error(`A batch of ${batch.items.length} answered ${outcomes.length} outcomes`);
            }

            settle = () => outcomes.forEach((outcome, i) => {
                const { resolve, reject } = batch.settle[i]!;
                if (outcome.ok) {
                    resolve(outcome.value);
                }
                else {
                    reject(outcome.error);
                }
            });
        }
        catch (err) {
            settle = () => {
                for (const { reject } of batch.settle) {
                    reject(err);
                }
            };
        }

        // With work waiting in line, that work starts first (from microtasks) and these callers
        // go on after it, in the next turn of the event loop: otherwise the store would sit idle
        // while each of them ran on to its reply (docs/design.md, "The parts", group commit).
        // Callers are settled in the order of their batches either way.
        if (turns.waiting > 0 || deferred.length > 0) {
            deferred.push(settle);
            if (deferred.length === 1) {
                setImmediate(settleDeferred);
            }
        }
        else {
            settle();
        }
    };

    return (item) => new Promise<R>((resolve, reject) => {
        const weight = options.weight(item);
        const batch = open;
        if (batch && !batch.started && batch.ticket === turns.queued && batch.weight + weight <= maxWeight) {
            batch.items.push(item);
            batch.settle.push({ resolve, reject });
            batch.weight += weight;
            return;
        }

        const fresh: Batch<I, R> = { items: [item], settle: [{ resolve, reject }], weight, ticket: 0, started: false };
        open = fresh;
        // runBatch settles every caller itself and never rejects.
        void turns.run(() => runBatch(fresh));
        fresh.ticket = turns.queued;
    });
}
