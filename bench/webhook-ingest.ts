/**
 * Does a webhook receiver slow ingest? The standalone service (SQLite + files) takes the
 * same SMTP load three ways: no webhook, a webhook whose receiver answers 200 at once,
 * and one whose receiver never answers (every POST held until its 10 s timeout).
 * Prints msg/s and the 250 latency of each, alternating, `--rounds` times.
 *
 *   npm run build && npx tsc -p bench/tsconfig.json && node dist-bench/bench/webhook-ingest.js [--messages 2000] [--rounds 2]
 */

import { parseArgs } from 'node:util';
import { startWebhookReceiver, type WebhookReceiver } from '../test/helpers/webhook-receiver';
import { profiles } from './profiles';
import { runLoad } from './smtp-load';
import { startStandalone } from './standalone';

/** SMTP sessions sending at once. */
const SESSIONS = 16;
/** Longest run of one cell, ms. */
const MAX_MS = 300_000;

type Mode = 'no webhook' | 'receiver answers 200' | 'receiver never answers';
const MODES: Mode[] = ['no webhook', 'receiver answers 200', 'receiver never answers'];

async function cell(mode: Mode, messages: number, tag: string): Promise<string> {
    let receiver: WebhookReceiver | undefined;
    if (mode !== 'no webhook') {
        receiver = await startWebhookReceiver(mode === 'receiver never answers' ? () => 'hold' : undefined);
    }

    const service = await startStandalone({ env: receiver ? { INBOX_CAPTURE_WEBHOOK_URL: receiver.url() } : {} });
    try {
        const result = await runLoad({ port: service.smtpPort, profile: profiles()['text-1k'], sessions: SESSIONS, maxMessages: messages, maxMs: MAX_MS, inboxPrefix: 'wh', tag });
        const received = receiver ? `, ${receiver.received.length} POSTs received by the end of the load` : '';
        return `${mode.padEnd(24)} ${result.acked} acked, ${result.msgPerSec.toFixed(0)} msg/s, 250 latency p50 ${result.latency.p50.toFixed(1)} ms p99 ${result.latency.p99.toFixed(1)} ms${received}`;
    }
    finally {
        await service.stop();
        await receiver?.close();
    }
}

async function main(): Promise<void> {
    const { values } = parseArgs({ options: { messages: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '2' } } });
    const messages = Number(values.messages);
    for (let round = 0; round < Number(values.rounds); round++) {
        for (const mode of MODES) {
            console.log(await cell(mode, messages, `r${round}${mode.length}`));
        }
    }
}

main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
});
