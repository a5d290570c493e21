/**
 * One message at a time, in process: `ingestRawEmail` with nothing else in flight (its
 * wall time, the record store's save inside it, CPU per message), and the test author's
 * loop without the network (a waiting `waitForEmails` → `ingestRawEmail` → answered).
 * The embedded stores of a fresh temp dir, text-1k messages.
 *
 *   node dist-bench/bench/one-at-a-time.js [--messages 500] [--rounds 3]
 */

import { parseArgs } from 'node:util';
import { openEmbeddedStores } from '../lib/service/embedded-stores';
import { createInboxCapture } from '../lib/service/inbox-capture';
import { profiles, recipientOf } from './profiles';
import { fmt, quantile } from './stats';
import { tempDir } from '../test/helpers/temp-dir';
import { timingStores } from './timing-stores';

const p50 = (values: number[]) => quantile([...values].sort((a, b) => a - b), 0.5);
const ms = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;

async function main() {
    const { values } = parseArgs({ options: { messages: { type: 'string', default: '500' }, rounds: { type: 'string', default: '3' } } });
    const count = Number(values.messages);
    const dataDir = await tempDir('bench-one');
    const stores = await openEmbeddedStores({ dataDir });
    const timed = timingStores(stores.recordStore, stores.blobStore);
    const capture = createInboxCapture({ recordStore: timed.record, blobStore: timed.blob });
    await capture.start();
    const profile = profiles()['text-1k'];
    let seq = 0;
    const message = (inbox: string) => profile.message(seq++, `${inbox}@bench.test`, 'one');
    try {
        for (let i = 0; i < 200; i++) {
            await capture.ingestRawEmail(message(recipientOf('warm', i).split('@')[0]!));
        }

        for (let round = 1; round <= Number(values.rounds); round++) {
            timed.reset();
            const ingest: number[] = [];
            const cpu0 = process.cpuUsage();
            for (let i = 0; i < count; i++) {
                const started = process.hrtime.bigint();
                await capture.ingestRawEmail(message(`one-r${round}-${i % 50}`));
                ingest.push(ms(started));
            }

            const cpu = process.cpuUsage(cpu0);
            const save = timed.summary()['recordStore.saveEmails']!;
            const loop: number[] = [];
            for (let i = 0; i < count; i++) {
                const inbox = `loop-r${round}-${i}`;
                const answered = capture.waitForEmails({ inbox, limit: 50, maxBytes: 1_000_000 }, { timeoutMs: 10_000 }).then((page) => ({ at: process.hrtime.bigint(), page }));
                await new Promise((resolve) => setTimeout(resolve, 2));
                const started = process.hrtime.bigint();
                await capture.ingestRawEmail(message(inbox));
                const { at, page } = await answered;
                if (page.records.length !== 1) {
                    throw new Error(`${inbox}: ${page.records.length} records`);
                }

                loop.push(Number(at - started) / 1e6);
            }

            console.log(`round ${round}: ingestRawEmail C = 1 p50 ${fmt(p50(ingest))} ms (saveEmails p50 ${fmt(save.p50)} ms), ` +
                `CPU ${fmt((cpu.user + cpu.system) / 1000 / count)} ms/msg; loop in process p50 ${fmt(p50(loop))} ms`);
        }
    }
    finally {
        await capture.close();
    }
}

void main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
});
