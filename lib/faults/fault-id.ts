import { randomBytes } from 'node:crypto';

/**
 * Ids of fault rules in the order they were made: when several rules match, the oldest
 * wins (docs/api.md, "Faults"), and rules are listed by creation time, then id. Two rules
 * made in the same millisecond must not fall into a random order, so an id is a UUID of
 * version 7 (RFC 9562: the millisecond, then a counter within it, then random bits), and
 * the time it carries is the rule's createdAt.
 */

let lastMs = 0;
let counter = 0;
/** rand_a holds 12 bits: the counter's room within one millisecond before the clock is moved on by one. */
const COUNTER_LIMIT = 0x1000;

/** A new time-ordered id and the millisecond it carries, later than every one this process made before. */
export function nextFaultId(now = Date.now()): { id: string; createdAt: number } {
    if (now > lastMs) {
        lastMs = now;
        counter = 0;
    }
    else if (++counter >= COUNTER_LIMIT) {
        // Out of counter (or the clock went back): borrow the next millisecond.
        lastMs += 1;
        counter = 0;
    }

    const bytes = randomBytes(16);
    bytes.writeUIntBE(lastMs, 0, 6);
    bytes[6] = 0x70 | (counter >> 8);
    bytes[7] = counter & 0xff;
    bytes[8] = 0x80 | (bytes[8]! & 0x3f);
    const hex = bytes.toString('hex');
    return { id: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`, createdAt: lastMs };
}
