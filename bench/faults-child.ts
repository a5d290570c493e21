/**
 * The service side of bench/faults.ts, in a process of its own (as the standalone runs):
 * the embedded stores in a temp dir, our SMTP listener on the given port, and per mode no
 * fault rule, ten rules no message matches, or auto-relay of every message to a sink.
 * Speaks reference-child.ts's IPC (`{ count: true }` → emails stored).
 *
 *   node dist-bench/bench/faults-child.js <no-rule|ten-rules|auto-relay> <smtpPort> [sinkPort]
 */

import { createSmtpListener } from '../adapters/smtp';
import { startAutoRelay } from '../adapters/relay/auto-relay';
import { createRelay } from '../adapters/relay/relay-options';
import type { FaultRuleInput } from '../lib/faults/fault-rule';
import { DEFAULT_DELIVERY_CONCURRENCY } from '../lib/outbox/outbox-dispatcher';
import { openEmbeddedStores } from '../lib/service/embedded-stores';
import { createInboxCapture } from '../lib/service/inbox-capture';
import { tempDir } from '../test/helpers/temp-dir';
import { exitOnError, serveReferenceIpc } from './reference-child';

/** Ten rules at every stage a message passes, none matching the bench's mail (`<prefix>-NN@bench.test` from load@bench.test). */
export const TEN_UNMATCHED_RULES: FaultRuleInput[] = [
    { stage: 'mail', match: { sender: 'nobody@' }, reply: { code: 451 } },
    { stage: 'mail', match: { sender: '@elsewhere.test' }, delayMs: 1000 },
    { stage: 'rcpt', match: { inbox: 'not-a-bench-inbox' }, reply: { code: 450 } },
    { stage: 'rcpt', match: { recipient: '@elsewhere.test' }, reply: { code: 550 }, times: 1_000_000 },
    { stage: 'rcpt', match: { sender: 'nobody@' }, disconnect: true },
    { stage: 'rcpt', match: { inbox: 'other', sender: 'load@' }, reply: { code: 452 }, probability: 0.5 },
    { stage: 'data', match: { recipient: 'nobody@' }, reply: { code: 554 } },
    { stage: 'data', match: { sender: 'nobody@' }, delayMs: 5000 },
    { stage: 'data', match: { inbox: 'not-a-bench-inbox' }, disconnect: true, times: 3 },
    { stage: 'data', match: { recipient: 'x@elsewhere.test', sender: 'load@' }, reply: { code: 451 } }
];

async function main(): Promise<void> {
    const [mode, port, sinkPort] = process.argv.slice(2);
    const dataDir = await tempDir('bench-faults');
    const capture = createInboxCapture(await openEmbeddedStores({ dataDir }));
    await capture.start();
    if (mode === 'ten-rules') {
        for (const rule of TEN_UNMATCHED_RULES) {
            await capture.faults.create(rule);
        }
    }

    if (mode === 'auto-relay') {
        // The matcher says yes to all: every message is relayed, the most work auto-relay can add.
        // Pooled as the plugin's auto-relay is (start-relay.ts).
        const relay = createRelay({ url: `smtp://127.0.0.1:${sinkPort}`, allow: ['*@bench.test'] }, { maxConnections: DEFAULT_DELIVERY_CONCURRENCY, maxMessages: 100 });
        startAutoRelay(capture, { relay, matches: () => Promise.resolve(true) });
    }

    const listener = createSmtpListener({ capture, host: '127.0.0.1', port: Number(port) });
    await listener.listen();
    serveReferenceIpc(async () => (await capture.listInboxes({ limit: 1000 })).inboxes.reduce((sum, i) => sum + i.count, 0));
}

main().catch(exitOnError);
