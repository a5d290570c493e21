/**
 * Sends an outbox's deliveries of one kind (docs/api.md, "Webhooks" and "Auto-relay"):
 * claims due deliveries from the record store, attempts them a few at a time through the
 * adapter's `attempt` (a POST, an SMTP send), records success or the next attempt. Nothing
 * on the ingest path waits for it: an ingest only writes outbox rows and wakes it.
 */

import { backoffMs } from '../util/backoff';
import type { DeliveryKind, OutboxDelivery, RecordStore } from '../record-store/record-store';
import type { EmailRecord } from '../types';

/** One attempt's deadline, ms: a webhook's 2xx must come within it (docs/api.md, "Webhooks"). */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;
/** Wait before the first retry, ms: within the 10 s webhooks allow; doubles per retry. */
export const DEFAULT_DELIVERY_FIRST_RETRY_MS = 5_000;
/** Longest wait between two attempts, ms: an hour, so a receiver back after a day's outage hears within the hour. */
export const DEFAULT_DELIVERY_MAX_RETRY_MS = 3_600_000;
/** A delivery still failing this long after its email was stored is given up, ms: 24 h (webhooks ask at least 1 h). */
export const DEFAULT_DELIVERY_GIVE_UP_MS = 24 * 3_600_000;
/** How often the outbox is read for retries and other processes' rows, ms (a save in this process wakes it at once). */
export const DEFAULT_DELIVERY_POLL_MS = 1_000;
/** Attempts in flight at once per process and kind: a dead receiver holds at most this many sockets. */
export const DEFAULT_DELIVERY_CONCURRENCY = 8;
/** A claim outlives the attempt's deadline by this much, ms, before another process may take the delivery. */
const LEASE_MARGIN_MS = 5_000;
/** Retries due within this long get a timer of their own, ms; later ones are found by the poll. */
const TIMED_RETRY_MS = 60_000;
/** How often deliveries past the give-up age are dropped (those of URLs no longer configured), ms. */
const DROP_EVERY_MS = 60_000;

/** How deliveries are timed; each has a default. */
export interface DeliveryTimingOptions {
    /** Deadline of one attempt, ms (default 10000). */
    timeoutMs?: number;
    /** Wait before the first retry, ms (default 5000); each later wait doubles. */
    firstRetryMs?: number;
    /** Longest wait between attempts, ms (default one hour). */
    maxRetryMs?: number;
    /** Give up a delivery this long after its email was stored, ms (default 24 h). */
    giveUpAfterMs?: number;
    /** Outbox poll interval, ms (default 1000). */
    pollIntervalMs?: number;
    /** Attempts in flight at once (default 8). */
    concurrency?: number;
}

/** How one attempt ended: `ok` when the delivery is done (sent, or nothing to send). */
export type AttemptOutcome = { ok: true } | { ok: false; error: string };

/** What a dispatcher sends, and from where. */
export interface OutboxDispatcherOptions extends DeliveryTimingOptions {
    recordStore: RecordStore;
    kind: DeliveryKind;
    /** The targets this process sends to (deliveries to others wait for a process that does). */
    targets: readonly string[];
    /** One attempt of a claimed delivery of a stored email: the adapter's protocol; aborted by `signal` when the dispatcher closes. */
    attempt(delivery: OutboxDelivery, record: EmailRecord, timeoutMs: number, signal: AbortSignal): Promise<AttemptOutcome>;
    log?: (message: string, error?: unknown) => void;
}

/** A running dispatcher. */
export interface OutboxDispatcher {
    /** Looks for due deliveries now (a save just wrote some). */
    wake(): void;
    /** Stops polling, aborts the attempts in flight (their deliveries are sent again after their lease) and waits for them. */
    close(): Promise<void>;
}

