import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import * as Fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import * as Path from 'node:path';
import { startMailDev, type MailDev, type MailDevVersion } from './maildev';
import { cpuMsOf } from './process-cpu';
import { mib, rssOf } from './process-rss';
import { GET_ONE_PROFILE, GET_ONE_STORED, GET_ONE_STORED_SMOKE, GET_ONE_TAG } from './get-one-emails';
import { profiles, subjectOf } from './profiles';
import { runBench, type BenchArgs } from './report';
import { runLoad } from './smtp-load';
import { fmt, median } from './stats';
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
/** Rounds, alternating the routes, so machine noise falls on all; figures are medians (the issue: at least 3). */
const ROUNDS = 3;
/** Concurrent connections: autocannon's default. */
const CONNECTIONS = 10;
/** The issue: GET one email at least as fast as MailDev's by-id read. */
const VS_MAILDEV_TARGET = 1;
/** Longest wait for MailDev 2.2.1 to have parsed what it acknowledged, ms. */
const MAILDEV_SETTLE_MS = 10_000;

interface Run {
    rps: number;
    p50: number;
    p99: number;
    errors: number;
    /** Server CPU time (all its threads) per 2xx response, µs: steadier than req/s on a busy machine. */
    cpuUs: number;
}

/** One route under test: where to send the requests, and the CPU time of the process serving it so far (µs). */
interface Route {
    label: string;
    url: string;
    headers: Record<string, string>;
    cpuUs(): Promise<number>;
}

/** The server's CPU time so far, µs (it answers the `'cpu'` message). */
async function serverCpuUs(child: ChildProcess): Promise<number> {
    const reply = once(child, 'message') as Promise<[{ cpuUs: number }]>;
    child.send('cpu');
    return (await reply)[0].cpuUs;
}

/**
 * Sends MailDev the very emails our server holds (same profile, sequence numbers and
 * tag), waits until it has stored them all, and returns its route to the one we read.
 */
