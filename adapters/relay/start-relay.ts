/**
 * The relay of one plugin registration (docs/api.md, "Release" and "Auto-relay"): a
 * connection per release, and for auto-relay a pooled client and the outbox's sender.
 */

import { DEFAULT_DELIVERY_CONCURRENCY, type OutboxDispatcher } from '../../lib/outbox/outbox-dispatcher';
import type { Relay } from '../../lib/relay/relay';
import type { InboxCapture } from '../../lib/service/inbox-capture';
import { autoMatcher } from './auto-match';
import { startAutoRelay } from './auto-relay';
import { createRelay, type RelayOptions } from './relay-options';

/** Messages auto-relay sends over one pooled connection before it is renewed. */
const POOLED_MESSAGES = 100;

/** A started relay: what releases go through, and the stop of everything it opened. */
export interface StartedRelay {
    relay: Relay;
    close(): Promise<void>;
}

/** Builds the relay of a validated `relay` option and, with `autoMatch`, starts auto-relay on `capture`. */
export function startRelay(capture: Pick<InboxCapture, 'recordStore' | 'blobStore' | 'routeDeliveries'>, options: RelayOptions, log: (message: string, error?: unknown) => void): StartedRelay {
    const relay = createRelay(options);
    let auto: { relay: Relay; dispatcher: OutboxDispatcher } | undefined;
    try {
        if (options.autoMatch !== undefined) {
            const matches = autoMatcher(options.autoMatch, capture.recordStore);
            const concurrency = options.delivery?.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY;
            const pooled = createRelay(options, { maxConnections: concurrency, maxMessages: POOLED_MESSAGES });
            auto = { relay: pooled, dispatcher: startAutoRelay(capture, { ...options.delivery, relay: pooled, matches, relayTimeoutMs: options.timeoutMs, log }) };
        }
    }
    catch (err) {
        relay.transport.close?.();
        throw err;
    }

    return {
        relay,
        async close() {
            await auto?.dispatcher.close();
            auto?.relay.transport.close?.();
            relay.transport.close?.();
        }
    };
}
