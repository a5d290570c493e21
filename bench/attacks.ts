/**
 * Issue 17's seven attacks, replayed against `examples/standalone.js` (embedded
 * defaults) one after another. Around each, another process asks `/health` every 50 ms
 * and the server's RSS is sampled from /proc; for each it prints what was sent, the
 * answer the attacker got, the slowest `/health`, failed `/health`, peak RSS and RSS
 * afterwards. Not part of `run.ts` (the full sizes write about 1.3 GB):
 *
 *   node dist-bench/bench/attacks.js [--quick | --smoke] [--only 1,5] [--malloc-default] [--node-flags="--cpu-prof"] [--json FILE]
 *
 * `--quick` scales the large attacks down (seconds instead of minutes); `--smoke`
 * further still (bench-smoke). The service runs with the malloc setting of
 * docs/operations.md unless `--malloc-default`. Attack 2's reproduction is issue 17 item 2's
 * (bench/fan-out-blobs.ts); attack-cases.ts holds a hook for it.
 */

import { readOpenFileLimit, defaultMaxHttpConnections } from '../adapters/standalone/http-connection-cap';
import { DEFAULT_MAX_CONNECTIONS as SMTP_MAX_CONNECTIONS } from '../adapters/smtp/smtp-listener';
import { ATTACKS, type AttackOutcome, type AttackSize } from './attack-cases';
import { describeHealth, startHealthProbe } from './health-probe';
import { mib, peakRssOf, rssOf, sampleRss } from './process-rss';
import { runBench, type TargetCheck } from './report';
import { startStandalone } from './standalone';

/** The bound every attack must keep `/health` under, ms (issue 17, "Done when"). */
const HEALTH_BOUND_MS = 100;
/** Peak RSS the service may reach under any attack, bytes: the bound test/system/message-budget-e2e.ts asserts. */
const RSS_BOUND_BYTES = 1.25 * 2 ** 30;
/** Wait after an attack before reading "RSS afterwards", ms: the garbage of the attack is collected meanwhile (smoke: 200). */
const SETTLE_MS = 2000;
/** How often RSS is sampled, ms. */
const RSS_EVERY_MS = 50;
/** HTTP connection cap of a scaled-down run: attack 6 then reaches it with a tenth of the connections. */
const SCALED_HTTP_CAP = 1000;
/**
 * glibc's malloc setting docs/operations.md recommends ("Memory"): without it, the large
 * buffers of a 24 MiB message freed on SQLite's worker threads stay in the process
 * (2.4 GB after ten such messages, one at a time). `--malloc-default` runs without it.
 */
const MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' };

runBench('Issue 17: the seven attacks', 'attacks', async (args) => {
    const size: AttackSize = args.smoke ? 'smoke' : args.values.quick === true ? 'quick' : 'full';
    const only = typeof args.values.only === 'string' ? args.values.only.split(',').map(Number) : undefined;
    const chosen = ATTACKS.filter((a) => !only || only.includes(a.item));
    const maxHttpConnections = size === 'full' ? defaultMaxHttpConnections(readOpenFileLimit(), SMTP_MAX_CONNECTIONS) : SCALED_HTTP_CAP;
    const nodeFlags = typeof args.values['node-flags'] === 'string' ? args.values['node-flags'].split(' ').filter((flag) => flag !== '') : [];
    const env: Record<string, string> = {
        ...args.values['malloc-default'] === true ? {} : MALLOC_ENV,
        ...size === 'full' ? {} : { INBOX_CAPTURE_MAX_HTTP_CONNECTIONS: String(maxHttpConnections) }
    };
    const server = await startStandalone({ nodeFlags, env });
    const rows: string[][] = [];
    const targets: TargetCheck[] = [];
    const notes: string[] = [];
    try {
        notes.push(`server idle RSS ${mib(rssOf(server.pid))} MiB; HTTP connection cap ${maxHttpConnections}; sizes: ${size}; environment: ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ') || 'defaults'}`);
        const target = { ...server, maxHttpConnections, size };
        for (const attack of chosen) {
            console.error(`attack ${attack.item}: ${attack.title} ...`);
            const probe = await startHealthProbe(`${server.base}/health`);
            const rss = sampleRss(server.pid, RSS_EVERY_MS);
            const began = Date.now();
            let outcome: AttackOutcome;
            try {
                outcome = await attack.run(target);
            }
            catch (err) {
                outcome = { sent: attack.title, answer: `the harness failed: ${(err as Error).message}` };
            }

            const seconds = (Date.now() - began) / 1000;
            const health = await probe.stop();
            const peak = rss.stop();
            await new Promise((resolve) => setTimeout(resolve, size === 'smoke' ? SETTLE_MS / 10 : SETTLE_MS));
            const alive = Number.isNaN(server.exitedAt());
            const after = alive ? rssOf(server.pid) : NaN;
            rows.push([String(attack.item), outcome.sent, `${outcome.answer}${alive ? '' : '; THE SERVICE EXITED'}`, health.slowestMs.toFixed(0), `${health.failed} of ${health.asked}`, mib(peak), mib(after), seconds.toFixed(1)]);
            targets.push(
                { target: `attack ${attack.item}: /health under ${HEALTH_BOUND_MS} ms, none failed, service up`, measured: describeHealth(health), met: alive && health.slowestMs < HEALTH_BOUND_MS && health.failed === 0 },
                { target: `attack ${attack.item}: peak RSS ≤ ${mib(RSS_BOUND_BYTES)} MiB`, measured: `${mib(peak)} MiB`, met: peak <= RSS_BOUND_BYTES }
            );
            console.error(`attack ${attack.item} done in ${seconds.toFixed(0)} s: /health ${describeHealth(health)}, peak RSS ${mib(peak)} MiB`);
        }

        notes.push(`server peak RSS over the whole run (VmHWM): ${mib(peakRssOf(server.pid))} MiB`);
    }
    finally {
        await server.stop();
    }

    return {
        tables: [{
            title: 'The seven attacks against the standalone service',
            columns: ['#', 'sent', 'answer', 'slowest /health ms', '/health failed', 'peak RSS MiB', 'RSS after MiB', 's'],
            rows
        }],
        targets,
        notes
    };
}, ['only', 'node-flags'], ['quick', 'malloc-default']);
