import * as Net from 'node:net';

/** Longest wait for any one SMTP reply, ms: far above a durable write, short enough to end a stuck run. */
const REPLY_TIMEOUT_MS = 60_000;

/** One SMTP reply. */
export interface Reply {
    code: number;
    text: string;
}

/** What sending one message came to. */
export interface SendOutcome {
    /** The final reply to the message (250 when accepted). */
    code: number;
    /** Milliseconds from the last byte of DATA written to the reply read. */
    latencyMs: number;
}

/**
 * A minimal SMTP client over a raw socket: one session, commands in lock-step (no
 * pipelining, as most client libraries send them), many messages per session with
 * RSET between them. It measures what a test suite waits for: from the end of
 * DATA to the server's answer.
 */
export class SmtpSession {
    private buffer = '';
    private readonly waiting: Array<{ resolve: (reply: Reply) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }> = [];
    private readonly replies: Reply[] = [];
    private lines: string[] = [];
    private failure: Error | null = null;

    private constructor(private readonly socket: Net.Socket) {
        socket.setNoDelay(true);
        socket.setEncoding('latin1');
        socket.on('data', (chunk: string) => this.onData(chunk));
        socket.on('error', (err) => this.fail(err));
        socket.on('close', () => this.fail(new Error('SMTP connection closed')));
    }

    /** Connects, reads the greeting and says EHLO. */
    static async open(port: number, host = '127.0.0.1'): Promise<SmtpSession> {
        const socket = Net.connect({ port, host });
        const session = new SmtpSession(socket);
        await session.expect(220);
        await session.command('EHLO bench.test', 250);
        return session;
    }

    /** Sends one message to `recipients`; non-2xx answers are reported, not thrown. */
    async send(from: string, recipients: string[], parts: Buffer[]): Promise<SendOutcome> {
        const mail = await this.command(`MAIL FROM:<${from}>`);
        if (mail.code !== 250) {
            return { code: mail.code, latencyMs: NaN };
        }

        for (const rcpt of recipients) {
            const reply = await this.command(`RCPT TO:<${rcpt}>`);
            if (reply.code !== 250) {
                return { code: reply.code, latencyMs: NaN };
            }
        }

        const data = await this.command('DATA');
        if (data.code !== 354) {
            return { code: data.code, latencyMs: NaN };
        }

        this.socket.cork();
        for (const part of parts) {
            // Our profiles never start a line with a dot; stuff anyway if one ever does.
            this.socket.write(part.includes('\r\n.') ? Buffer.from(part.toString('latin1').replace(/\r\n\./g, '\r\n..'), 'latin1') : part);
        }

        this.socket.write('.\r\n');
        const start = process.hrtime.bigint();
        const answer = this.next();
        this.socket.uncork();
        const reply = await answer;
        return { code: reply.code, latencyMs: Number(process.hrtime.bigint() - start) / 1e6 };
    }

    /** RSET: a clean envelope for the next message. */
    async reset(): Promise<void> {
        await this.command('RSET', 250);
    }

    /** QUIT and close (errors ignored: the run is over). */
    async close(): Promise<void> {
        try {
            if (!this.failure) {
                await this.command('QUIT');
            }
        }
        catch {
            // The server may close first.
        }

        this.socket.destroy();
    }

    /** Sends one command line; with `expected`, any other code throws. */
    async command(line: string, expected?: number): Promise<Reply> {
        this.socket.write(`${line}\r\n`);
        return expected === undefined ? this.next() : this.expect(expected);
    }

    private async expect(code: number): Promise<Reply> {
        const reply = await this.next();
        if (reply.code !== code) {
            throw new Error(`SMTP: expected ${code}, got ${reply.code} ${reply.text}`);
        }

        return reply;
    }

    private next(): Promise<Reply> {
        const ready = this.replies.shift();
        if (ready) {
            return Promise.resolve(ready);
        }

        if (this.failure) {
            return Promise.reject(this.failure);
        }

        return new Promise((resolve, reject) => {
            const timer = setTimeout(() => this.fail(new Error(`SMTP: no reply within ${REPLY_TIMEOUT_MS} ms`)), REPLY_TIMEOUT_MS);
            this.waiting.push({ resolve, reject, timer });
        });
    }

    private onData(chunk: string): void {
        this.buffer += chunk;
        for (let end = this.buffer.indexOf('\r\n'); end !== -1; end = this.buffer.indexOf('\r\n')) {
            const line = this.buffer.slice(0, end);
            this.buffer = this.buffer.slice(end + 2);
            this.lines.push(line);
            // `250-...` continues a reply, `250 ...` ends it.
            if (line.length < 4 || line[3] !== '-') {
                const reply = { code: Number(line.slice(0, 3)), text: this.lines.map((l) => l.slice(4)).join('\n') };
                this.lines = [];
                const waiter = this.waiting.shift();
                if (waiter) {
                    clearTimeout(waiter.timer);
                    waiter.resolve(reply);
                }
                else {
                    this.replies.push(reply);
                }
            }
        }
    }

    private fail(err: Error): void {
        this.failure ??= err;
        for (const waiter of this.waiting.splice(0)) {
            clearTimeout(waiter.timer);
            waiter.reject(err);
        }

        this.socket.destroy();
    }
}
