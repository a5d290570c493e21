import type { Readable } from 'node:stream';
import type { MessageReservation } from '../../lib/util/message-budget';

/**
 * Bytes of one message read per turn of the event loop; past them the stream pauses until
 * the next turn. libuv reads a ready socket up to 32 times (2 MiB) before it looks at
 * the next one, so a few senders of large messages held every turn, and a request that had
 * arrived waited unread (bench/README.md, "BYTES_PER_TURN").
 */
export const BYTES_PER_TURN = 64 * 1024;

/** What the DATA of one message came to. */
export interface ReceivedMessage {
    /** The whole message (after dot-unstuffing); null when it was over the cap or the client left before its end. */
    raw: Buffer | null;
    /** Bytes the client sent, all of them (past the cap they are counted and dropped). */
    bytes: number;
    /** More than the cap was sent: everything was dropped once the cap was passed. */
    tooLarge: boolean;
    /** The memory budget could not hold it: everything was dropped once it ran out. */
    overBudget: boolean;
    /** The connection closed (or the stream failed) before the end of DATA. */
    aborted: boolean;
    /** The most bytes held at any one time: never more than the cap plus one chunk. */
    peakHeldBytes: number;
}

/**
 * Reads the DATA stream of one message into one Buffer, holding at most `maxBytes`:
 * the moment more arrives, what was held is dropped and the rest is only counted
 * while it drains (the reply can only come after the client's final dot anyway).
 * The stream is read in full, so the session stays usable after a refusal. Plain
 * 'data' listeners, no pipe or async iterator: this runs once per message, and the
 * core takes a Buffer as it is (never copied again). Every byte held is first reserved
 * from `reservation` (null: the budget had nothing left; absent: no budget); when it cannot be, the
 * message is dropped the same way and the reservation released. With `onOverBudget`, that moment
 * ends the reading instead: it is called once, the result comes at once, and the caller closes
 * the connection (draining a refused message costs the server as much as storing it).
 * After `BYTES_PER_TURN` in one turn the stream pauses until the next (setImmediate): the
 * pause reaches the socket through smtp-server's pipe, which stops reading it, so every
 * connection and `/health` get their turn.
 */
export function receiveMessage(stream: Readable, maxBytes: number, reservation?: MessageReservation | null, onOverBudget?: () => void): Promise<ReceivedMessage> {
    return new Promise((resolve) => {
        let chunks: Buffer[] = [];
        let held = 0;
        let bytes = 0;
        let peakHeldBytes = 0;
        let tooLarge = false;
        let overBudget = reservation === null;
        let settled = false;
        let turnBytes = 0;
        let yielding = false;

        const finish = (aborted: boolean) => {
            if (settled) {
                return;
            }

            settled = true;
            stream.off('data', onData);
            const raw = aborted || tooLarge || overBudget ? null : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, held);
            chunks = [];
            resolve({ raw, bytes, tooLarge, overBudget, aborted, peakHeldBytes });
        };

        const drop = () => {
            chunks = [];
            held = 0;
            reservation?.release();
        };

        const nextTurn = () => {
            yielding = false;
            turnBytes = 0;
            if (!settled) {
                stream.resume();
            }
        };

        const onData = (chunk: Buffer) => {
            bytes += chunk.length;
            turnBytes += chunk.length;
            if (turnBytes >= BYTES_PER_TURN && !yielding) {
                yielding = true;
                stream.pause();
                setImmediate(nextTurn);
            }

            if (tooLarge || bytes > maxBytes) {
                tooLarge = true;
                drop();
                return;
            }

            if (overBudget || (reservation && !reservation.grow(chunk.length))) {
                overBudget = true;
                drop();
                if (onOverBudget) {
                    finish(false);
                    onOverBudget();
                }

                return;
            }

            chunks.push(chunk);
            held += chunk.length;
            peakHeldBytes = Math.max(peakHeldBytes, held);
        };

        stream.on('data', onData);
        stream.once('end', () => finish(false));
        // smtp-server destroys the stream (with an error when someone listens) when the
        // client goes away mid-DATA; 'close' without 'end' is that case.
        stream.on('error', () => finish(true));
        stream.once('close', () => finish(!stream.readableEnded));
    });
}
