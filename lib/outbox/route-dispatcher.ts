/** A dispatcher routed: the service's ingests write deliveries of its kind, and it sends them. */

import type { DeliveryKind } from '../record-store/record-store';
import type { DeliverySender, InboxCapture } from '../service/inbox-capture';
import type { OutboxDispatcher } from './outbox-dispatcher';

/**
 * Routes every ingest of `capture` from now on to `dispatcher` (a delivery of `kind` per
 * target `targetsFor` names), and answers the dispatcher whose close() also ends the
 * routing. Once per kind and service; a refusal closes the dispatcher and throws.
 */
export function routeDispatcher(capture: Pick<InboxCapture, 'routeDeliveries'>, kind: DeliveryKind, targetsFor: DeliverySender['targetsFor'], dispatcher: OutboxDispatcher): OutboxDispatcher {
    let stop: () => Promise<void>;
    try {
        stop = capture.routeDeliveries(kind, { targetsFor, wake: () => dispatcher.wake(), close: () => dispatcher.close() });
    }
    catch (err) {
        void dispatcher.close();
        throw err;
    }

    return { wake: () => dispatcher.wake(), close: () => stop() };
}
