import { Readable } from 'node:stream';

/** Reads a stream to its end. */
export async function readAll(stream: Readable): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) {
        chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
    }

    return Buffer.concat(chunks);
}

/** A stream of `data` in chunks of `chunkSize` bytes, as a socket or parser would deliver it. */
export function chunked(data: Buffer, chunkSize = 64 * 1024): Readable {
    return Readable.from((function* () {
        for (let i = 0; i < data.length; i += chunkSize) {
            yield data.subarray(i, i + chunkSize);
        }
    })(), { objectMode: false });
}

/** A stream that delivers `head` and then fails, like a dropped SMTP connection. */
export function failingAfter(head: Buffer, error = new Error('connection lost')): Readable {
    return Readable.from((async function* () {
        yield head;
        await new Promise((r) => setImmediate(r));
        throw error;
    })(), { objectMode: false });
}
