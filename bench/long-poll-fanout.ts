import * as Hapi from '@hapi/hapi';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as V8 from 'node:v8';
import { plugin } from '../adapters/hapi';
import { createFsBlobStore } from '../lib/blob-store/fs-blob-store';
import { openEmbeddedStores } from '../lib/service/embedded-stores';
import { createInboxCapture, type InboxCapture } from '../lib/service/inbox-capture';
import { VERSION_SHARE_MS } from '../lib/long-poll/probe-limiter';
import { createNotifier } from '../lib/long-poll/notifier';
import { createKnexRecordStore } from '../lib/record-store/knex-record-store';
import { openPostgresKnex } from '../lib/record-store/postgres/postgres-knex';
import { countingStore, type CountingStore } from './counting-store';
import { startPostgres, type PostgresServer } from '../test/helpers/postgres';
import { BENCH_POSTGRES } from './postgres-options';
import { mib } from './process-rss';
import { profiles } from './profiles';
import { readArgs, runBench, type BenchArgs, type TargetCheck } from './report';
import { startStandalone, type Standalone } from './standalone';
import { fmt, summarize, wallMs, type Summary } from './stats';
import { tempDir } from '../test/helpers/temp-dir';

/** Waiting requests (the issue: 10,000). */
const WAITERS = 10_000;
/** Inboxes they spread over in the spread case (the issue: 1,000). */
const SPREAD_INBOXES = 1000;
/** Long-poll timeout the clients ask for, s: the API's maximum, so nobody times out during a scenario. */
const WAIT_SECONDS = 28;
/** Longest wait for every request to be waiting on the server, ms. */
const RAMP_LIMIT_MS = 40_000;
/** The ramp ends early when the number waiting has not grown for this long, ms. */
const PLATEAU_MS = 3000;
/** Idle window in which store queries and RSS are measured, ms. */
const IDLE_MS = 5000;
/** Longest wait for every woken request's answer, ms. */
const WAKE_LIMIT_MS = 15_000;
/** Ingests in flight while waking the spread inboxes. */
const INGEST_CONCURRENCY = 8;
/** Targets of the issue. */
const RSS_TARGET_BYTES = 300 * 2 ** 20;
const WAKE_P99_IN_PROCESS_MS = 50;
const WAKE_P99_ACROSS_MS = 1000;

interface Scenario {
    label: string;
    backend: 'SQLite, in-process' | 'Postgres, two instances';
    waiters: number;
    inboxes: number;
}

interface Outcome {
    scenario: Scenario;
    opened: number;
    rampMs: number;
    /** Requests waiting at once when the idle window began (the most the server admitted). */
    waitingAtIdle: number;
    /** RSS and live heap (after a forced GC) with the server up and nobody waiting, bytes. */
    rssBefore: number;
    heapBefore: number;
    /** Peak RSS during the idle window, bytes. */
    rssWaiting: number;
    /** Live heap (after a forced GC) with everyone waiting, bytes. */
    heapWaiting: number;
    /** Every record-store call per second in the idle window (re-issued requests included). */
    idleQueriesPerSec: number;
    /** inboxVersion() calls per second in the idle window: what waiting itself costs. */
    idleProbesPerSec: number;
    idleByMethod: Record<string, number>;
    woken: number;
    expectedWoken: number;
    /** Re-issued requests that found the email at once (not wakes). */
    late: number;
    /** Requests that reached their timeout before their inbox's mail was announced (rightly empty). */
    timedOutDuringIngest: number;
    /** Ingest finished (capture.ingestRawEmail resolved, or the SMTP 250 read) → response read, ms. */
    wake: Summary;
    /** Ingest started (the call, or the end of DATA written) → response read, ms: includes the ingest itself. */
    wakeFromSend: Summary;
    problems: string[];
}

interface Instance {
    capture: InboxCapture;
    counter: CountingStore;
    server: Hapi.Server;
    apiKey: string;
    /** Waiting requests that ended empty after their inbox's mail was announced (missed wake-ups). */
    missed: string[];
    close(): Promise<void>;
}

