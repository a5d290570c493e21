import * as Nodemailer from 'nodemailer';
import { DEFAULT_PARSE_TIMEOUT_MS } from '../lib/defaults';
import { nestedGroupsMessage, punycodeMessage } from '../test/helpers/hostile-addresses';
import { describeHealth, startHealthProbe } from './health-probe';
import { runBench, type BenchArgs, type TargetCheck } from './report';
import { countListed, startStandalone } from './standalone';
import { fmt } from './stats';

/**
 * The messages that held the event loop for seconds, sent one at a time over SMTP to the
 * standalone service (the embedded default) while another process asks `/health` every
 * 50 ms; right after each one's `250`, a normal message. Per shape: the hostile message's
 * `250` latency, the slowest `/health` meanwhile, and the normal message's `250` latency.
 */

/** Targets: `/health` while a hostile message is received and stored, ms. */
const HEALTH_MS = 100;

const SHAPES = [
    { name: 'To: r@xn--<label of 1,000,000 characters> (punycode, quadratic)', raw: () => punycodeMessage(), to: 'puny' },
    { name: 'To: groups nested 50 deep around 60,000 addresses (830 KB)', raw: () => nestedGroupsMessage(), to: 'nested' }
];

const NORMAL = (n: number) => Buffer.from(`From: normal@bench.test\r\nTo: after@bench.test\r\nSubject: right after ${n}\r\nMessage-ID: <after-${n}-${Date.now()}@bench.test>\r\n\r\nA normal message.\r\n`);

async function timedSend(port: number, raw: Buffer, to: string): Promise<{ ms: number; response: string }> {
    const transport = Nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
    try {
        const started = process.hrtime.bigint();
        const info = await transport.sendMail({ envelope: { from: 'hostile@bench.test', to: [`${to}@bench.test`] }, raw });
        return { ms: Number(process.hrtime.bigint() - started) / 1e6, response: info.response };
    }
    finally {
        transport.close();
    }
}

async function bench(args: BenchArgs) {
    const rounds = args.smoke ? 1 : Number(args.values.rounds ?? 3);
    const service = await startStandalone();
    const rows: string[][] = [];
    const checks: TargetCheck[] = [];
    try {
        // Warm-up: the parse workers start and the writer connection opens.
        await timedSend(service.smtpPort, NORMAL(0), 'warm');
        let n = 1;
        for (const shape of SHAPES) {
            let slowest = 0;
            let slowestAfter = 0;
            for (let round = 0; round < rounds; round++) {
                const probe = await startHealthProbe(`${service.base}/health`);
                const hostile = await timedSend(service.smtpPort, shape.raw(), `${shape.to}${round}`);
                const after = await timedSend(service.smtpPort, NORMAL(n++), 'after');
                const health = await probe.stop();
                slowest = Math.max(slowest, health.slowestMs);
                slowestAfter = Math.max(slowestAfter, after.ms);
                const stored = await countListed(service.base, service.apiKey, `${shape.to}${round}`);
                rows.push([shape.name, String(round + 1), `${hostile.response.slice(0, 3)} after ${fmt(hostile.ms)} ms`, `${stored} of 1`, describeHealth(health), `${after.response.slice(0, 3)} after ${fmt(after.ms)} ms`]);
                console.error(rows[rows.length - 1]!.join(' | '));
            }

            checks.push({
                target: `${shape.name}: /health answers within ${HEALTH_MS} ms while it is received and stored`,
                measured: `slowest ${fmt(slowest)} ms over ${rounds} round${rounds === 1 ? '' : 's'}`,
                met: args.smoke ? null : slowest <= HEALTH_MS
            });
            checks.push({
                target: `${shape.name}: a normal message sent right after it is stored within the parse deadline (${DEFAULT_PARSE_TIMEOUT_MS / 1000} s)`,
                measured: `slowest 250 after ${fmt(slowestAfter)} ms`,
                met: slowestAfter <= DEFAULT_PARSE_TIMEOUT_MS
            });
        }
    }
    finally {
        await service.stop();
    }

    return {
        tables: [{
            title: 'Hostile address fields over SMTP (the standalone service, embedded default), /health asked every 50 ms from another process',
            columns: ['message', 'round', 'its answer', 'stored', '/health meanwhile', 'a normal message right after'],
            rows
        }],
        targets: checks,
        notes: ['Each round: the probe starts, the hostile message is sent (a connection of its own), then a normal message once it is answered; the probe stops after both. With the parse on the event loop and no bounds, the punycode shape held it 8 to 25 s and the nested groups 2.3 s.']
    };
}

if (require.main === module) {
    runBench('Hostile messages: /health and the next message', 'hostile-messages', bench, ['rounds']);
}