async function mailDevRoute(maildev: MailDev, stored: number, pick: number): Promise<Route> {
    const load = await runLoad({ port: maildev.smtpPort, profile: profiles()[GET_ONE_PROFILE], sessions: 4, maxMessages: stored, maxMs: 120_000, inboxPrefix: GET_ONE_TAG, tag: GET_ONE_TAG });
    if (load.acked !== stored) {
        throw new Error(`MailDev ${maildev.version} took ${load.acked} of ${stored} emails: ${load.firstError ?? JSON.stringify(load.refused)}`);
    }

    const deadline = Date.now() + MAILDEV_SETTLE_MS;
    let emails = await maildev.listEmails();
    while (emails.length < stored && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        emails = await maildev.listEmails();
    }

    // Sessions deliver in parallel: the email is found by its subject, not its position.
    const subject = subjectOf(GET_ONE_PROFILE, pick);
    const wanted = emails.find((e) => e.subject === subject);
    if (!wanted) {
        throw new Error(`MailDev ${maildev.version} holds no email "${subject}"`);
    }

    const byIdRoute = maildev.version === '2.2.1' ? 'GET /email/:id' : 'GET /api/email/:id';
    return {
        label: `MailDev ${maildev.version} ${byIdRoute} (from memory)`,
        url: maildev.emailUrl(wanted.id),
        headers: {},
        cpuUs: async () => cpuMsOf(maildev.pid) * 1000
    };
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    const seconds = smoke ? 1 : RUN_SECONDS;
    const rounds = smoke ? 1 : ROUNDS;
    const stored = smoke ? GET_ONE_STORED_SMOKE : GET_ONE_STORED;
    const dataDir = await tempDir('bench-getone');
    const profileDir = args.values['cpu-prof-dir'] as string | undefined;
    const child = fork(Path.join(__dirname, 'get-one-server.js'), [dataDir, ...(smoke ? ['--smoke'] : [])], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        // --cpu-prof-dir DIR: a CPU profile of the server, for the flame graph.
        execArgv: profileDir ? ['--cpu-prof', '--cpu-prof-dir', Path.resolve(profileDir)] : []
    });
    const maildevs: MailDev[] = [];
    const routes: Route[] = [];
    const runs = new Map<Route, Run[]>();
    let rss = NaN;
    try {
        const [ready] = await once(child, 'message') as [{ port: number; apiKey: string; messageIds: string[] }];
        const base = `http://127.0.0.1:${ready.port}`;
        const pick = Math.floor(ready.messageIds.length / 2);
        const emailPath = `/v1/emails/${encodeURIComponent(ready.messageIds[pick])}`;
        const ownCpu = () => serverCpuUs(child);
        routes.push(
            { label: 'GET /hello (bare Hapi route on our server, the ceiling)', url: `${base}/hello`, headers: {}, cpuUs: ownCpu },
            { label: `ours GET ${emailPath.slice(0, 40)}… (API key, SQLite read connection)`, url: `${base}${emailPath}`, headers: { authorization: `Bearer ${ready.apiKey}` }, cpuUs: ownCpu }
        );
        for (const version of ['3.0.0', '2.2.1'] as MailDevVersion[]) {
            const maildev = await startMailDev(version);
            maildevs.push(maildev);
            routes.push(await mailDevRoute(maildev, stored, pick));
        }

        // Warm-up, not measured.
        for (const route of smoke ? [] : routes) {
            await autocannon({ url: route.url, headers: route.headers, connections: CONNECTIONS, duration: 1 });
        }

        for (let round = 0; round < rounds; round++) {
            for (const route of round % 2 === 0 ? routes : [...routes].reverse()) {
                const cpuBefore = await route.cpuUs();
                const result = await autocannon({ url: route.url, headers: route.headers, connections: CONNECTIONS, duration: seconds });
                const cpuUs = await route.cpuUs() - cpuBefore;
                runs.set(route, [...runs.get(route) ?? [], {
                    rps: result['2xx'] / result.duration,
                    p50: result.latency.p50,
                    p99: result.latency.p99,
                    errors: result.errors + result.non2xx,
                    cpuUs: cpuUs / Math.max(1, result['2xx'])
                }]);
                rss = Math.max(Number.isNaN(rss) ? 0 : rss, rssOf(child.pid!));
            }
        }
    }
    finally {
        for (const maildev of maildevs) {
            await maildev.stop();
        }

        const exited = once(child, 'exit');
        child.disconnect();
        await exited;
        await Fs.rm(dataDir, { recursive: true, force: true });
    }

    const mid = (route: Route, key: keyof Run) => median((runs.get(route) ?? []).map((r) => r[key]));
    // ours ÷ another route: the median of the rounds' ratios (each round ran both, close together).
    const ratio = (a: Route, b: Route) => median((runs.get(a) ?? []).map((r, i) => r.rps / (runs.get(b)?.[i]?.rps ?? NaN)));
    const [hello, ours, ...peers] = routes;
    const row = (route: Route) => [
        route.label, fmt(mid(route, 'rps')), fmt(mid(route, 'p50')), fmt(mid(route, 'p99')),
        String((runs.get(route) ?? []).reduce((a, r) => a + r.errors, 0)), fmt(mid(route, 'cpuUs')),
        route === ours ? '1' : fmt(ratio(ours, route))
    ];
    return {
        tables: [{
            title: `GET one email, ours vs MailDev's by-id read: autocannon, ${CONNECTIONS} connections, ${rounds} × ${seconds} s each, alternating; medians of the rounds; our server in its own process (RSS peak ${mib(rss)} MiB)`,
            columns: ['route', 'req/s (2xx)', 'latency p50 ms', 'p99 ms', 'errors + non-2xx', 'server CPU µs / request', 'ours ÷ this (req/s)'],
            rows: routes.map(row)
        }],
        targets: peers.map((peer) => ({
            target: `GET one email ≥ ${VS_MAILDEV_TARGET}× ${peer.label.slice(0, peer.label.indexOf(' (')) || peer.label} req/s`,
            measured: `${fmt(ratio(ours, peer))}× (${fmt(mid(ours, 'rps'))} vs ${fmt(mid(peer, 'rps'))} req/s; server CPU ${fmt(mid(ours, 'cpuUs'))} vs ${fmt(mid(peer, 'cpuUs'))} µs a request)`,
            met: smoke ? null : ratio(ours, peer) >= VS_MAILDEV_TARGET
        })),
        notes: [
            'autocannon runs in the bench process, each server in a child: on 2 cores each gets about one.',
            `Our server is Hapi + the plugin on the embedded default (SQLite records; blobs up to 256 KiB in blobs.sqlite, larger as files), holding ${stored} emails of the 10 KB multipart profile; each MailDev (at its defaults, in memory) gets the same ${stored} emails over SMTP, and every server serves the same one (the middle one).`,
            `For scale: our GET one email runs at ${fmt(ratio(ours, hello) * 100)} % of the hello-world route on the same server.`,
            'Server CPU per request counts all of the server\'s threads (SQLite runs on the libuv pool; ours from process.cpuUsage(), MailDev from /proc/<pid>/stat in 10 ms ticks); on a shared machine it moves less than req/s.',
            'MailDev 3.0.0 returns the parsed email object it keeps in memory. MailDev 2.2.1 sanitises the email\'s HTML on every read (a new JSDOM window and DOMPurify per request), which is most of its cost.'
        ]
    };
}

if (require.main === module) {
    runBench('GET one email (autocannon, ours vs MailDev)', 'get-one', bench, ['cpu-prof-dir']);
}
