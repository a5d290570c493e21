/** Tells waiting list requests "mail arrived for inbox X". */
export interface Notifier {
    /** Announces new mail for an inbox. */
    publish(inbox: string): void;
    /** Calls `listener` on each announcement for `inbox`; returns the unsubscribe function. */
    subscribe(inbox: string, listener: () => void): () => void;
    /** Number of live subscriptions (for leak checks). */
    subscriberCount(): number;
}

/**
 * An in-process notifier: one set of listeners per inbox. Sets rather than an
 * EventEmitter because waking N waiters of one inbox unsubscribes N listeners, and an
 * emitter's removal scans its array: quadratic at ten thousand waiters.
 */
export function createNotifier(): Notifier {
    const inboxes = new Map<string, Set<() => void>>();
    let count = 0;

    return {
        publish(inbox) {
            const listeners = inboxes.get(inbox);
            if (!listeners) {
                return;
            }

            // A copy: listeners unsubscribe while they run.
            for (const listener of [...listeners]) {
                listener();
            }
        },
        subscribe(inbox, listener) {
            let listeners = inboxes.get(inbox);
            if (!listeners) {
                listeners = new Set();
                inboxes.set(inbox, listeners);
            }

            // Wrapped so the same function subscribed twice is two subscriptions.
            const entry = () => listener();
            listeners.add(entry);
            count++;
            let active = true;
            return () => {
                if (!active) {
                    return;
                }

                active = false;
                count--;
                const current = inboxes.get(inbox);
                current?.delete(entry);
                if (current?.size === 0) {
                    inboxes.delete(inbox);
                }
            };
        },
        subscriberCount() {
            return count;
        }
    };
}
