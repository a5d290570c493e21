/**
 * Issue 29 item 1, one large email multiplied: a 20 MiB message whose text is control
 * characters (each one `\u0001` in JSON), answered to ten long-polls waiting on its
 * inbox, then to four parallel GETs, and POSTed to a webhook receiver that answers 413
 * to everything (so every retry sends it again). It runs a service of its own (the
 * receiver must be configured at start) and measures it: the largest answer ÷ the
 * message size, the peak RSS above idle, the slowest `/health`, the bytes per webhook
 * POST. bench/attacks.ts runs it as attack 8.
 */

import * as Http from 'node:http';
import { startWebhookReceiver } from '../test/helpers/webhook-receiver';
import { describeHealth, startHealthProbe } from './health-probe';
import { mib, rssOf, sampleRss } from './process-rss';
import { SmtpSession } from './smtp-client';
import { startStandalone } from './standalone';

/** How large: the 20 MiB, or scaled down. */
export type LargeEmailSize = 'full' | 'quick' | 'smoke';

/** What the attack measured, for the table and the targets. */
export interface LargeEmailOutcome {
    sent: string;
    answer: string;
    /** Largest answer that carried the email ÷ the message's size. */
    largestRatio: number;
    /** Peak RSS of the attacked service, bytes, and its RSS before the attack. */
    peakRss: number;
    idleRss: number;
    slowestHealthMs: number;
    /** Largest webhook POST body, bytes. */
    largestPostBytes: number;
}

const LONG_POLLS = 10;
const GETS = 4;
/** Webhook attempts waited for: the first and some retries (a smoke run: the first retry, 200 ms after the first). */
const POSTS = { full: 5, quick: 5, smoke: 2 };

/** `lines` lines of 998 bytes of C0 control characters (none a line break), after a line of text. */
function controlMessage(lines: number): Buffer[] {
    const pool = [1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31];
    const line = Buffer.alloc(1000);
    for (let i = 0; i < 998; i++) {
        line[i] = pool[i % pool.length]!;
    }

    line.write('\r\n', 998);
    const head = Buffer.from([
        'From: attacker@example.test', 'To: controls@example.test', 'Subject: control characters',
        'Message-ID: <controls@example.test>', 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=us-ascii', '',
        'Your code is 482913.', ''
    ].join('\r\n'));
    return [head, Buffer.concat(Array.from({ length: lines }, () => line))];
}

/** GET with the key: the status and the size of the body read whole. */
function getSize(base: string, apiKey: string, path: string): Promise<{ status: number; bytes: number }> {
    return new Promise((resolve, reject) => {
        Http.get(`${base}${path}`, { headers: { authorization: `Bearer ${apiKey}` }, agent: false }, (res) => {
            let bytes = 0;
            res.on('data', (chunk: Buffer) => {
                bytes += chunk.length;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
            res.on('error', reject);
        }).on('error', reject);
    });
}

/** Runs the attack against a fresh standalone service with `env` (the malloc setting of the caller's run). */
export async function largeEmailAttack(size: LargeEmailSize, env: Record<string, string>): Promise<LargeEmailOutcome> {
    const lines = { full: 20 * 1024 * 1024 / 1000, quick: 5 * 1024 * 1024 / 1000, smoke: 256 }[size];
    const parts = controlMessage(Math.round(lines));
    const messageBytes = parts.reduce((sum, part) => sum + part.length, 0);
    const receiver = await startWebhookReceiver(() => ({ status: 413 }));
    const server = await startStandalone({ env: { ...env, INBOX_CAPTURE_WEBHOOK_URL: receiver.url(), INBOX_CAPTURE_WEBHOOK_FIRST_RETRY_MS: '200' } });
    try {
        const idleRss = rssOf(server.pid);
        const probe = await startHealthProbe(`${server.base}/health`);
        const rss = sampleRss(server.pid, 20);
        const polls = Array.from({ length: LONG_POLLS }, () => getSize(server.base, server.apiKey, '/v1/emails?inbox=controls&wait=true&timeout=28'));
        // The long-polls are waiting before the message arrives.
        await new Promise((resolve) => setTimeout(resolve, 500));
        const session = await SmtpSession.open(server.smtpPort);
        const { code } = await session.send('attacker@example.test', ['controls@example.test'], parts);
        await session.close();
        const polled = await Promise.all(polls);
        const got = await Promise.all(Array.from({ length: GETS }, () => getSize(server.base, server.apiKey, '/v1/emails/controls%40example.test')));
        const posts = await receiver.waitFor(POSTS[size], 120_000);
        const peakRss = rss.stop();
        const health = await probe.stop();
        const answers = [...polled, ...got];
        const largest = Math.max(...answers.map((a) => a.bytes));
        const largestPostBytes = Math.max(...posts.map((p) => p.body.length));
        const statuses = [...new Set(answers.map((a) => a.status))].join(', ');
        return {
            sent: `a ${mib(messageBytes)} MiB message of C0 control characters over SMTP (${code}) to an inbox ${LONG_POLLS} long-polls wait on, then ${GETS} parallel GETs of it; a webhook receiver answering 413`,
            answer: `answers ${statuses}, the largest ${mib(largest)} MiB (${(largest / messageBytes).toFixed(2)} × the message); peak RSS ${mib(peakRss)} MiB (idle ${mib(idleRss)}); /health ${describeHealth(health)}; ${posts.length} webhook POSTs of at most ${mib(largestPostBytes)} MiB`,
            largestRatio: largest / messageBytes,
            peakRss,
            idleRss,
            slowestHealthMs: health.slowestMs,
            largestPostBytes
        };
    }
    finally {
        await server.stop();
        await receiver.close();
    }
}
