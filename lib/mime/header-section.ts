import type { Readable } from 'node:stream';

/**
 * Most bytes of a message read for its header section: 1 MiB, far above any real
 * header block (mail servers cap a header section at a few hundred KiB), so a
 * message that is all header lines costs a bounded read.
 */
export const MAX_HEADER_SECTION_BYTES = 1024 * 1024;

/**
 * The header section of a message stream: its bytes up to the first empty line
 * (CRLF or LF line ends), or up to `maxBytes` when there is none that early. Stops
 * reading there and destroys the stream, so the body is never read.
 */
export async function readHeaderSection(stream: Readable, maxBytes = MAX_HEADER_SECTION_BYTES): Promise<Buffer> {
    let read: Buffer = Buffer.alloc(0);
    try {
        for await (const chunk of stream) {
            const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string | Uint8Array);
            // Looked for from just before the new chunk: the empty line may straddle two chunks.
            const from = Math.max(0, read.length - 3);
            read = read.length === 0 ? buffer : Buffer.concat([read, buffer]);
            const end = endOfSection(read, from);
            if (end !== -1) {
                return read.subarray(0, Math.min(end, maxBytes));
            }

            if (read.length >= maxBytes) {
                return read.subarray(0, maxBytes);
            }
        }
    }
    finally {
        // Leaving early (return or throw) must not leave the blob's stream open.
        stream.destroy();
    }

    return read;
}

/** Offset of the empty line that ends the section (searching from `from`), or -1. */
function endOfSection(bytes: Buffer, from: number): number {
    if (from === 0 && (bytes[0] === 0x0a || (bytes[0] === 0x0d && bytes[1] === 0x0a))) {
        return 0;
    }

    for (let i = bytes.indexOf(0x0a, from); i !== -1; i = bytes.indexOf(0x0a, i + 1)) {
        const next = bytes[i + 1] === 0x0d ? i + 2 : i + 1;
        if (bytes[next] === 0x0a) {
            return i + 1;
        }
    }

    return -1;
}

/** The header section of a message held in memory, as readHeaderSection() reads it from a stream; looks at `maxBytes` at most. */
export function headerSectionOf(bytes: Buffer, maxBytes = MAX_HEADER_SECTION_BYTES): Buffer {
    const head = bytes.subarray(0, maxBytes);
    const end = endOfSection(head, 0);
    return end === -1 ? head : head.subarray(0, end);
}