/** The serving instance: the Hapi plugin over a counted record store, listening on loopback. */
async function startInstance(databaseUrl?: string): Promise<Instance> {
    const dataDir = await tempDir('bench-poll');
    const stores = databaseUrl ?
        {
            recordStore: createKnexRecordStore({ knex: openPostgresKnex(databaseUrl), destroyKnexOnClose: true }),
            blobStore: createFsBlobStore({ root: Path.join(dataDir, 'blobs'), signingSecret: 'bench signing secret, not secret' })
        } :
        await openEmbeddedStores({ dataDir });
    const counter = countingStore(stores.recordStore);
    // When each inbox's mail was first announced to the waiters (an in-process ingest, or
    // a Postgres NOTIFY from the other instance), Unix ms with sub-ms.
    const notifier = createNotifier();
    const announced = new Map<string, number>();
    const publish = notifier.publish.bind(notifier);
    notifier.publish = (inbox) => {
        if (!announced.has(inbox)) {
            announced.set(inbox, wallMs());
        }

        publish(inbox);
    };
    const capture = createInboxCapture({ recordStore: counter.store, blobStore: stores.blobStore, notifier });
    const server = Hapi.server({ host: '127.0.0.1', port: 0 });
    await server.register({ plugin, options: { capture } });
    // A waiting request that took its inbox's announcement and still ends empty is a
    // missed wake-up, whatever its timing seen from the client: checked where the
    // handler returns (a server-wide extension, nothing kept per request).
    const missed: string[] = [];
    server.ext('onPostHandler', (request, h) => {
        const query = request.query as { inbox?: string; wait?: boolean };
        const source = (request.response as { source?: { emails?: unknown[] } } | null)?.source;
        const at = query.inbox === undefined ? undefined : announced.get(query.inbox);
        if (query.wait === true && at !== undefined && source?.emails?.length === 0 && request.info.received < at) {
            missed.push(`a request on ${query.inbox} received ${fmt(at - request.info.received)} ms before its mail was announced ended empty ${fmt(wallMs() - at)} ms after`);
        }

        return h.continue;
    });
    await server.start();
    const apiKey = await capture.createKey(`bench-${Date.now()}`);
    return {
        capture,
        counter,
        server,
        apiKey,
        missed,
        async close() {
            await server.stop({ timeout: 2000 });
            await capture.close();
            await Fs.rm(dataDir, { recursive: true, force: true });
        }
    };
}

