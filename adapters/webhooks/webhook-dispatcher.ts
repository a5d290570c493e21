/**
 * Sends the webhook deliveries of the outbox (docs/api.md, "Webhooks"): the outbox's own
 * dispatcher (lib/outbox) with a POST as its attempt.
 */

import {
    DEFAULT_DELIVERY_CONCURRENCY, DEFAULT_DELIVERY_FIRST_RETRY_MS, DEFAULT_DELIVERY_GIVE_UP_MS, DEFAULT_DELIVERY_MAX_RETRY_MS,
    DEFAULT_DELIVERY_POLL_MS, DEFAULT_DELIVERY_TIMEOUT_MS, startOutboxDispatcher, type DeliveryTimingOptions, type OutboxDispatcher
} from '../../lib/outbox/outbox-dispatcher';
import type { RecordStore } from '../../lib/record-store/record-store';
import type { EmailRecord } from '../../lib/types';
import { webhookRequest, type WebhookEmail } from './webhook-payload';
import { webhookKey } from './webhook-secret';
import { postWebhook } from './webhook-post';
import type { WebhookTarget } from './webhook-target';

/** A 2xx within this long is success (docs/api.md, "Webhooks"), ms. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = DEFAULT_DELIVERY_TIMEOUT_MS;
/** Wait before the first retry, ms; doubles per retry. */
export const DEFAULT_WEBHOOK_FIRST_RETRY_MS = DEFAULT_DELIVERY_FIRST_RETRY_MS;
/** Longest wait between two attempts, ms. */
export const DEFAULT_WEBHOOK_MAX_RETRY_MS = DEFAULT_DELIVERY_MAX_RETRY_MS;
/** A delivery still failing this long after its email was stored is given up, ms. */
export const DEFAULT_WEBHOOK_GIVE_UP_MS = DEFAULT_DELIVERY_GIVE_UP_MS;
/** How often the outbox is read for retries and other processes' rows, ms. */
export const DEFAULT_WEBHOOK_POLL_MS = DEFAULT_DELIVERY_POLL_MS;
/** POSTs in flight at once per process. */
export const DEFAULT_WEBHOOK_CONCURRENCY = DEFAULT_DELIVERY_CONCURRENCY;

/** How webhook deliveries are timed; each has a default. */
export type WebhookDeliveryOptions = DeliveryTimingOptions;

/** What a dispatcher sends, and from where. */
export interface WebhookDispatcherOptions extends WebhookDeliveryOptions {
    recordStore: RecordStore;
    targets: readonly WebhookTarget[];
    /** The email object of a record as the API shows it (the adapter's: the core knows no URL of its own). */
    render(record: EmailRecord): WebhookEmail;
    log?: (message: string, error?: unknown) => void;
    /** Told how each attempt ended (the metrics' webhook counter). */
    onAttempt?: (ok: boolean) => void;
}

/** A running dispatcher. */
export type WebhookDispatcher = OutboxDispatcher;

/** Starts sending the webhook deliveries of `recordStore` to `targets`. */
export function startWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
    const { targets, render, onAttempt, ...rest } = options;
    // Each target's HMAC key, worked out once: a malformed secret fails the start, never a POST.
    const keys = new Map(targets.map((t): [string, Buffer | undefined] => {
        const key = t.secret === undefined ? undefined : webhookKey(t.secret);
        if (typeof key === 'string') {
            throw new TypeError(`webhook ${t.url}: ${key}`);
        }

        return [t.url, key];
    }));
    return startOutboxDispatcher({
        ...rest,
        kind: 'webhook',
        targets: [...keys.keys()],
        async attempt(delivery, record, timeoutMs, signal) {
            const { body, headers } = webhookRequest(delivery.id, render(record), keys.get(delivery.target));
            const outcome = await postWebhook(delivery.target, body, headers, timeoutMs, signal);
            onAttempt?.(outcome.ok);
            return outcome.ok ? { ok: true } : outcome;
        }
    });
}
