/**
 * What fault rules and auto-relay cost ingest (docs/api.md, "Faults" and "Auto-relay"):
 * the same SMTP load (16 sessions, text-1k) against a service with no fault rule, with ten
 * rules no message matches (each command looks at them), and with auto-relay of every
 * message to an smtp-server sink. The service runs in a child process (faults-child.ts);
 * the modes alternate, `--rounds` times.
 *
 *   npm run build && npx tsc -p bench/tsconfig.json && node dist-bench/bench/faults.js [--messages 4000] [--rounds 3]
 */

import * as Path from 'node:path';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { profiles } from './profiles';
import { forkReferenceServer } from './reference-server';
import { runBench, type Table } from './report';
import { runLoad } from './smtp-load';
import { fmt } from './stats';

/** SMTP sessions sending at once: a busy test suite's worth. */
const SESSIONS = 16;
/** Longest load of one cell, ms. */
const MAX_MS = 300_000;
/** Longest wait for the relay to catch up after the load, ms. */
const RELAY_DRAIN_MS = 120_000;

const MODES = ['no-rule', 'ten-rules', 'auto-relay'] as const;
type Mode = typeof MODES[number];
const LABELS: Record<Mode, string> = { 'no-rule': 'no fault rule', 'ten-rules': '10 rules that do not match', 'auto-relay': 'auto-relay of every message on' };

/** A relay stand-in that counts what it takes. */
async function startCountingSink(): Promise<{ port: number; count(): number; close(): Promise<void> }> {
    let count = 0;
    const server = new SMTPServer({
        logger: false,
        disableReverseLookup: true,
        authOptional: true,
        disabledCommands: ['AUTH', 'STARTTLS'],
        onData(stream, _session, callback) {
            stream.on('end', () => {
                count++;
                callback();
            });
            stream.resume();
        }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return { port: (server.server.address() as AddressInfo).port, count: () => count, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

runBench('faults', 'faults', async ({ smoke, values }) => {
    // A smoke run: enough for every session to send one (the rows fill; the rate means nothing).
    const messages = smoke ? SESSIONS + 4 : Number(values.messages ?? 4000);
    const rounds = smoke ? 1 : Number(values.rounds ?? 3);
    const rows: string[][] = [];
    const rates: Record<Mode, number[]> = { 'no-rule': [], 'ten-rules': [], 'auto-relay': [] };
    const notes: string[] = [];
    for (let round = 0; round < rounds; round++) {
        for (const mode of MODES) {
            const sink = mode === 'auto-relay' ? await startCountingSink() : undefined;
            const child = await forkReferenceServer(mode, Path.join(__dirname, 'faults-child.js'), 1, ([smtpPort]) => [mode, String(smtpPort), String(sink?.port ?? 0)]);
            const port = child.smtpPort;
            try {
                const result = await runLoad({ port, profile: profiles()['text-1k'], sessions: SESSIONS, maxMessages: messages, maxMs: MAX_MS, inboxPrefix: 'flt', tag: `r${round}${mode}` });
                let relayed = '';
                if (sink) {
                    const start = Date.now();
                    while (sink.count() < result.acked && Date.now() - start < RELAY_DRAIN_MS) {
                        await new Promise((resolve) => setTimeout(resolve, 100));
                    }

                    relayed = `${sink.count()} relayed, the last ${fmt((Date.now() - start) / 1000)} s after the load`;
                }

                const stored = await child.count();
                if (stored !== result.acked) {
                    throw new Error(`${mode}: ${result.acked} messages answered 250 but ${stored} stored`);
                }

                rates[mode].push(result.msgPerSec);
                rows.push([String(round + 1), LABELS[mode], String(result.acked), result.msgPerSec.toFixed(0), fmt(result.latency.p50), fmt(result.latency.p99), relayed]);
            }
            finally {
                await child.stop();
                await sink?.close();
            }
        }
    }

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const summary: Table = {
        title: `Ingest with faults and auto-relay: median of ${rounds} round(s), ${messages} text-1k messages over ${SESSIONS} SMTP sessions each`,
        columns: ['service', 'msg/s (median)', 'of the rate with no rule'],
        rows: MODES.map((mode) => [LABELS[mode], median(rates[mode]).toFixed(0), `${((median(rates[mode]) / median(rates['no-rule'])) * 100).toFixed(0)} %`])
    };
    notes.push('The ten rules sit at MAIL, RCPT and DATA (the listener looks at the cached set on every command); auto-relay relays every message (its matcher says yes), so its outbox row, claim and SMTP send are all paid.');
    return {
        tables: [summary, { title: 'Every cell', columns: ['round', 'service', 'acked', 'msg/s', '250 p50 ms', '250 p99 ms', 'relay'], rows }],
        targets: [],
        notes
    };
}, ['messages', 'rounds']);
