/**
 * The senders of a service's outbox, one per kind of delivery (docs/design.md, "One outbox,
 * deliveries of kinds"): the ingest asks whichever are current which targets a copy goes to
 * and wakes them after its commit; senders come and go after the ingest is built.
 */

import { InboxCaptureError } from '../errors';
import type { DeliveryRouting } from '../ingest/ingest';
import type { DeliveryKind, DeliveryTarget } from '../record-store/record-store';
import type { EmailDraft } from '../types';

/**
 * Who delivers one kind of the outbox (adapters/webhooks and adapters/relay start one):
 * the targets of its kind a copy goes to, a wake-up after a commit that saved deliveries,
 * and a stop.
 */
export interface DeliverySender {
    /** The targets of this kind for a copy about to be stored (none: no delivery). */
    targetsFor(draft: EmailDraft): string[];
    /** Called after a commit that wrote deliveries; must not block. */
    wake(): void;
    /** Stops sending and waits for what is in flight; its last writes need the stores open. */
    close(): Promise<void>;
}

/** The current senders: what the ingest routes through, how one is added, and the stop of all. */
export interface DeliverySenders extends DeliveryRouting {
    /** Adds the sender of `kind` (one per kind); answers its stop, which removes and closes it. */
    route(kind: DeliveryKind, sender: DeliverySender): () => Promise<void>;
    /** Removes every sender and closes each in turn. */
    closeAll(): Promise<void>;
}

/** No sender yet. */
export function createDeliverySenders(): DeliverySenders {
    const senders = new Map<DeliveryKind, DeliverySender>();
    return {
        targetsFor(draft) {
            const targets: DeliveryTarget[] = [];
            for (const [kind, sender] of senders) {
                for (const target of sender.targetsFor(draft)) {
                    targets.push({ kind, target });
                }
            }

            return targets;
        },

        wake() {
            senders.forEach((sender) => sender.wake());
        },

        route(kind, sender) {
            if (senders.has(kind)) {
                throw new InboxCaptureError('INVALID_INPUT', `${kind} deliveries are already routed for this service`);
            }

            senders.set(kind, sender);
            return async () => {
                if (senders.get(kind) === sender) {
                    senders.delete(kind);
                    await sender.close();
                }
            };
        },

        async closeAll() {
            const stopping = [...senders.values()];
            senders.clear();
            for (const sender of stopping) {
                await sender.close();
            }
        }
    };
}