function startClients(port: number, apiKey: string, scenario: Scenario, prefix: string): ChildProcess {
    return fork(Path.join(__dirname, 'long-poll-clients.js'),
        [String(port), apiKey, String(scenario.waiters), String(scenario.inboxes), prefix, String(WAIT_SECONDS)],
        { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

function ask<T>(child: ChildProcess, message: object, key: string): Promise<T> {
    return new Promise((resolve) => {
        const onMessage = (m: Record<string, unknown>) => {
            if (key in m) {
                child.off('message', onMessage);
                resolve(m as T);
            }
        };

        child.on('message', onMessage);
        if (Object.keys(message).length > 0) {
            child.send(message);
        }
    });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the clients report: every response so far and the requests still open. */
interface ClientReport {
    responses: Array<[number, number, number, number, number]>;
    pending: Array<[number, number]>;
}

/**
 * Wake figures from the clients' report. The request of interest is the one that was
 * open when its inbox's message was sent (issued before, answered after). It is woken
 * when answered with the email. One answered empty reached its timeout around the
 * ingest (the server counts the 28 s from when it took the request, on a slow ramp
 * well after the client issued it): whether that was before the mail was announced
 * only the server can tell (Instance.missed), so it is counted apart here. An error
 * or no answer at all is missed, described for the report (times relative to the
 * send, ms).
 */
function wakeFigures(report: ClientReport, inboxes: number, sent: Map<number, number>, finished: Map<number, number>) {
    const expected = new Set<number>();
    const missed = new Map<number, string>();
    const latency: Array<[number, number]> = [];
    let endedEmpty = 0;
    let late = 0;
    for (const [j, issuedAt] of report.pending) {
        const start = sent.get(j % inboxes)!;
        if (issuedAt < start) {
            expected.add(j);
            missed.set(j, `request ${j}: issued ${fmt(issuedAt - start)} ms before the send, still open`);
        }
    }

    for (const [j, issuedAt, arrivedAt, status, emails] of report.responses) {
        const k = j % inboxes;
        const start = sent.get(k)!;
        const end = finished.get(k)!;
        if (issuedAt >= start) {
            if (status === 200 && emails > 0) {
                // Issued after the mail was sent (a re-issue after a timeout): answered at once, not woken.
                late++;
            }

            continue;
        }

        if (arrivedAt < start) {
            // Ended before the send (timed out and re-issued): its re-issue is the one of interest.
            continue;
        }

        if (status === 200 && emails > 0) {
            expected.add(j);
            latency.push([arrivedAt - end, arrivedAt - start]);
        }
        else if (status === 200 && emails === 0) {
            endedEmpty++;
        }
        else {
            expected.add(j);
            missed.set(j, `request ${j}: issued ${fmt(issuedAt - start)} ms before the send, answered ${status} ${fmt(arrivedAt - start)} ms after it; the ingest took ${fmt(end - start)} ms`);
        }
    }

    return {
        expected: expected.size,
        woken: latency.length,
        endedEmpty,
        late,
        missed: [...missed.values()].slice(0, 3),
        wake: summarize(latency.map((w) => w[0])),
        wakeFromSend: summarize(latency.map((w) => w[1]))
    };
}

/** Diagnostics a scenario run may be asked for (options of the benchmark). */
interface Diagnostics {
    /** Writes a V8 heap snapshot here once everyone waits (--heap-snapshot FILE). */
    heapSnapshot?: string;
    /**
     * Prints process.memoryUsage() and the V8 heap spaces while everyone waits, and the
     * wake window in monotonic µs (a .cpuprofile's clock) to cut a profile to it (--diagnostics on).
     */
    print?: boolean;
}

async function runScenario(scenario: Scenario, smoke: boolean, pg?: PostgresServer, diagnostics: Diagnostics = {}): Promise<Outcome> {
    const problems: string[] = [];
    const databaseUrl = pg ? await pg.createDatabase() : undefined;
    const instance = await startInstance(databaseUrl);
    // Across instances: mail arrives at a second service (the standalone example, its
    // own process) and reaches the first only through Postgres NOTIFY. The sender is a
    // process of its own, so the 250's arrival is not delayed by the serving instance.
    let other: Standalone | undefined;
    let sender: ChildProcess | undefined;
    let clients: ChildProcess | undefined;
    const prefix = `lp${Date.now().toString(36)}`;
    try {
        if (databaseUrl) {
            other = await startStandalone({ databaseUrl });
            sender = fork(Path.join(__dirname, 'long-poll-sender.js'), [String(other.smtpPort), prefix, String(scenario.inboxes), String(INGEST_CONCURRENCY)],
                { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
            await ask(sender, {}, 'ready');
        }

        global.gc?.();
        const rssBefore = process.memoryUsage().rss;
        const heapBefore = process.memoryUsage().heapUsed;
        const port = (instance.server.info.port as number);
        const rampStart = Date.now();
        const rampStartUs = process.hrtime.bigint() / 1000n;
        clients = startClients(port, instance.apiKey, scenario, prefix);
        const opened = await ask<{ opened: number; failures: number; firstFailure: string; rampMs: number }>(clients, {}, 'opened');
        if (opened.failures > 0) {
            problems.push(`${opened.failures} requests failed to open: ${opened.firstFailure}`);
        }

        // Every request waiting on the server, or as many as it admits: when the count
        // stops growing for PLATEAU_MS (admission slower than requests time out), go on.
        const rampDeadline = Date.now() + (smoke ? 10_000 : RAMP_LIMIT_MS);
        let best = 0;
        let bestAt = Date.now();
        while (instance.capture.longPoller.waiterCount() < opened.opened && Date.now() < rampDeadline && Date.now() - bestAt < PLATEAU_MS) {
            await sleep(50);
            const now = instance.capture.longPoller.waiterCount();
            if (now > best) {
                best = now;
                bestAt = Date.now();
            }
        }

        const waitingAtIdle = instance.capture.longPoller.waiterCount();
        if (diagnostics.print) {
            console.error(`ramp window, monotonic µs: ${rampStartUs} to ${process.hrtime.bigint() / 1000n}`);
        }

        const rampMs = (waitingAtIdle >= opened.opened ? Date.now() : bestAt) - rampStart;
        if (waitingAtIdle < opened.opened) {
            problems.push(`at most ${waitingAtIdle} of ${opened.opened} requests were waiting at once`);
        }

        // Idle: everyone waits, nothing arrives. Count what the waiting costs the store.
        global.gc?.();
        const heapWaiting = process.memoryUsage().heapUsed;
        if (diagnostics.heapSnapshot) {
            V8.writeHeapSnapshot(diagnostics.heapSnapshot);
        }
        const idleMs = smoke ? 500 : IDLE_MS;
        instance.counter.reset();
        let rssWaiting = process.memoryUsage().rss;
        const idleStart = Date.now();
        while (Date.now() - idleStart < idleMs) {
            await sleep(100);
            rssWaiting = Math.max(rssWaiting, process.memoryUsage().rss);
        }

        if (diagnostics.print) {
            const spaces = V8.getHeapSpaceStatistics().map((x) => `${x.space_name} ${mib(x.space_size)}/${mib(x.space_used_size)}`).join(', ');
            console.error(`memory while waiting: ${JSON.stringify(Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, mib(v)])))}; heap spaces size/used MiB: ${spaces}`);
        }

        const idleByMethod = instance.counter.counts();
        const idleSeconds = (Date.now() - idleStart) / 1000;
        const idleQueriesPerSec = instance.counter.total() / idleSeconds;
        const idleProbesPerSec = (idleByMethod.inboxVersion ?? 0) / idleSeconds;

        // Wake: one message for every inbox that has waiters; each waiter's latency is
        // measured from the end of the ingest of its inbox's message.
        const finished = new Map<number, number>();
        const sent = new Map<number, number>();
        const wakeStartUs = process.hrtime.bigint() / 1000n;
        if (sender) {
            const reply = await ask<{ sent: Array<[number, number, number, number]> }>(sender, { go: true }, 'sent');
            for (const [k, dataEndAt, ackedAt, code] of reply.sent) {
                sent.set(k, dataEndAt);
                finished.set(k, ackedAt);
                if (code !== 250) {
                    problems.push(`ingest for inbox ${k} answered ${code}`);
                }
            }
        }
        else {
            const profile = profiles()['text-1k'];
            const capture = instance.capture;
            let next = 0;
            await Promise.all(Array.from({ length: Math.min(INGEST_CONCURRENCY, scenario.inboxes) }, async () => {
                while (next < scenario.inboxes) {
                    const k = next++;
                    const to = `${prefix}-${k}@bench.test`;
                    sent.set(k, wallMs());
                    await capture.ingestRawEmail(profile.message(k, to, prefix), { recipients: [to] });
                    finished.set(k, wallMs());
                }
            }));
        }

        let figures: ReturnType<typeof wakeFigures>;
        const wakeDeadline = Date.now() + (smoke ? 5000 : WAKE_LIMIT_MS);
        for (;;) {
            await sleep(200);
            figures = wakeFigures(await ask<ClientReport>(clients, { report: true }, 'responses'), scenario.inboxes, sent, finished);
            if (figures.woken >= figures.expected || Date.now() > wakeDeadline) {
                break;
            }
        }

        clients.send({ stop: true });
        if (diagnostics.print) {
            console.error(`wake window, monotonic µs: ${wakeStartUs} to ${process.hrtime.bigint() / 1000n}`);
            const report = await ask<ClientReport>(clients, { report: true }, 'responses');
            await Fs.writeFile(`/tmp/lp-report-${process.pid}.json`, JSON.stringify({ report, sent: [...sent], finished: [...finished] }));
            console.error(`client report written to /tmp/lp-report-${process.pid}.json`);
        }

        if (figures.woken < figures.expected) {
            problems.push(`${figures.expected - figures.woken} waiting requests not answered at all within ${WAKE_LIMIT_MS} ms (${figures.missed.join('; ')})`);
        }

        if (instance.missed.length > 0) {
            problems.push(`${instance.missed.length} waiting requests ended empty after their mail was announced (${instance.missed.slice(0, 3).join('; ')})`);
        }

        return {
            scenario,
            opened: opened.opened,
            rampMs,
            waitingAtIdle,
            rssBefore,
            heapBefore,
            rssWaiting,
            heapWaiting,
            idleQueriesPerSec,
            idleProbesPerSec,
            idleByMethod,
            woken: figures.woken,
            expectedWoken: figures.expected + instance.missed.length,
            late: figures.late,
            timedOutDuringIngest: figures.endedEmpty - instance.missed.length,
            wake: figures.wake,
            wakeFromSend: figures.wakeFromSend,
            problems: problems.slice(0, 5)
        };
    }
    finally {
        for (const child of [clients, sender]) {
            if (child && child.exitCode === null) {
                const exited = once(child, 'exit');
                child.kill();
                await exited;
            }
        }

        await other?.stop();
        await instance.close();
    }
}

function scenarioList(waiters: number, spread: number): Scenario[] {
    return [
        { label: `${waiters} waiters over ${spread} inboxes`, backend: 'SQLite, in-process', waiters, inboxes: spread },
        { label: `${waiters} waiters on one inbox`, backend: 'SQLite, in-process', waiters, inboxes: 1 },
        { label: `${waiters / 10} waiters on one inbox (reference)`, backend: 'SQLite, in-process', waiters: waiters / 10, inboxes: 1 },
        { label: `${waiters} waiters over ${spread} inboxes`, backend: 'Postgres, two instances', waiters, inboxes: spread },
        { label: `${waiters} waiters on one inbox`, backend: 'Postgres, two instances', waiters, inboxes: 1 }
    ];
}

/** Runs one scenario in this process (a child of the benchmark: its RSS is this scenario's alone). */
async function scenarioMain(args: BenchArgs): Promise<void> {
    const smoke = args.smoke;
    const waiters = smoke ? 40 : Number(args.values.waiters ?? WAITERS);
    const scenario = scenarioList(waiters, smoke ? 4 : SPREAD_INBOXES)[Number(args.values.scenario)];
    const pg = scenario.backend === 'Postgres, two instances' ? await startPostgres(BENCH_POSTGRES) : undefined;
    try {
        const outcome = await runScenario(scenario, smoke, pg, { heapSnapshot: args.values['heap-snapshot'] as string | undefined, print: args.values.diagnostics === 'on' });
        await Fs.writeFile(args.values['scenario-out'] as string, JSON.stringify(outcome));
    }
    finally {
        await pg?.stop();
    }
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    const waiters = smoke ? 40 : Number(args.values.waiters ?? WAITERS);
    const scenarios = scenarioList(waiters, smoke ? 4 : SPREAD_INBOXES);
    const withPostgres = args.values.postgres !== 'off';
    const outcomes: Outcome[] = [];
    const outDir = await tempDir('bench-poll-out');
    try {
        for (const [index, scenario] of scenarios.entries()) {
            // Smoke: one scenario per path (in-process SQLite, Postgres across instances).
            const chosen = (args.values.scenarios as string | undefined)?.split(',').map(Number);
            if ((scenario.backend === 'Postgres, two instances' && !withPostgres) || (smoke && index !== 0 && index !== 4) || (chosen && !chosen.includes(index))) {
                continue;
            }

            // A process per scenario: RSS and heap belong to that scenario alone.
            const out = Path.join(outDir, `${index}.json`);
            const profileDir = args.values['cpu-prof-dir'] as string | undefined;
            const snapshot = args.values['heap-snapshot'] as string | undefined;
            const child = fork(__filename, ['--scenario', String(index), '--scenario-out', out, '--waiters', String(waiters), ...(smoke ? ['--smoke'] : []),
                ...(snapshot ? ['--heap-snapshot', Path.resolve(`${snapshot}-${index}.heapsnapshot`)] : []),
                ...(args.values.diagnostics === 'on' ? ['--diagnostics', 'on'] : [])], {
                stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
                // --cpu-prof-dir DIR: a CPU profile of each scenario's serving process, for the flame graph.
                // --expose-gc: live heap is measured after a forced collection.
                execArgv: ['--expose-gc', ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', Path.resolve(profileDir), '--cpu-prof-name', `scenario-${index}.cpuprofile`] : [])]
            });
            const [code] = await once(child, 'exit') as [number | null];
            if (code !== 0) {
                throw new Error(`scenario "${scenario.backend}, ${scenario.label}" exited with ${String(code)}`);
            }

            const outcome = JSON.parse(await Fs.readFile(out, 'utf8')) as Outcome;
            outcomes.push(outcome);
            console.error(`${scenario.backend}, ${scenario.label}: RSS ${mib(outcome.rssWaiting)} MiB, idle ${fmt(outcome.idleQueriesPerSec)} queries/s, wake p50 ${fmt(outcome.wake.p50)} p99 ${fmt(outcome.wake.p99)} ms`);
        }
    }
    finally {
        await Fs.rm(outDir, { recursive: true, force: true });
    }

    const checks: TargetCheck[] = [];
    for (const o of outcomes) {
        const full = o.scenario.waiters === waiters;
        const inProcess = o.scenario.backend === 'SQLite, in-process';
        const where = `${o.scenario.backend}, ${o.scenario.label}`;
        if (full) {
            checks.push({
                target: `${where}: server RSS < 300 MiB while ${o.scenario.waiters} wait`,
                measured: `${mib(o.rssWaiting)} MiB with ${o.waitingAtIdle} waiting (live heap ${mib(o.heapWaiting)} MiB)`,
                met: smoke ? null : o.rssWaiting < RSS_TARGET_BYTES && o.waitingAtIdle >= o.opened
            });
        }

        const limit = inProcess ? WAKE_P99_IN_PROCESS_MS : WAKE_P99_ACROSS_MS;
        checks.push({
            target: `${where}: wake p99 < ${limit} ms (every waiting request answered with the email)`,
            measured: `${fmt(o.wake.p99)} ms, ${o.woken} of ${o.expectedWoken} woken`,
            met: smoke ? null : o.wake.p99 < limit && o.woken === o.expectedWoken
        });
    }

    // The long-poller shares one version probe per inbox for VERSION_SHARE_MS (250 ms):
    // however many wait on an inbox, idle probes stay under four a second for it.
    const perInboxCap = 1000 / VERSION_SHARE_MS;
    const oneBig = outcomes.find((o) => o.scenario.backend === 'SQLite, in-process' && o.scenario.inboxes === 1 && o.scenario.waiters === waiters);
    const oneSmall = outcomes.find((o) => o.scenario.backend === 'SQLite, in-process' && o.scenario.inboxes === 1 && o.scenario.waiters !== waiters);
    if (oneBig && oneSmall) {
        const worst = Math.max(...outcomes.map((o) => o.idleProbesPerSec / o.scenario.inboxes));
        checks.push({
            target: `idle store queries independent of waiters per inbox: at most ${perInboxCap}/s per inbox (one shared probe per ${VERSION_SHARE_MS} ms) whatever the number of waiters`,
            measured: `one inbox: ${oneSmall.scenario.waiters} waiters ${fmt(oneSmall.idleProbesPerSec)}/s, ${oneBig.scenario.waiters} waiters ${fmt(oneBig.idleProbesPerSec)}/s; worst per inbox in any scenario ${fmt(worst)}/s`,
            met: smoke ? null : worst <= perInboxCap * 1.05
        });
    }

    return {
        tables: [{
            title: `Long-poll fan-out: GET /v1/emails?wait=true&timeout=${WAIT_SECONDS} from a separate client process; wake = ingest finished → response received`,
            columns: ['backend', 'scenario', 'waiting at once', 'ramp s', 'RSS before / waiting MiB', 'live heap before / waiting MiB', 'idle store calls/s (all)', 'idle probes/s per inbox', 'idle calls by method', 'woken / expected', 'timed out before the announcement', 're-issued, answered at once', 'wake p50 ms', 'wake p99 ms', 'max ms', 'from ingest start p50 / p99 ms', 'problems'],
            rows: outcomes.map((o) => [
                o.scenario.backend, o.scenario.label, `${o.waitingAtIdle} of ${o.opened}`, fmt(o.rampMs / 1000),
                `${mib(o.rssBefore)} / ${mib(o.rssWaiting)}`, `${mib(o.heapBefore)} / ${mib(o.heapWaiting)}`,
                fmt(o.idleQueriesPerSec), fmt(o.idleProbesPerSec / o.scenario.inboxes),
                Object.entries(o.idleByMethod).map(([m, n]) => `${m} ${n}`).join(', ') || '-',
                `${o.woken} / ${o.expectedWoken}`, String(o.timedOutDuringIngest), String(o.late), fmt(o.wake.p50), fmt(o.wake.p99), fmt(o.wake.max),
                `${fmt(o.wakeFromSend.p50)} / ${fmt(o.wakeFromSend.p99)}`, o.problems.join('; ') || '-'
            ])
        }],
        targets: checks,
        notes: [
            `Idle window: ${smoke ? 500 : IDLE_MS} ms right after every request is waiting; store queries are calls on the real record store, counted by a wrapper (counting-store.ts).`,
            'In-process: the serving instance ingests the messages itself (capture.ingestRawEmail). Two instances: a second service (examples/standalone.js, its own process, same Postgres database) receives the messages over SMTP from a sender process of its own; the serving instance hears of them only through Postgres LISTEN/NOTIFY. There "ingest finished" is the 250 read by the sender; the NOTIFY goes out at commit, before that 250, so a waiter can be answered first (negative latency). The "from ingest start" column counts from the end of DATA (or the ingest call) instead and includes the ingest.',
            'A request that ends empty at its 28 s timeout is issued again at once (a slow ramp can outlast 28 s); such re-issues cost an auth lookup and a list query, which the "all" column includes and the probe column does not. A re-issue made after its inbox\'s mail was sent finds it at once and is not counted as a wake.',
            'The request of interest per client slot is the one open when its inbox\'s message was sent. One that reached its 28 s timeout (counted by the server from when it took the request, on a slow ramp well after the client sent it) before its inbox\'s mail was announced rightly answers empty: "timed out before the announcement", neither expected nor missed. A waiting request that ends empty after the announcement (checked in the server, where the handler returns), an error, or no answer is a missed wake-up, described in "problems".',
            'The clients keep every keep-alive socket (Node\'s agent otherwise keeps 256 and closes the rest as answers arrive, which would make the server handle thousands of closes during the wake).',
            'Live heap is measured after a forced GC (node --expose-gc); RSS is the peak during the idle window.',
            `Spread case: one message per inbox, ${INGEST_CONCURRENCY} ingests in flight, so later inboxes wake while earlier answers are still being written.`,
            'Each scenario runs in a fresh process; server RSS is that process (the serving instance), the clients are another process.'
        ]
    };
}

if (require.main === module) {
    const options = ['waiters', 'postgres', 'scenario', 'scenario-out', 'scenarios', 'cpu-prof-dir', 'heap-snapshot', 'diagnostics'];
    if (process.argv.includes('--scenario')) {
        scenarioMain(readArgs(options)).then(() => process.exit(0), (err: unknown) => {
            console.error(err);
            process.exit(1);
        });
    }
    else {
        runBench('Long-poll fan-out', 'long-poll-fanout', bench, options);
    }
}