/** Starts sending the outbox of `recordStore`'s deliveries of `kind` to `targets`. */
export function startOutboxDispatcher(options: OutboxDispatcherOptions): OutboxDispatcher {
    const { recordStore: store, kind, attempt } = options;
    const log = options.log ?? (() => undefined);
    const timeoutMs = options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
    const backoff = { firstMs: options.firstRetryMs ?? DEFAULT_DELIVERY_FIRST_RETRY_MS, maxMs: options.maxRetryMs ?? DEFAULT_DELIVERY_MAX_RETRY_MS };
    const giveUpAfterMs = options.giveUpAfterMs ?? DEFAULT_DELIVERY_GIVE_UP_MS;
    const concurrency = options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY;
    const { claimDeliveries: claim, retryDelivery: retry, dropDeliveriesBefore: drop } = store;
    if (!claim || !retry || !drop) {
        throw new TypeError(`${kind} deliveries need a record store with an outbox (createKnexRecordStore)`);
    }

    const targets = [...new Set(options.targets)];
    const controller = new AbortController();
    const sending = new Set<Promise<void>>();
    // Deliveries that are done (sent, skipped, given up): removed by the next claim's transaction,
    // so a busy receiver costs one write transaction per batch of deliveries, not one each.
    const done: OutboxDelivery[] = [];
    // Outbox reads and drops in flight, which close() waits for before the store closes.
    const reading = new Set<Promise<unknown>>();
    const track = <T>(work: Promise<T>): Promise<T> => {
        reading.add(work);
        void work.finally(() => reading.delete(work)).catch(() => undefined);
        return work;
    };
    let closed = false;
    let pumping = false;
    let again = false;
    let lastDrop = 0;

    // One attempt of one claimed delivery; every failure is recorded or left to the lease.
    const send = async (delivery: OutboxDelivery): Promise<void> => {
        const record = await store.getEmail(delivery.messageId);
        if (!record) {
            // Deleted before it was sent: there is nothing left to tell.
            done.push(delivery);
            return;
        }

        const outcome = await attempt(delivery, record, timeoutMs, controller.signal);
        if (outcome.ok) {
            done.push(delivery);
            return;
        }

        if (closed) {
            // Aborted by close(): the lease runs out and a process sends it again.
            return;
        }

        const next = Date.now() + backoffMs(delivery.attempts, backoff);
        if (next - delivery.createdAt > giveUpAfterMs) {
            log(`${kind} delivery ${delivery.id} to ${delivery.target} given up after ${delivery.attempts + 1} attempts: ${outcome.error}`);
            done.push(delivery);
            return;
        }

        await retry.call(store, delivery, next, outcome.error);
        wakeAt(next);
    };

    // A retry of ours is tried when it is due, not at the next poll after it.
    const timers = new Set<NodeJS.Timeout>();
    const wakeAt = (at: number) => {
        const wait = at - Date.now();
        if (closed || wait > TIMED_RETRY_MS) {
            return;
        }

        const timer = setTimeout(() => {
            timers.delete(timer);
            // Timers count the loop's millisecond clock, not Date.now(): one can fire a millisecond
            // before the retry is due, when a claim would find nothing and leave it to the poll.
            if (Date.now() < at) {
                wakeAt(at);
                return;
            }

            wake();
        }, Math.max(0, wait));
        timer.unref();
        timers.add(timer);
    };

    // Removes the deliveries done so far and claims what the free slots can take (none when closing).
    const settleAndClaim = async (free: number): Promise<OutboxDelivery[]> => {
        const finished = done.splice(0);
        try {
            return await track(claim.call(store, kind, targets, free, timeoutMs + LEASE_MARGIN_MS, finished));
        }
        catch (err) {
            // Not removed: the next transaction tries again.
            done.unshift(...finished);
            throw err;
        }
    };

    // Settles and claims, again while claims come back full or more deliveries finished meanwhile.
    const pump = async (): Promise<void> => {
        if (pumping) {
            again = true;
            return;
        }

        pumping = true;
        try {
            do {
                again = false;
                const free = concurrency - sending.size;
                if (closed || (free < 1 && done.length === 0)) {
                    break;
                }

                const claimed = await settleAndClaim(Math.max(0, free));
                if (closed) {
                    // Claimed while closing: the leases run out and a process sends them.
                    break;
                }

                for (const delivery of claimed) {
                    const attempt = send(delivery)
                        .catch((err: unknown) => log(`${kind} delivery ${delivery.id} failed to record; sent again after its lease`, err))
                        .finally(() => {
                            sending.delete(attempt);
                            wake();
                        });
                    sending.add(attempt);
                }

                again ||= free > 0 && claimed.length === free;
            } while (again);
        }
        catch (err) {
            log(`reading the ${kind} outbox failed; trying again at the next poll`, err);
        }
        finally {
            pumping = false;
        }
    };

    const wake = () => {
        if (!closed) {
            void pump();
        }
    };

    const tick = () => {
        const now = Date.now();
        if (now - lastDrop >= DROP_EVERY_MS) {
            lastDrop = now;
            void track(drop.call(store, kind, now - giveUpAfterMs)).then((dropped) => {
                if (dropped > 0) {
                    log(`${dropped} ${kind} deliveries older than ${giveUpAfterMs} ms dropped (their target is no longer configured here, or they kept failing)`);
                }
            }, (err: unknown) => log(`dropping old ${kind} deliveries failed`, err));
        }

        wake();
    };

    const poll = setInterval(tick, options.pollIntervalMs ?? DEFAULT_DELIVERY_POLL_MS);
    poll.unref();
    tick();

    return {
        wake,
        async close() {
            closed = true;
            clearInterval(poll);
            timers.forEach(clearTimeout);
            controller.abort();
            while (sending.size > 0 || reading.size > 0) {
                await Promise.allSettled([...sending, ...reading]);
            }

            if (done.length > 0) {
                await settleAndClaim(0).catch((err: unknown) => log(`recording sent ${kind} deliveries failed; they are sent again after their lease`, err));
            }
        }
    };
}
