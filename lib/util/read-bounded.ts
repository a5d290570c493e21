import type { Readable } from 'node:stream';
import { InboxCaptureError } from '../errors';
import { budgetSpent, type MessageReservation } from './message-budget';

/**
 * Reads a whole message into one Buffer, refusing it with `TOO_LARGE` once it
 * holds more than `maxBytes`. Bytes are counted while a stream flows, so an
 * oversized stream is destroyed early instead of being read to its end.
 * A string is taken as UTF-8; a Buffer is returned as is (never copied). `what`
 * names the input in the error ("message exceeds …", "blob exceeds …"). With a
 * `reservation`, every byte held is reserved first: `BUSY` when the budget cannot give it.
 */
export async function readBounded(input: Buffer | string | Readable, maxBytes: number, what = 'message', reservation?: MessageReservation): Promise<Buffer> {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
        throw new InboxCaptureError('INVALID_INPUT', `maxBytes must be a non-negative integer, got ${maxBytes}`);
    }

    if (Buffer.isBuffer(input)) {
        if (input.length > maxBytes) {
            throw tooLarge(what, maxBytes);
        }

        reserveUpTo(reservation, input.length);
        return input;
    }

    if (typeof input === 'string') {
        // Measured before encoding, so an oversized string is never copied.
        if (Buffer.byteLength(input, 'utf8') > maxBytes) {
            throw tooLarge(what, maxBytes);
        }

        reserveUpTo(reservation, Buffer.byteLength(input, 'utf8'));
        return Buffer.from(input, 'utf8');
    }

    if (!input || typeof input.on !== 'function' || typeof input[Symbol.asyncIterator] !== 'function') {
        throw new InboxCaptureError('INVALID_INPUT', 'message must be a Buffer, a string or a Readable stream');
    }

    const chunks: Buffer[] = [];
    let total = 0;
    try {
        // Leaving this loop by a throw makes the iterator destroy the stream,
        // so the rest of an oversized message is never read.
        for await (const chunk of input) {
            const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string | Uint8Array);
            total += buffer.length;
            if (total > maxBytes) {
                throw tooLarge(what, maxBytes);
            }

            reserveUpTo(reservation, total);
            chunks.push(buffer);
        }
    }
    catch (err) {
        // Also covers a throw that did not come through the iterator's return().
        input.destroy();
        throw err;
    }

    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
}

/** Grows `reservation` to cover `bytes` (a caller's reservation may already hold them). */
function reserveUpTo(reservation: MessageReservation | undefined, bytes: number): void {
    if (reservation && bytes > reservation.bytes && !reservation.grow(bytes - reservation.bytes)) {
        throw budgetSpent();
    }
}

function tooLarge(what: string, maxBytes: number): InboxCaptureError {
    return new InboxCaptureError('TOO_LARGE', `${what} exceeds ${maxBytes} bytes`);
}
