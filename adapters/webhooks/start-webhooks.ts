/**
 * Webhooks for one service: its ingests save a delivery per stored copy and URL in their
 * commit (the record store's outbox), and the dispatcher here POSTs them. The plugin starts
 * them for its `webhooks` option (so the standalone program, which passes the environment's
 * webhooks to the plugin, does too); the CLI only records (a running service sends).
 */

import type { InboxCapture } from '../../lib/service/inbox-capture';
import { startWebhookDispatcher, type WebhookDispatcher, type WebhookDispatcherOptions } from './webhook-dispatcher';
import { webhookUrlsFor, type WebhookTarget } from './webhook-target';

/** What startWebhooks() needs beside the service: the targets, the email's rendering, timing and a log. */
export type StartWebhooksOptions = Omit<WebhookDispatcherOptions, 'recordStore'>;

/**
 * Starts sending `capture`'s webhook outbox to `options.targets` (and the deliveries other
 * processes left) and routes every ingest of it from now on to them. Once per service;
 * `close()` of the answer, or of the service, stops it.
 */
export function startWebhooks(capture: Pick<InboxCapture, 'recordStore' | 'routeWebhooks'>, options: StartWebhooksOptions): WebhookDispatcher {
    const dispatcher = startWebhookDispatcher({ ...options, recordStore: capture.recordStore });
    let stop: () => Promise<void>;
    try {
        stop = capture.routeWebhooks({
            urlsFor: (inbox) => webhookUrlsFor(options.targets, inbox),
            wake: () => dispatcher.wake(),
            close: () => dispatcher.close()
        });
    }
    catch (err) {
        void dispatcher.close();
        throw err;
    }

    return { wake: () => dispatcher.wake(), close: () => stop() };
}

/**
 * Has `capture`'s ingests save their deliveries to `targets` without sending any: a
 * running service's dispatcher sends them (`inbox-capture ingest` does this).
 */
export function recordWebhooks(capture: Pick<InboxCapture, 'routeWebhooks'>, targets: readonly WebhookTarget[]): void {
    capture.routeWebhooks({
        urlsFor: (inbox) => webhookUrlsFor(targets, inbox),
        wake: () => undefined,
        close: () => Promise.resolve()
    });
}
