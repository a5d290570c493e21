import { Transform, type TransformCallback } from 'node:stream';
import { InboxCaptureError } from '../../lib/errors';

/** A pass-through that fails as soon as more than its cap has flowed through it. */
export interface SizeGuard extends Transform {
    /** Bytes seen so far. */
    readonly bytes: number;
    /** True once the cap was passed; the stream has then failed with TOO_LARGE. */
    readonly exceeded: boolean;
}

/**
 * Counts the DATA bytes on their way to ingest and fails the moment the cap is
 * passed, so an oversized message is refused while it still flows: nothing past
 * the cap is buffered or stored, whatever the client announced with SIZE=.
 */
export function createSizeGuard(maxBytes: number): SizeGuard {
    let bytes = 0;
    let exceeded = false;

    const guard = new Transform({
        transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
            bytes += chunk.length;
            if (bytes > maxBytes) {
                exceeded = true;
                callback(new InboxCaptureError('TOO_LARGE', `message exceeds ${maxBytes} bytes`));
                return;
            }

            callback(null, chunk);
        }
    });

    Object.defineProperties(guard, {
        bytes: { get: () => bytes },
        exceeded: { get: () => exceeded }
    });

    return guard as SizeGuard;
}
