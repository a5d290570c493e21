import { recipientOf, type Profile } from './profiles';
import { SmtpSession } from './smtp-client';
import { summarize, type Summary } from './stats';

/** One load run against one SMTP server. */
export interface LoadOptions {
    port: number;
    profile: Profile;
    /** Parallel SMTP sessions (C). */
    sessions: number;
    /** Stop after this many messages in all ... */
    maxMessages: number;
    /** ... or after this many ms, whichever comes first (messages in flight finish). */
    maxMs: number;
    /** Inbox name prefix: recipients are `<prefix>-00` .. `<prefix>-99`. */
    inboxPrefix: string;
    /** Makes Message-IDs unique per run and cell. */
    tag: string;
    /** Pipeline the envelope when the server offers PIPELINING (default false: lock-step, like nodemailer). */
    pipelining?: boolean;
}

/** What the server acknowledged, how fast, and what went wrong. */
export interface LoadResult {
    /** Messages answered 250. */
    acked: number;
    /** Messages answered otherwise (code → count). */
    refused: Record<string, number>;
    /** Sessions that broke (connection lost, timeout), with the first error. */
    brokenSessions: number;
    firstError?: string;
    /** Bytes of the acknowledged messages. */
    ackedBytes: number;
    elapsedMs: number;
    msgPerSec: number;
    mbPerSec: number;
    /** End of DATA → 250, ms. */
    latency: Summary;
    /** Recipient inbox → messages acknowledged for it (to compare with what the API lists). */
    perInbox: Map<string, number>;
}

/**
 * C sessions, each sending messages one after another (RSET between them) until
 * the shared count or the time runs out. Every loop is bounded by both.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
    let next = 0;
    const latencies: number[] = [];
    const refused: Record<string, number> = {};
    const perInbox = new Map<string, number>();
    let acked = 0;
    let ackedBytes = 0;
    let brokenSessions = 0;
    let firstError: string | undefined;
    const start = process.hrtime.bigint();
    const deadline = Date.now() + options.maxMs;

    const session = async () => {
        let smtp: SmtpSession | undefined;
        try {
            smtp = await SmtpSession.open(options.port, '127.0.0.1', options.pipelining ?? false);
            while (next < options.maxMessages && Date.now() < deadline) {
                const seq = next++;
                const to = recipientOf(options.inboxPrefix, seq);
                const parts = options.profile.parts(seq, to, options.tag);
                const outcome = await smtp.send(`sender${seq % 7}@bench.test`, [to], parts);
                if (outcome.code === 250) {
                    acked++;
                    ackedBytes += parts[0].length + parts[1].length;
                    latencies.push(outcome.latencyMs);
                    const inbox = to.slice(0, to.indexOf('@'));
                    perInbox.set(inbox, (perInbox.get(inbox) ?? 0) + 1);
                }
                else {
                    refused[outcome.code] = (refused[outcome.code] ?? 0) + 1;
                }

                await smtp.reset();
            }
        }
        catch (err) {
            brokenSessions++;
            firstError ??= String(err);
        }
        finally {
            await smtp?.close();
        }
    };

    await Promise.all(Array.from({ length: options.sessions }, session));
    const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
    return {
        acked,
        refused,
        brokenSessions,
        firstError,
        ackedBytes,
        elapsedMs,
        msgPerSec: acked / (elapsedMs / 1000),
        mbPerSec: ackedBytes / 2 ** 20 / (elapsedMs / 1000),
        latency: summarize(latencies),
        perInbox
    };
}
