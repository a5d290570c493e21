import * as Net from 'node:net';

/** One SMTP reply: its code and every line of it. */
export interface SmtpReply {
    code: number;
    text: string;
}

// A complete reply: any `NNN-` continuation lines, then the `NNN ` last line.
const REPLY = /^(?:\d{3}-[^\r\n]*\r\n)*(\d{3})(?: [^\r\n]*)?\r\n/;

/**
 * A hand-driven SMTP client on a plain socket: sends exactly the bytes it is given
 * and sees every reply exactly, for cases no well-behaved client would produce.
 */
export class RawSmtpSession {
    private buffer = '';
    private wake: (() => void) | null = null;
    /** Settles when the server (or we) closed the connection. */
    readonly closed: Promise<void>;

    private constructor(readonly socket: Net.Socket) {
        socket.setEncoding('latin1');
        socket.on('data', (data: string) => {
            this.buffer += data;
            this.wake?.();
        });
        this.closed = new Promise((resolve) => socket.once('close', () => {
            resolve();
            this.wake?.();
        }));
        // A refused connection may be reset while we still write: the reply tells the story.
        socket.on('error', () => undefined);
    }

    /** A session on a socket that is already past the greeting (e.g. a TLS socket after STARTTLS). */
    static wrap(socket: Net.Socket): RawSmtpSession {
        return new RawSmtpSession(socket);
    }

    /**
     * Connects to 127.0.0.1 and reads the greeting; `localAddress` binds our end (e.g.
     * 127.0.0.2: Linux routes all of 127/8 to the loopback interface).
     */
    static async open(port: number, localAddress?: string): Promise<{ session: RawSmtpSession; greeting: SmtpReply }> {
        const socket = Net.connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
        await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
        const session = new RawSmtpSession(socket);
        return { session, greeting: await session.reply() };
    }

    /** The next complete reply; rejects when the connection closes first. */
    async reply(): Promise<SmtpReply> {
        for (;;) {
            const match = REPLY.exec(this.buffer);
            if (match) {
                this.buffer = this.buffer.slice(match[0].length);
                return { code: Number(match[1]), text: match[0] };
            }

            if (this.socket.destroyed || this.socket.readableEnded) {
                throw new Error(`connection closed; pending input: ${JSON.stringify(this.buffer)}`);
            }

            await new Promise<void>((resolve) => {
                this.wake = resolve;
            });
            this.wake = null;
        }
    }

    /** Sends one command line and reads its reply. */
    async command(line: string): Promise<SmtpReply> {
        this.socket.write(`${line}\r\n`);
        return this.reply();
    }

    /** Writes bytes and waits until the socket took them (backpressure respected). */
    async write(data: string | Buffer): Promise<void> {
        if (!this.socket.write(data)) {
            await new Promise<void>((resolve) => {
                const done = () => {
                    this.socket.off('drain', done);
                    this.socket.off('close', done);
                    resolve();
                };
                this.socket.on('drain', done);
                this.socket.on('close', done);
            });
        }
    }

    /** Ends our side and waits for the connection to close. */
    end(): Promise<void> {
        this.socket.end();
        return this.closed;
    }

    /** Drops the connection at once. */
    destroy(): Promise<void> {
        this.socket.destroy();
        return this.closed;
    }
}

/**
 * The DATA payload that makes the server store exactly `raw`: a dot doubled at the
 * start of every line (after any LF, bare or not, as the server unstuffs), the
 * terminator after it. `stored` is what the server keeps: `raw`, plus a CRLF when
 * `raw` does not end in one (the terminator needs a CRLF before its dot).
 */
export function dataPayload(raw: Buffer): { payload: Buffer; stored: Buffer } {
    const parts: Buffer[] = [];
    let start = 0;
    if (raw.length > 0 && raw[0] === 0x2e) {
        parts.push(Buffer.from('.'));
    }

    for (let i = raw.indexOf(0x0a); i !== -1; i = raw.indexOf(0x0a, i + 1)) {
        if (raw[i + 1] === 0x2e) {
            parts.push(raw.subarray(start, i + 1), Buffer.from('.'));
            start = i + 1;
        }
    }

    parts.push(raw.subarray(start));
    const endsWithCrlf = raw.length >= 2 && raw[raw.length - 2] === 0x0d && raw[raw.length - 1] === 0x0a;
    const tail = endsWithCrlf ? '.\r\n' : '\r\n.\r\n';
    parts.push(Buffer.from(tail));
    return {
        payload: Buffer.concat(parts),
        stored: endsWithCrlf ? raw : Buffer.concat([raw, Buffer.from('\r\n')])
    };
}

/**
 * One transaction on an open session: MAIL, RCPT for each recipient, DATA with
 * `raw` dot-stuffed; resolves with the reply to the end of DATA (or to the first
 * command the server refused).
 */
export async function sendRawMessage(session: RawSmtpSession, raw: Buffer, recipients: string[], mailFrom = 'sender@example.test'): Promise<SmtpReply> {
    const mail = await session.command(`MAIL FROM:<${mailFrom}>`);
    if (mail.code !== 250) {
        return mail;
    }

    for (const recipient of recipients) {
        const rcpt = await session.command(`RCPT TO:<${recipient}>`);
        if (rcpt.code !== 250) {
            await session.command('RSET');
            return rcpt;
        }
    }

    const data = await session.command('DATA');
    if (data.code !== 354) {
        return data;
    }

    await session.write(dataPayload(raw).payload);
    return session.reply();
}
