/**
 * One message at a time over SMTP, step by step: a raw lock-step client (TCP_NODELAY, a
 * connection per message, as nodemailer's default transport) times each reply — the
 * greeting, EHLO, MAIL, RCPT, DATA, the body's `250`, QUIT — against ours (the standalone,
 * embedded stores) and a bare smtp-server that greets at once and drains the message, each
 * in a child process, alternating rounds. Prints each step's p50 (ms) and the server's CPU
 * per session (µs, all its threads).
 *
 *   node dist-bench/bench/smtp-steps.js [--sessions 300] [--warmup 100] [--rounds 3] [--roots /a,/b]
 *
 * `--roots`: checkouts whose dist/ is built, each run as "ours" (a before/after); default this one.
 */

import * as Net from 'node:net';
import { parseArgs } from 'node:util';
import { cpuMsOf } from './process-cpu';
import { startSmtpSink } from './smtp-sink';
import { ROOT, startStandalone } from './standalone';
import { quantile } from './stats';

const STEPS = ['greeting', 'EHLO', 'MAIL', 'RCPT', 'DATA', 'body 250', 'QUIT'] as const;

/** A 1 KB plain message with a Message-ID of its own. */
function message(id: string): string {
    return `From: a@x.test\r\nTo: b@steps.test\r\nSubject: steps\r\nMessage-ID: <${id}@x.test>\r\n\r\n${'hello world '.repeat(80)}\r\n.\r\n`;
}

/** One session; the time of each reply since connect, ms. */
function session(port: number, id: string): Promise<number[]> {
    return new Promise((resolve, reject) => {
        const t0 = process.hrtime.bigint();
        const marks: number[] = [];
        const commands = ['EHLO steps\r\n', 'MAIL FROM:<a@x.test>\r\n', 'RCPT TO:<b@steps.test>\r\n', 'DATA\r\n', message(id), 'QUIT\r\n'];
        const socket = Net.connect(port, '127.0.0.1');
        socket.setNoDelay(true);
        let buffered = '';
        socket.on('data', (chunk) => {
            buffered += chunk.toString('latin1');
            // A reply is whole at its last line (`NNN text`); EHLO's has `NNN-` lines first.
            if (!/(^|\n)\d{3} [^\n]*\r\n$/.test(buffered)) {
                return;
            }

            if (!buffered.startsWith('2') && !buffered.startsWith('3')) {
                reject(new Error(`smtp-steps: unexpected reply ${JSON.stringify(buffered)}`));
                socket.destroy();
                return;
            }

            buffered = '';
            marks.push(Number(process.hrtime.bigint() - t0) / 1e6);
            const next = commands.shift();
            if (next !== undefined) {
                socket.write(next);
            }
        });
        socket.on('close', () => (marks.length === STEPS.length ? resolve(marks) : reject(new Error(`smtp-steps: the session closed after ${marks.length} replies`))));
        socket.on('error', reject);
    });
}

interface Round {
    /** p50 of each step, ms. */
    steps: number[];
    total: number;
    /** The server's CPU per session, µs (all threads). */
    cpuUs: number;
}

async function measure(port: number, pid: number, label: string, sessions: number, warmup: number): Promise<Round> {
    for (let i = 0; i < warmup; i++) {
        await session(port, `${label}-w${i}-${Date.now()}`);
    }

    const runs: number[][] = [];
    const cpu0 = cpuMsOf(pid);
    for (let i = 0; i < sessions; i++) {
        runs.push(await session(port, `${label}-${i}-${Date.now()}`));
    }

    const cpuUs = (cpuMsOf(pid) - cpu0) * 1000 / sessions;
    const p50 = (values: number[]) => quantile([...values].sort((a, b) => a - b), 0.5);
    return {
        steps: STEPS.map((_, j) => p50(runs.map((m) => m[j]! - (j > 0 ? m[j - 1]! : 0)))),
        total: p50(runs.map((m) => m[STEPS.length - 1]!)),
        cpuUs
    };
}

async function main() {
    const { values } = parseArgs({ options: {
        sessions: { type: 'string', default: '300' },
        warmup: { type: 'string', default: '100' },
        rounds: { type: 'string', default: '3' },
        roots: { type: 'string', default: ROOT }
    } });
    const sessions = Number(values.sessions);
    const warmup = Number(values.warmup);
    const roots = values.roots.split(',');
    const servers = [...roots.map((root) => ({ label: roots.length > 1 ? `ours ${root}` : 'ours', root })), { label: 'bare smtp-server', root: '' }];
    console.log(`| round | server | ${STEPS.join(' | ')} | total | CPU µs/session |`);
    console.log(`|---|---|${STEPS.map(() => '---|').join('')}---|---|`);
    const results = new Map<string, Round[]>();
    for (let round = 1; round <= Number(values.rounds); round++) {
        // Another order each round: what runs first does not always meet the same machine.
        const order = servers.map((_, i) => servers[(i + round - 1) % servers.length]!);
        for (const { label, root } of order) {
            let result: Round;
            if (root) {
                const svc = await startStandalone({ root });
                try {
                    result = await measure(svc.smtpPort, svc.pid, `r${round}`, sessions, warmup);
                }
                finally {
                    await svc.stop();
                }
            }
            else {
                const sink = await startSmtpSink('bare', true);
                try {
                    result = await measure(sink.smtpPort, sink.pid, `r${round}`, sessions, warmup);
                }
                finally {
                    await sink.stop();
                }
            }

            results.set(label, [...(results.get(label) ?? []), result]);
            console.log(`| ${round} | ${label} | ${result.steps.map((s) => s.toFixed(2)).join(' | ')} | ${result.total.toFixed(2)} | ${Math.round(result.cpuUs)} |`);
        }
    }

    const median = (xs: number[]) => quantile([...xs].sort((a, b) => a - b), 0.5);
    for (const [label, rounds] of results) {
        console.log(`| median | ${label} | ${STEPS.map((_, j) => median(rounds.map((r) => r.steps[j]!)).toFixed(2)).join(' | ')} | ${median(rounds.map((r) => r.total)).toFixed(2)} | ${Math.round(median(rounds.map((r) => r.cpuUs)))} |`);
    }
}

main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
});
