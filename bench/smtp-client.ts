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

/** Bodies already checked for a line starting with a dot (a profile shares one body between messages). */
const checkedBodies = new WeakMap<Buffer, Buffer>();

/** `part` with a dot doubled at the start of every line (RFC 5321 section 4.5.2); the same Buffer when none starts with one. */
function dotStuffed(part: Buffer): Buffer {
    const known = checkedBodies.get(part);
    if (known) {
        return known;
    }

    // Our profiles never start a line with a dot; stuff anyway if one ever does.
    const stuffed = part.includes('\r\n.') ? Buffer.from(part.toString('latin1').replace(/\r\n\./g, '\r\n..'), 'latin1') : part;
    checkedBodies.set(part, stuffed);
    return stuffed;
}

/**
 * A minimal SMTP client over a raw socket: one session, many messages with RSET
 * between them, one message at a time. By default it behaves like nodemailer: each
 * command goes out after the reply to the one before. With pipelining asked for and
 * offered (RFC 2920) the envelope goes in one write instead: the RSET owed from the
 * last message, MAIL, every RCPT and DATA, then the message once DATA is answered 354;
 * the server does the same work, the client spends fewer round trips. It measures
 * what a test suite waits for: from the end of DATA to the server's answer.
 */
export class SmtpSession {
    private buffer = '';
    private readonly waiting: Array<{ resolve: (reply: Reply) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }> = [];
    private readonly replies: Reply[] = [];
    private lines: string[] = [];
    private failure: Error | null = null;
    /** The server offered PIPELINING in its EHLO reply. */
    private pipelining = false;
    /** A RSET was asked for and goes out with the next envelope (pipelining only). */
    private resetOwed = false;

    private constructor(private readonly socket: Net.Socket, private readonly replyTimeoutMs = REPLY_TIMEOUT_MS) {
        socket.setNoDelay(true);
        socket.setEncoding('latin1');
        socket.on('data', (chunk: string) => this.onData(chunk));
        socket.on('error', (err) => this.fail(err));
        socket.on('close', () => this.fail(new Error('SMTP connection closed')));
    }

    /**
     * Connects, reads the greeting and says EHLO; with `pipelining`, pipelines when the
     * server offers it. `replyTimeoutMs`: longest wait for one reply (default 60 s).
     */
    static async open(port: number, host = '127.0.0.1', pipelining = false, replyTimeoutMs = REPLY_TIMEOUT_MS): Promise<SmtpSession> {
        const socket = Net.connect({ port, host });
        const session = new SmtpSession(socket, replyTimeoutMs);
        await session.expect(220);
        const ehlo = await session.command('EHLO bench.test', 250);
        session.pipelining = pipelining && /^PIPELINING$/im.test(ehlo.text);
        return session;
    }

    /** Sends one message to `recipients`; non-2xx answers are reported, not thrown. */
    async send(from: string, recipients: string[], parts: Buffer[]): Promise<SendOutcome> {
        const envelope = [`MAIL FROM:<${from}>`, ...recipients.map((r) => `RCPT TO:<${r}>`), 'DATA'];
        let answers: Reply[];
        if (this.pipelining) {
            const owed = this.resetOwed;
            this.resetOwed = false;
            this.socket.write(`${owed ? 'RSET\r\n' : ''}${envelope.join('\r\n')}\r\n`);
            if (owed) {
                const reset = await this.next();
                if (reset.code !== 250) {
                    throw new Error(`SMTP: expected 250 to RSET, got ${reset.code} ${reset.text}`);
                }
            }

            // Every pipelined command is answered, refused or not: read them all.
            answers = [];
            for (let i = 0; i < envelope.length; i++) {
                answers.push(await this.next());
            }
        }
        else {
            answers = [];
            for (const line of envelope) {
                const reply = await this.command(line);
                answers.push(reply);
                if (reply.code !== 250 && reply.code !== 354) {
                    break;
                }
            }
        }

        const refused = answers.find((a, i) => a.code !== (i === envelope.length - 1 ? 354 : 250));
        const dataAccepted = answers.length === envelope.length && answers[answers.length - 1].code === 354;
        if (refused && !dataAccepted) {
            return { code: refused.code, latencyMs: NaN };
        }

        this.socket.cork();
        for (const part of parts) {
            this.socket.write(dotStuffed(part));
        }

        this.socket.write('.\r\n');
        const start = process.hrtime.bigint();
        const answer = this.next();
        this.socket.uncork();
        const reply = await answer;
        // Some recipients refused, DATA accepted: like any client, the message went to the
        // others; the refusal is what is reported.
        return { code: refused ? refused.code : reply.code, latencyMs: Number(process.hrtime.bigint() - start) / 1e6 };
    }

    /** RSET: a clean envelope for the next message (pipelined: sent with the next envelope). */
    async reset(): Promise<void> {
        if (this.pipelining) {
            this.resetOwed = true;
            return;
        }

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
            const timer = setTimeout(() => this.fail(new Error(`SMTP: no reply within ${this.replyTimeoutMs} ms`)), this.replyTimeoutMs);
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
