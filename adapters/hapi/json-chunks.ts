/** An email's JSON as chunks of bytes, serialised in slices so that one large email never holds the event loop. */

/**
 * Characters of one string value serialised at once: a longer one (a body of megabytes)
 * is serialised slice by slice, other requests served between slices, so one email
 * never holds the event loop for the 100+ ms its JSON takes in one go.
 */
export const SLICE_CHARS = 1024 * 1024;

/**
 * JSON.stringify(view) as chunks of bytes: a string value longer than SLICE_CHARS is
 * serialised slice by slice, yielding to the event loop between slices. `reserve(bytes)`
 * is told of each chunk before it is kept, and may throw to stop (a spent memory budget).
 */
export async function toJsonChunks(view: object, reserve: (bytes: number) => void = () => undefined): Promise<Buffer[]> {
    if (!Object.values(view).some((value) => typeof value === 'string' && value.length > SLICE_CHARS)) {
        // Nothing to slice: one JSON.stringify, which costs half of building it field by field.
        const whole = Buffer.from(JSON.stringify(view));
        reserve(whole.length);
        return [whole];
    }

    const chunks: Buffer[] = [];
    const keep = (chunk: Buffer) => {
        reserve(chunk.length);
        chunks.push(chunk);
    };
    let pending = '{';
    let fields = 0;
    for (const [key, value] of Object.entries(view)) {
        if (value === undefined) {
            continue;
        }

        pending += `${fields++ > 0 ? ',' : ''}${JSON.stringify(key)}:`;
        if (typeof value !== 'string' || value.length <= SLICE_CHARS) {
            pending += JSON.stringify(value);
            continue;
        }

        keep(Buffer.from(`${pending}"`));
        for (let at = 0; at < value.length;) {
            let end = Math.min(at + SLICE_CHARS, value.length);
            // Never between the halves of a surrogate pair: JSON.stringify escapes a lone half.
            if (end < value.length && isHighSurrogate(value.charCodeAt(end - 1))) {
                end--;
            }

            keep(Buffer.from(JSON.stringify(value.slice(at, end)).slice(1, -1)));
            at = end;
            await new Promise((resolve) => setImmediate(resolve));
        }

        pending = '"';
    }

    keep(Buffer.from(`${pending}}`));
    return chunks;
}

function isHighSurrogate(code: number): boolean {
    return code >= 0xd800 && code <= 0xdbff;
}
