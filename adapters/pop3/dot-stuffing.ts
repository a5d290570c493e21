const DOT = 0x2e;
const CR = 0x0d;
const LF = 0x0a;
const CRLF = Buffer.from('\r\n');

/**
 * A message as a multi-line POP3 answer, chunk by chunk as the store streams it: every
 * line that starts with "." gets one more (RFC 1939, "byte-stuffed"), every other byte is
 * passed as it is, and a message that does not end with a line break gets CRLF, so that
 * the terminating "." stands on a line of its own. With `bodyLines` (TOP), it stops after
 * the header, the blank line and that many lines of the body; leaving early ends the source.
 */
export async function* dotStuffed(source: AsyncIterable<Buffer | string>, bodyLines?: number): AsyncGenerator<Buffer> {
    let lineStart = true;
    let lineEmpty = true;
    let inBody = false;
    let linesSent = 0;
    let last = LF;
    const limited = bodyLines !== undefined;

    for await (const piece of source) {
        const chunk = typeof piece === 'string' ? Buffer.from(piece, 'latin1') : piece;
        let from = 0;
        let stopAt = -1;
        const parts: Buffer[] = [];
        for (let i = 0; i < chunk.length; i++) {
            const byte = chunk[i]!;
            if (lineStart && byte === DOT) {
                parts.push(chunk.subarray(from, i), Buffer.from('.'));
                from = i;
            }

            lineStart = byte === LF;
            if (byte !== LF) {
                lineEmpty &&= byte === CR;
                continue;
            }

            if (limited) {
                if (inBody) {
                    linesSent++;
                }
                else if (lineEmpty) {
                    inBody = true;
                }

                if (inBody && linesSent >= bodyLines) {
                    stopAt = i + 1;
                    break;
                }
            }

            lineEmpty = true;
        }

        const end = stopAt === -1 ? chunk.length : stopAt;
        parts.push(chunk.subarray(from, end));
        const out = Buffer.concat(parts);
        if (out.length > 0) {
            last = out[out.length - 1]!;
            yield out;
        }

        if (stopAt !== -1) {
            return;
        }
    }

    if (last !== LF) {
        yield CRLF;
    }
}
