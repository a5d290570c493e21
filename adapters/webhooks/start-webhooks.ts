/**
 * Webhooks for one service: its ingests save a delivery per stored copy and URL in their
 * commit (the record store's outbox), and the dispatcher here POSTs them. The plugin starts
 * them for its `webhooks` option (so the standalone program, which passes the environment's
 * webhooks to the plugin, does too); the CLI only records (a running service sends).
 */

import type { InboxCapture } from '../../lib/service/inbox-capture';
import { startWebhookDispatcher, type WebhookDispatcher, type WebhookDispatcherOptions } from './webhook-dispatcher';
import { webhookUrlsFor, type WebhookTarget } from './webhook-target';
import { metricsOf } from '../metrics/service-metrics';
import { routeDispatcher } from '../../lib/outbox/route-dispatcher';

/** What startWebhooks() needs beside the service: the targets, the email's rendering, timing and a log. */
export type StartWebhooksOptions = Omit<WebhookDispatcherOptions, 'recordStore' | 'onAttempt'>;

/**
 * Starts sending `capture`'s webhook outbox to `options.targets` (and the deliveries other
 * processes left) and routes every ingest of it from now on to them. Once per service;
 * `close()` of the answer, or of the service, stops it.
 */
export function startWebhooks(capture: Pick<InboxCapture, 'recordStore' | 'routeDeliveries'>, options: StartWebhooksOptions): WebhookDispatcher {
    // Each attempt is counted in the service's metrics while they are on (docs/operations.md, "Metrics").
    const dispatcher = startWebhookDispatcher({ ...options, recordStore: capture.recordStore, onAttempt: (ok) => metricsOf(capture)?.webhookAttempt(ok) });
    return routeDispatcher(capture, 'webhook', (draft) => webhookUrlsFor(options.targets, draft.inbox), dispatcher);
}

/**
 * Has `capture`'s ingests save their deliveries to `targets` without sending any: a
 * running service's dispatcher sends them (`inbox-capture ingest` does this).
 */
export function recordWebhooks(capture: Pick<InboxCapture, 'routeDeliveries'>, targets: readonly WebhookTarget[]): void {
    capture.routeDeliveries('webhook', {
        targetsFor: (draft) => webhookUrlsFor(targets, draft.inbox),
        wake: () => undefined,
        close: () => Promise.resolve()
    });
}
