/** What the line splitter found in the bytes so far. */
export type LineEvent = { kind: 'line'; text: string } | { kind: 'too-long' };

/**
 * Splits a client's bytes into command lines of at most `maxBytes` octets, CRLF (or a
 * bare LF) included. At most `maxBytes` bytes are held while a line is incomplete: a line
 * that grows past it is reported once as too long and nothing after it is read.
 */
export function createLineSplitter(maxBytes: number): { push(chunk: Buffer): LineEvent[] } {
    let pending = Buffer.alloc(0);
    let broken = false;

    return {
        push(chunk) {
            if (broken) {
                return [];
            }

            const events: LineEvent[] = [];
            let data = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
            for (let end = data.indexOf(0x0a); end !== -1; end = data.indexOf(0x0a)) {
                if (end + 1 > maxBytes) {
                    break;
                }

                const body = data.subarray(0, end > 0 && data[end - 1] === 0x0d ? end - 1 : end);
                // latin1 keeps every byte as one character, so a bad byte cannot turn into a valid command.
                events.push({ kind: 'line', text: body.toString('latin1') });
                data = data.subarray(end + 1);
            }

            if (data.length >= maxBytes) {
                broken = true;
                events.push({ kind: 'too-long' });
                pending = Buffer.alloc(0);
                return events;
            }

            pending = Buffer.from(data);
            return events;
        }
    };
}

/** A command line parsed: the keyword upper-cased and its arguments (split on spaces). */
export interface Pop3Command {
    keyword: string;
    args: string[];
}

/** Parses one command line; the keyword is case-insensitive (RFC 1939), arguments keep their case. */
export function parseCommand(text: string): Pop3Command {
    const [keyword = '', ...args] = text.split(' ').filter((part) => part !== '');
    return { keyword: keyword.toUpperCase(), args };
}
