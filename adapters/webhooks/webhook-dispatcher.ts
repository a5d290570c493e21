/**
 * Sends the webhook outbox (docs/api.md, "Webhooks"): claims due deliveries from the record store,
 * POSTs them a few at a time, records success or the next attempt. Nothing on the ingest
 * path waits for it: an ingest only writes outbox rows and wakes it.
 */

import { backoffMs } from '../../lib/util/backoff';
import type { RecordStore, WebhookDelivery } from '../../lib/record-store/record-store';
import type { EmailRecord } from '../../lib/types';
import { webhookRequest } from './webhook-payload';
import { postWebhook } from './webhook-post';
import type { WebhookTarget } from './webhook-target';

/** A 2xx within this long is success (docs/api.md, "Webhooks"), ms. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
/** Wait before the first retry, ms: within the 10 s the rule allows; doubles per retry. */
export const DEFAULT_WEBHOOK_FIRST_RETRY_MS = 5_000;
/** Longest wait between two attempts, ms: an hour, so a receiver back after a day's outage hears within the hour. */
export const DEFAULT_WEBHOOK_MAX_RETRY_MS = 3_600_000;
/** A delivery still failing this long after its email was stored is given up, ms: 24 h (the rule asks at least 1 h). */
export const DEFAULT_WEBHOOK_GIVE_UP_MS = 24 * 3_600_000;
/** How often the outbox is read for retries and other processes' rows, ms (a save in this process wakes it at once). */
export const DEFAULT_WEBHOOK_POLL_MS = 1_000;
/** POSTs in flight at once per process: a dead receiver holds at most this many sockets. */
export const DEFAULT_WEBHOOK_CONCURRENCY = 8;
/** A claim outlives the attempt's deadline by this much, ms, before another process may take the delivery. */
const LEASE_MARGIN_MS = 5_000;
/** Retries due within this long get a timer of their own, ms; later ones are found by the poll. */
const TIMED_RETRY_MS = 60_000;
/** How often deliveries past the give-up age are dropped (those of URLs no longer configured), ms. */
const DROP_EVERY_MS = 60_000;

/** How deliveries are timed; each has a default. */
export interface WebhookDeliveryOptions {
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
    /** POSTs in flight at once (default 8). */
    concurrency?: number;
}

/** What a dispatcher sends, and from where. */
export interface WebhookDispatcherOptions extends WebhookDeliveryOptions {
    recordStore: RecordStore;
    targets: readonly WebhookTarget[];
    /** The email object of a record as the API shows it (the adapter's: the core knows no URL of its own). */
    render(record: EmailRecord): unknown;
    log?: (message: string, error?: unknown) => void;
}

/** A running dispatcher. */
export interface WebhookDispatcher {
    /** Looks for due deliveries now (a save just wrote some). */
    wake(): void;
    /** Stops polling, aborts the POSTs in flight (their deliveries are sent again after their lease) and waits for them. */
    close(): Promise<void>;
}

/** Starts sending the outbox of `recordStore` to `targets`. */
export function startWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
    const { recordStore: store, render } = options;
    const log = options.log ?? (() => undefined);
    const timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    const backoff = { firstMs: options.firstRetryMs ?? DEFAULT_WEBHOOK_FIRST_RETRY_MS, maxMs: options.maxRetryMs ?? DEFAULT_WEBHOOK_MAX_RETRY_MS };
    const giveUpAfterMs = options.giveUpAfterMs ?? DEFAULT_WEBHOOK_GIVE_UP_MS;
    const concurrency = options.concurrency ?? DEFAULT_WEBHOOK_CONCURRENCY;
    const { claimWebhookDeliveries: claim, retryWebhookDelivery: retry, dropWebhookDeliveriesBefore: drop } = store;
    if (!claim || !retry || !drop) {
        throw new TypeError('webhooks need a record store with a webhook outbox (createKnexRecordStore)');
    }

    const secrets = new Map(options.targets.map((t) => [t.url, t.secret]));
    const urls = [...secrets.keys()];
    const controller = new AbortController();
    const sending = new Set<Promise<void>>();
    // Deliveries that are done (sent, skipped, given up): removed by the next claim's transaction,
    // so a busy receiver costs one write transaction per batch of deliveries, not one each.
    const done: WebhookDelivery[] = [];
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
    const send = async (delivery: WebhookDelivery): Promise<void> => {
        const record = await store.getEmail(delivery.messageId);
        if (!record) {
            // Deleted before it was sent: there is nothing left to tell.
            done.push(delivery);
            return;
        }

        const { body, headers } = webhookRequest(delivery.id, render(record), secrets.get(delivery.url));
        const outcome = await postWebhook(delivery.url, body, headers, timeoutMs, controller.signal);
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
            log(`webhook delivery ${delivery.id} to ${delivery.url} given up after ${delivery.attempts + 1} attempts: ${outcome.error}`);
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
    const settleAndClaim = async (free: number): Promise<WebhookDelivery[]> => {
        const finished = done.splice(0);
        try {
            return await track(claim.call(store, urls, free, timeoutMs + LEASE_MARGIN_MS, finished));
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
                        .catch((err: unknown) => log(`webhook delivery ${delivery.id} failed to record; sent again after its lease`, err))
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
            log('reading the webhook outbox failed; trying again at the next poll', err);
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
            void track(drop.call(store, now - giveUpAfterMs)).then((dropped) => {
                if (dropped > 0) {
                    log(`${dropped} webhook deliveries older than ${giveUpAfterMs} ms dropped (their URL is no longer configured here, or they kept failing)`);
                }
            }, (err: unknown) => log('dropping old webhook deliveries failed', err));
        }

        wake();
    };

    const poll = setInterval(tick, options.pollIntervalMs ?? DEFAULT_WEBHOOK_POLL_MS);
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
                await settleAndClaim(0).catch((err: unknown) => log('recording sent webhook deliveries failed; they are sent again after their lease', err));
            }
        }
    };
}
