import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import * as Fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import * as Path from 'node:path';
import { mib, rssOf } from './process-rss';
import { runBench, type BenchArgs } from './report';
import { fmt } from './stats';
import { tempDir } from '../test/helpers/temp-dir';

/** What we read of an autocannon result. */
interface Histogram {
    average: number;
    p50: number;
    p99: number;
}

interface AutocannonResult {
    requests: Histogram;
    latency: Histogram;
    duration: number;
    errors: number;
    non2xx: number;
    '2xx': number;
}

// autocannon ships no types; it is a dev dependency of the bench only.
const autocannon = createRequire(__filename)('autocannon') as (options: Record<string, unknown>) => Promise<AutocannonResult>;

/** Seconds per autocannon run. */
const RUN_SECONDS = 5;
/** Rounds, alternating hello-world and GET email, so machine noise falls on both. */
const ROUNDS = 2;
/** Concurrent connections: autocannon's default. */
const CONNECTIONS = 10;
/** The issue: GET one email at least half the hello-world rate. */
const SHARE_TARGET = 0.5;

interface Run {
    rps: number;
    p50: number;
    p99: number;
    errors: number;
    /** Server CPU time (all its threads) per 2xx response, µs: steadier than req/s on a busy machine. */
    cpuUs: number;
}

/** The server's CPU time so far, µs (it answers the `'cpu'` message). */
async function serverCpuUs(child: ChildProcess): Promise<number> {
    const reply = once(child, 'message') as Promise<[{ cpuUs: number }]>;
    child.send('cpu');
    return (await reply)[0].cpuUs;
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    const seconds = smoke ? 1 : RUN_SECONDS;
    const rounds = smoke ? 1 : ROUNDS;
    const dataDir = await tempDir('bench-getone');
    const profileDir = args.values['cpu-prof-dir'] as string | undefined;
    const child = fork(Path.join(__dirname, 'get-one-server.js'), [dataDir, ...(smoke ? ['--smoke'] : [])], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        // --cpu-prof-dir DIR: a CPU profile of the server, for the flame graph.
        execArgv: profileDir ? ['--cpu-prof', '--cpu-prof-dir', Path.resolve(profileDir)] : []
    });
    const runs: Record<'hello' | 'email', Run[]> = { hello: [], email: [] };
    let rss = NaN;
    let emailPath = '';
    try {
        const [ready] = await once(child, 'message') as [{ port: number; apiKey: string; messageIds: string[] }];
        const base = `http://127.0.0.1:${ready.port}`;
        const messageId = ready.messageIds[Math.floor(ready.messageIds.length / 2)];
        emailPath = `/v1/emails/${encodeURIComponent(messageId)}`;
        const targets = {
            hello: { url: `${base}/hello`, headers: {} },
            email: { url: `${base}${emailPath}`, headers: { authorization: `Bearer ${ready.apiKey}` } }
        };

        // Warm-up, not measured.
        for (const t of smoke ? [] : Object.values(targets)) {
            await autocannon({ ...t, connections: CONNECTIONS, duration: 1 });
        }

        for (let round = 0; round < rounds; round++) {
            for (const name of ['hello', 'email'] as const) {
                const cpuBefore = await serverCpuUs(child);
                const result = await autocannon({ ...targets[name], connections: CONNECTIONS, duration: seconds });
                const cpuUs = await serverCpuUs(child) - cpuBefore;
                runs[name].push({
                    rps: result['2xx'] / result.duration,
                    p50: result.latency.p50,
                    p99: result.latency.p99,
                    errors: result.errors + result.non2xx,
                    cpuUs: cpuUs / Math.max(1, result['2xx'])
                });
                rss = Math.max(Number.isNaN(rss) ? 0 : rss, rssOf(child.pid!));
            }
        }
    }
    finally {
        const exited = once(child, 'exit');
        child.disconnect();
        await exited;
        await Fs.rm(dataDir, { recursive: true, force: true });
    }

    const mean = (list: Run[], key: keyof Run) => list.reduce((a, r) => a + r[key], 0) / list.length;
    const hello = mean(runs.hello, 'rps');
    const email = mean(runs.email, 'rps');
    const row = (label: string, list: Run[]) => [label, fmt(mean(list, 'rps')), fmt(mean(list, 'p50')), fmt(Math.max(...list.map((r) => r.p99))), String(list.reduce((a, r) => a + r.errors, 0)), fmt(mean(list, 'cpuUs'))];
    return {
        tables: [{
            title: `GET one email vs hello world: autocannon, ${CONNECTIONS} connections, ${rounds} × ${seconds} s each, alternating; server in its own process (RSS peak ${mib(rss)} MiB)`,
            columns: ['route', 'req/s (2xx)', 'latency p50 ms', 'p99 ms', 'errors + non-2xx', 'server CPU µs / request'],
            rows: [row('GET /hello (bare Hapi route, the ceiling)', runs.hello), row(`GET ${emailPath.slice(0, 40)}… (API key, 10 KB multipart email)`, runs.email)]
        }],
        targets: [{
            target: `GET one email ≥ ${SHARE_TARGET * 100} % of hello-world req/s`,
            measured: `${fmt(email / hello * 100)} % (${fmt(email)} vs ${fmt(hello)} req/s)`,
            met: smoke ? null : email / hello >= SHARE_TARGET
        }],
        notes: [
            'autocannon runs in the bench process, the server in a child: on 2 cores each gets about one.',
            'The server is Hapi + the plugin on the embedded default (SQLite records; blobs up to 256 KiB in blobs.sqlite, larger as files), holding 200 emails of the 10 KB multipart profile.',
            'Server CPU per request counts all of the server\'s threads (SQLite runs on the libuv pool); on a shared machine it moves less than req/s, and hello ÷ GET of it is the share the server alone would allow.'
        ]
    };
}

if (require.main === module) {
    runBench('GET one email (autocannon)', 'get-one', bench, ['cpu-prof-dir']);
}
