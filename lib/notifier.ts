import { EventEmitter } from 'node:events';

/** Tells waiting list requests "mail arrived for inbox X". */
export interface Notifier {
    /** Announces new mail for an inbox. */
    publish(inbox: string): void;
    /** Calls `listener` on each announcement for `inbox`; returns the unsubscribe function. */
    subscribe(inbox: string, listener: () => void): () => void;
    /** Number of live subscriptions (for leak checks). */
    subscriberCount(): number;
}

/** An in-process notifier: one emitter, one event name per inbox. */
export function createNotifier(): Notifier {
    const emitter = new EventEmitter();
    // Ten thousand waiters on one inbox is a supported load, not a leak.
    emitter.setMaxListeners(0);
    let count = 0;

    return {
        publish(inbox) {
            emitter.emit(inbox);
        },
        subscribe(inbox, listener) {
            emitter.on(inbox, listener);
            count++;
            let active = true;
            return () => {
                if (active) {
                    active = false;
                    count--;
                    emitter.off(inbox, listener);
                }
            };
        },
        subscriberCount() {
            return count;
        }
    };
}
