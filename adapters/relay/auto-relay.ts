/**
 * Auto-relay (docs/api.md, "Auto-relay"): every captured copy whose recipient the allow-list
 * names gets a relay delivery in its commit (the outbox, as webhooks do); the dispatcher
 * then sends those that match the query, at least once, retried with backoff.
 */

import { startOutboxDispatcher, type DeliveryTimingOptions, type OutboxDispatcher } from '../../lib/outbox/outbox-dispatcher';
import { isInboxCaptureError } from '../../lib/errors';
import { relayEmail, type Relay } from '../../lib/relay/relay';
import { MAX_RELAY_HOPS, RELAY_MEMORY_MS, relayKeys } from '../../lib/relay/relay-loop';
import { routeDispatcher } from '../../lib/outbox/route-dispatcher';
import type { InboxCapture } from '../../lib/service/inbox-capture';
import type { EmailDraft, EmailRecord } from '../../lib/types';
import { DEFAULT_RELAY_TIMEOUT_MS } from './smtp-relay';

/** The outbox target of relay deliveries: the one relay a service has. */
export const RELAY_TARGET = 'relay';

/**
 * Whether a stored email is one the auto-relay sends: the one seam between the relay and
 * the query language (auto-match.ts builds it from INBOX_CAPTURE_RELAY_AUTO_MATCH).
 */
export type AutoRelayMatcher = (record: EmailRecord) => Promise<boolean>;

/** The relay deliveries of a copy: one when the allow-list names its recipient. */
function relayTargets(allow: Relay['allow']): (draft: EmailDraft) => string[] {
    return (draft) => (allow.allows(draft.recipient) ? [RELAY_TARGET] : []);
}

/** What the auto-relay sends, and how its attempts are timed. */
export interface AutoRelayOptions extends Omit<DeliveryTimingOptions, 'timeoutMs'> {
    relay: Relay;
    matches: AutoRelayMatcher;
    /** The relay's own deadline of each SMTP step, ms (default 10000): an attempt's lease covers a few. */
    relayTimeoutMs?: number;
    log?: (message: string, error?: unknown) => void;
}

/**
 * Routes `capture`'s ingests to the relay (a delivery per copy with an allowed recipient)
 * and starts sending them. Once per service; `close()` of the answer, or of the service, stops it.
 */
export function startAutoRelay(capture: Pick<InboxCapture, 'recordStore' | 'blobStore' | 'routeDeliveries'>, options: AutoRelayOptions): OutboxDispatcher {
    const { relay, matches, relayTimeoutMs, ...timing } = options;
    const log = options.log ?? (() => undefined);
    const dispatcher = startOutboxDispatcher({
        ...timing,
        recordStore: capture.recordStore,
        kind: 'relay',
        targets: [RELAY_TARGET],
        // Connect, greeting, AUTH, MAIL, RCPT and DATA each get the relay's deadline; the lease covers three.
        timeoutMs: 3 * (relayTimeoutMs ?? DEFAULT_RELAY_TIMEOUT_MS),
        async attempt(delivery, record) {
            try {
                // Asked when the delivery is first due, just after the commit: what does not match is done.
                if (!relay.allow.allows(record.recipient) || !await matches(record)) {
                    return { ok: true };
                }

                // A copy of a message already relayed to this recipient came back (a relay routing it
                // here again): done without sending, or it would go round for ever.
                const now = Date.now();
                if (capture.recordStore.claimRelayKeys && !await capture.recordStore.claimRelayKeys(relayKeys(record), delivery.id, now, now - RELAY_MEMORY_MS)) {
                    log(`auto-relay of ${record.messageId} to ${record.recipient} skipped: that message was relayed to that recipient before (a relay loop?)`);
                    return { ok: true };
                }

                await relayEmail(relay, capture.blobStore, record, undefined, { maxHops: MAX_RELAY_HOPS });
                return { ok: true };
            }
            catch (err) {
                if (isInboxCaptureError(err, 'TOO_MANY_HOPS')) {
                    log(`auto-relay of ${record.messageId} to ${record.recipient} skipped`, err);
                    return { ok: true };
                }

                // Every refusal is logged with the relay's reply (it is retried, so this is once per attempt).
                log(`auto-relay of ${record.messageId} to ${record.recipient} failed; retried with backoff`, err);
                return { ok: false, error: err instanceof Error ? err.message : String(err) };
            }
        }
    });
    return routeDispatcher(capture, 'relay', relayTargets(relay.allow), dispatcher);
}

/**
 * Has `capture`'s ingests save a relay delivery for each copy whose recipient `allow`
 * names, without sending any: a running service's auto-relay sends them (`inbox-capture
 * ingest` does this when INBOX_CAPTURE_RELAY_AUTO_MATCH is set).
 */
export function recordAutoRelay(capture: Pick<InboxCapture, 'routeDeliveries'>, allow: Relay['allow']): void {
    capture.routeDeliveries('relay', {
        targetsFor: relayTargets(allow),
        wake: () => undefined,
        close: () => Promise.resolve()
    });
}
