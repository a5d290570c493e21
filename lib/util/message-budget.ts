/**
 * The memory budget for message bytes in flight: every SMTP session in DATA and every
 * ingest holds a reservation for the raw bytes it has read, and a message that does not
 * fit is refused with the retryable `BUSY` instead of growing the process until it dies.
 * Parsing a message costs a few times its raw size (bench/README.md), so the budget
 * counts raw bytes and its default (defaults.ts) leaves room for that expansion. Each
 * service owns one; its SMTP listener and its plugin use that one.
 */
import { InboxCaptureError } from '../errors';

/** Bytes one message holds of a budget; grows while the message is read. */
export interface MessageReservation {
    /** Bytes reserved now. */
    readonly bytes: number;
    /** Reserves `bytes` more; false (and nothing reserved) when the budget cannot give them. */
    grow(bytes: number): boolean;
    /** Gives every byte back; later calls do nothing. */
    release(): void;
}

/** An accountant of message bytes in flight, shared by every session and ingest that use it. */
export interface MessageBudget {
    /** The most bytes held at once (one message alone may exceed it, see `reserve()`). */
    readonly limitBytes: number;
    /** Bytes held now. */
    readonly heldBytes: number;
    /**
     * Starts a reservation of `bytes` (0 to grow it while reading), or null when they do
     * not fit. A reservation that would be alone in the budget always fits, so a budget
     * below the message cap slows intake to one message at a time, never to none.
     */
    reserve(bytes: number): MessageReservation | null;
}

/** A budget of `limitBytes` raw message bytes in flight. */
export function createMessageBudget(limitBytes: number): MessageBudget {
    if (!(Number.isSafeInteger(limitBytes) && limitBytes >= 1)) {
        throw new TypeError(`limitBytes must be a positive integer, not ${limitBytes}`);
    }

    let held = 0;
    let holders = 0;
    // Alone: the only reservation, which may pass the limit (see reserve()).
    const fits = (bytes: number, alone: boolean) => alone || held + bytes <= limitBytes;

    return {
        limitBytes,

        get heldBytes() {
            return held;
        },

        reserve(initial) {
            if (!fits(initial, holders === 0)) {
                return null;
            }

            let bytes = initial;
            let released = false;
            held += bytes;
            holders++;
            return {
                get bytes() {
                    return released ? 0 : bytes;
                },

                grow(more) {
                    if (released || !fits(more, holders === 1)) {
                        return false;
                    }

                    bytes += more;
                    held += more;
                    return true;
                },

                release() {
                    if (!released) {
                        released = true;
                        held -= bytes;
                        holders--;
                    }
                }
            };
        }
    };
}

/** The error of a message refused because the budget is spent: retry later. */
export function budgetSpent(): InboxCaptureError {
    return new InboxCaptureError('BUSY', 'message bytes in flight would exceed the memory budget');
}
