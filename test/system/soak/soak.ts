import { spawn, type ChildProcess } from 'node:child_process';
import * as Fs from 'node:fs/promises';
import * as Http from 'node:http';
import * as Os from 'node:os';
import * as Path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as Nodemailer from 'nodemailer';
import { buildMail } from '../../helpers/mail';
import { tempDir } from '../../helpers/temp-dir';

/** The service under soak: a child process of its own (see its header). */
const SERVICE_CHILD = Path.join(__dirname, 'service-child.js');
/** The compiled entry the child loads: the soak runs against `npm run build`'s output. */
const BUILT_ENTRY = Path.join(__dirname, '..', '..', '..', 'dist', 'lib', 'service', 'inbox-capture.js');

/** Milliseconds the child may take to open its stores and listen. */
const START_TIMEOUT_MS = 30_000;
/** Milliseconds a graceful stop of the child may take (hapi waits 10 s for requests in flight). */
const STOP_TIMEOUT_MS = 20_000;
/** Milliseconds between peeks at the child (waiters, RSS) during the load. */
const SAMPLE_EVERY_MS = 1_000;
/** Milliseconds between two checks while waiting for handles and counts to go back down. */
const SETTLE_POLL_MS = 250;
/** File descriptors the driver needs besides one per long-poll socket (SMTP, listers, stdio, slack). */
const FD_HEADROOM = 256;
/** Page size of the final walk over every inbox: the API's largest. */
const AUDIT_PAGE_LIMIT = 100;
/** Pages one lister walk reads at most before starting another. */
const LIST_WALK_PAGES = 10;
/** Deleted ids read back at the end to see that deletes stick (each must answer 404). */
const DELETED_READBACK = 20;
/** Milliseconds past the deadline (and the longest long-poll timeout) that work in flight may take before it is cut off. */
const DEADLINE_GRACE_MS = 30_000;
/** Failures and samples kept verbatim in the report; the rest are only counted. */
const KEPT_SAMPLES = 20;

/** What the soak does and how hard. Counts are counts, durations are milliseconds unless named otherwise. */
export interface SoakOptions {
    /** Messages delivered over SMTP during the load (each to one inbox). */
    messages: number;
    /** Concurrent SMTP clients (nodemailer pools of one connection each), sending one after another. */
    senders: number;
    /** Inboxes that receive the messages, evenly. */
    inboxes: number;
    /** Inboxes that never receive mail: their long-polls must answer empty at their timeout. */
    quietInboxes: number;
    /** Concurrent long-poll clients; each re-polls as soon as it is answered, until the senders are done. */
    longPolls: number;
    /** Share of long-poll clients that wait on quiet inboxes. */
    quietShare: number;
    /** Long-poll `timeout` (seconds), picked uniformly in this range per request (API: 1–28). */
    pollTimeoutSeconds: { min: number; max: number };
    /** Share of long-polls the client abandons (disconnects) before an answer. */
    abortShare: number;
    /** Clients walking inbox pages with cursors. */
    listers: number;
    /** Pause between two lister walks. */
    listPauseMs: number;
    /** Clients deleting single messages (each owns a share of the inboxes `i % 4 === 0`). */
    deleters: number;
    /** Share of the listed messages a deleter deletes. */
    deleteShare: number;
    /** Pause between two deleter rounds. */
    deletePauseMs: number;
    /** Inboxes (`i % 4 === 1`) emptied now and then with DELETE /v1/emails?inbox= (0: none). */
    bulkInboxes: number;
    /** Pause between two bulk deletes. */
    bulkDeleteEveryMs: number;
    /** Every n-th message carries an attachment (a second blob). */
    attachmentEvery: number;
    /** Messages (and polls, lists, deletes) before the baseline is taken: loads lazy code and caches. */
    warmupMessages: number;
    /**
     * Hard limit of the load, from the start of the run: past it the senders and clients
     * are cut off and the run fails. The audit, settling and stop that follow add at
     * most about `settleMs` + 40 s.
     */
    deadlineMs: number;
    /** How late after its timeout a long-poll answer may arrive (the two event loops' lag). */
    answerSlackMs: number;
    /** An empty long-poll answer is a missed wake-up when matching mail was acknowledged this long before it. */
    wakeupMarginMs: number;
    /** Heap (after full GC) the service may hold beyond its baseline once the load is over, bytes. */
    heapGrowthLimitBytes: number;
    /** How long to wait, after the load, for waiters, subscriptions and handles to go back down. */
    settleMs: number;
    /** Seed of the pseudo-random choices (inboxes, timeouts, page sizes), for a reproducible mix. */
    seed: number;
    /**
     * Faults the service injects on purpose, for the soak's own test (see service-child.js):
     * lose-message, leak-subscription, late-answer, server-error, retain-heap, leak-timer.
     */
    faults: string[];
    /** Receives a progress line now and then (the long soak prints them). */
    progress?: (line: string) => void;
    /** Milliseconds between progress lines. */
    progressEveryMs: number;
}

/** Memory of the service process. */
export interface MemoryFigures {
    rssBytes: number;
    heapUsedBytes: number;
}

/** Everything the soak measured and every rule it saw broken. */
export interface SoakReport {
    options: Omit<SoakOptions, 'progress'>;
    /** Empty when every rule held; otherwise the first few of each kind, verbatim. */
    failures: string[];
    /** How many times each kind of failure occurred ('lost', '5xx', 'long-poll late', ...). */
    failureKinds: Record<string, number>;
    durationMs: number;
    /** Where the time went: start and warm-up, load (senders until the last long-poll answer), audit, settling, stop. */
    phasesMs: { warmup: number; load: number; audit: number; settle: number; stop: number };
    sendDurationMs: number;
    messagesPerSecond: number;
    messages: {
        attempted: number;
        acknowledged: number;
        refused: number;
        stored: number;
        deletedById: number;
        deletedInBulk: number;
        /** Acknowledged but neither stored nor deleted by a client. */
        lost: number;
        /** Gone, and a delete of them was cut off by the deadline before its answer: not counted as lost. */
        deleteOutcomeUnknown: number;
        /** Stored but never acknowledged, or stored twice, or in the wrong inbox. */
        unexpected: number;
    };
    ackLatencyMs: { p50: number; p99: number; max: number };
    http: {
        /** Every status the clients saw, by code. */
        statuses: Record<string, number>;
        /** Every status the server logged, by code. */
        serverStatuses: Record<string, number>;
        serverErrors: number;
        /** Requests that failed below HTTP (reset, refused); abandoned long-polls are not counted. */
        transportErrors: number;
        /** Connection errors the server logged for clients that went away (the abandoned long-polls). */
        serverClientErrors: number;
    };
    longPolls: {
        started: number;
        answered: number;
        withMail: number;
        emptyAtTimeout: number;
        aborted: number;
        late: number;
        early: number;
        missedWakeups: number;
        wrongContent: number;
        /** Largest answer time beyond the request's timeout, ms (negative: all answered before). */
        maxLatenessMs: number;
        /** Largest number of requests the service had waiting at one sample. */
        peakWaiters: number;
    };
    lists: { walks: number; pages: number; fetched: number };
    deletes: { byId: number; bulkRequests: number; bulkDeleted: number };
    blobs: { total: number; expected: number; orphans: number };
    memory: {
        baseline: MemoryFigures;
        final: MemoryFigures;
        /** VmHWM of the service process: its largest RSS over the whole run. */
        peakRssBytes: number;
        heapGrowthBytes: number;
    };
    leaks: {
        waitersAfter: number;
        subscribersAfter: number;
        handlesBaseline: Record<string, number>;
        handlesAfter: Record<string, number>;
        /** Handle types with more instances after the load than before it. */
        handlesGrown: Record<string, number>;
        /** Listeners (HTTP server and process, by event) with more after the load than before it. */
        listenersGrown: Record<string, number>;
    };
    /** Event-loop delay of the service during the load, ms. */
    serviceLoopDelayMs: { max: number; p99: number; mean: number };
    /** Event-loop delay of the driver (senders and clients) during the load, ms. */
    driverLoopDelayMs: { max: number; p99: number; mean: number };
    /** CPU used during the load (from the first message to the last answer), seconds, and the machine's CPUs. */
    cpu: { loadSeconds: number; serviceSeconds: number; driverSeconds: number; cpus: number };
    /** The machine's 1-minute load average before and after the load: other work skews every figure. */
    machineLoadAverage: { before: number; after: number };
    serviceLogs: { count: number; lines: string[] };
    serviceExitCode: number | null;
}

/**
 * Defaults: the long soak of ISSUE 7 (20,000 messages, 2,000 long-polls). The deadline
 * bounds the run, it does not judge speed (bench/ does): on 2 shared vCPUs the load
 * runs at about 20 msg/s, some 17 minutes, so 30 minutes.
 */
export const LONG_SOAK_OPTIONS: SoakOptions = {
    messages: 20_000,
    senders: 16,
    inboxes: 100,
    quietInboxes: 20,
    longPolls: 2_000,
    quietShare: 0.25,
    pollTimeoutSeconds: { min: 2, max: 10 },
    abortShare: 0.05,
    listers: 4,
    listPauseMs: 100,
    deleters: 2,
    deleteShare: 0.3,
    deletePauseMs: 200,
    bulkInboxes: 5,
    bulkDeleteEveryMs: 2_000,
    attachmentEvery: 10,
    warmupMessages: 100,
    deadlineMs: 30 * 60_000,
    answerSlackMs: 2_000,
    wakeupMarginMs: 1_000,
    // The service keeps nothing per message or request; what remains is JIT code, pools
    // and allocator slack, a few MiB (measured: see /work/briefs/readme-soak.md).
    heapGrowthLimitBytes: 16 * 1024 * 1024,
    settleMs: 15_000,
    seed: 7,
    faults: [],
    progressEveryMs: 10_000
};

/** The short version that runs in `npm test` (about 15 s). */
export const SHORT_SOAK_OPTIONS: SoakOptions = {
    ...LONG_SOAK_OPTIONS,
    messages: 150,
    senders: 6,
    inboxes: 20,
    quietInboxes: 4,
    longPolls: 100,
    pollTimeoutSeconds: { min: 1, max: 2 },
    abortShare: 0.1,
    listers: 2,
    deleters: 2,
    deleteShare: 0.5,
    bulkInboxes: 2,
    bulkDeleteEveryMs: 500,
    warmupMessages: 12,
    deadlineMs: 60_000,
    // npm test may share the machine with anything: a wider margin than the long soak's,
    // still far below what a long-poll that ignores its timeout would show.
    answerSlackMs: 3_000,
    settleMs: 10_000
};

/** Handle types compared before and after: those a leak would leave behind. */
const LEAK_HANDLE_TYPES = ['Timeout', 'TCPSocketWrap', 'TCPServerWrap', 'FSReqCallback', 'FileHandle'];

interface ChildStats {
    waiters: number;
    subscribers: number;
    resources: Record<string, number>;
    memory: NodeJS.MemoryUsage;
    httpListeners: Record<string, number>;
    processListeners: Record<string, number>;
    statuses: Record<string, number>;
    requestErrors: { count: number; lines: string[] };
    logs: { count: number; lines: string[] };
    clientErrors: number;
    loopDelayMs: { max: number; p99: number; mean: number };
}

interface ChildMessage {
    type: string;
    id?: number;
    error?: string;
    [key: string]: unknown;
}

/** The spawned service and a request/answer channel to it. */
interface ServiceChild {
    child: ChildProcess;
    httpPort: number;
    smtpPort: number;
    apiKey: string;
    exited: Promise<number | null>;
    output(): string;
    call<T extends ChildMessage>(type: string, extra?: Record<string, unknown>): Promise<T>;
}

/** Email fields the soak reads. */
interface EmailJson {
    messageId: string;
    inbox: string;
    receivedAt: number;
    attachments: unknown[];
}

interface PageJson {
    emails: EmailJson[];
    hasMore: boolean;
    nextCursor?: string;
}

/** One delivery as the sender saw it. */
interface Sent {
    inbox: number;
    startAt: number;
    ackAt?: number;
    /** The deadline closed the connection mid-delivery: stored or not, neither is a fault. */
    cut?: boolean;
}

/** A small seeded generator (mulberry32): the same seed, the same mix of choices. */
function seededRandom(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
        state = (state + 0x6D2B79F5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

function percentile(sorted: number[], p: number): number {
    if (sorted.length === 0) {
        return 0;
    }

    return sorted[Math.min(sorted.length - 1, Math.ceil(p / 100 * sorted.length) - 1)];
}

function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

/** VmRSS and VmHWM (peak) of a process, bytes, from /proc. */
async function processRss(pid: number): Promise<{ rss: number; peak: number }> {
    const status = await Fs.readFile(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every Linux ABI). */
const USER_HZ = 100;

/** CPU time (user + system) a process used so far, seconds, from /proc. */
async function processCpuSeconds(pid: number): Promise<number> {
    const stat = await Fs.readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
}

/** The soft limit on open files of this process (Infinity when unlimited or unknown). */
async function openFileLimit(): Promise<number> {
    try {
        const limits = await Fs.readFile('/proc/self/limits', 'utf8');
        const soft = /^Max open files\s+(\S+)/m.exec(limits)?.[1];
        return soft === undefined || soft === 'unlimited' ? Infinity : Number(soft);
    }
    catch {
        return Infinity;
    }
}

/** Starts the service child on a fresh data dir; resolves once it listens. */
async function startService(dataDir: string, faults: string[]): Promise<ServiceChild> {
    const child = spawn(process.execPath, ['--expose-gc', SERVICE_CHILD, dataDir, faults.join(',')], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        output += d;
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        output += d;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const pending = new Map<number, { resolve: (m: ChildMessage) => void; reject: (e: Error) => void }>();
    let nextId = 1;
    let ready: ((m: ChildMessage) => void) | undefined;
    child.on('message', (message: ChildMessage) => {
        if (message.type === 'ready') {
            ready?.(message);
            return;
        }

        const waiter = pending.get(message.id ?? -1);
        if (waiter) {
            pending.delete(message.id!);
            if (message.type === 'error') {
                waiter.reject(new Error(`service child: ${message.error}`));
            }
            else {
                waiter.resolve(message);
            }
        }
    });
    void exited.then((code) => {
        for (const waiter of pending.values()) {
            waiter.reject(new Error(`service child exited with ${code}: ${output}`));
        }

        pending.clear();
    });

    const started = await new Promise<ChildMessage>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`service child did not listen within ${START_TIMEOUT_MS} ms: ${output}`)), START_TIMEOUT_MS);
        ready = (message) => {
            clearTimeout(timer);
            resolve(message);
        };
        void exited.then((code) => {
            clearTimeout(timer);
            reject(new Error(`service child exited with ${code} before listening: ${output}`));
        });
    }).catch((err: unknown) => {
        child.kill('SIGKILL');
        throw err;
    });

    return {
        child,
        httpPort: started.httpPort as number,
        smtpPort: started.smtpPort as number,
        apiKey: started.apiKey as string,
        exited,
        output: () => output,
        call<T extends ChildMessage>(type: string, extra: Record<string, unknown> = {}) {
            const id = nextId++;
            return new Promise<T>((resolve, reject) => {
                pending.set(id, { resolve: resolve as (m: ChildMessage) => void, reject });
                child.send({ ...extra, type, id });
            });
        }
    };
}

/** An HTTP answer: status and parsed JSON body (null when not JSON). */
interface HttpAnswer {
    status: number;
    body: unknown;
}

/** One request over the shared keep-alive agent. */
function httpRequest(agent: Http.Agent, port: number, apiKey: string, method: string, path: string, signal?: AbortSignal): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
        const req = Http.request({ host: '127.0.0.1', port, method, path, agent, signal, headers: { authorization: `Bearer ${apiKey}` } }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('error', reject);
            res.on('end', () => {
                const text = Buffer.concat(chunks).toString('utf8');
                let body: unknown = null;
                if ((res.headers['content-type'] ?? '').includes('json')) {
                    try {
                        body = JSON.parse(text);
                    }
                    catch {
                        body = null;
                    }
                }

                resolve({ status: res.statusCode ?? 0, body });
            });
        });
        req.on('error', reject);
        req.end();
    });
}

function inboxName(index: number): string {
    return `soak-${String(index).padStart(3, '0')}`;
}

/** Who may delete an inbox's mail: the accounting of "nothing lost" depends on it. */
type InboxRole = 'byId' | 'bulk' | 'untouched';

function roleOf(index: number, options: SoakOptions): InboxRole {
    if (options.deleters > 0 && index % 4 === 0) {
        return 'byId';
    }

    if (index % 4 === 1 && Math.floor(index / 4) < options.bulkInboxes) {
        return 'bulk';
    }

    return 'untouched';
}

/** The body of message `i`: plain, with HTML, or with an attachment, so every parse path runs. */
function messageFor(i: number, runId: string, messageId: string, to: string, options: SoakOptions): string {
    const text = `Soak message ${i} of run ${runId}.\n${'The quick brown fox jumps over the lazy dog. '.repeat(12)}\n`;
    return buildMail({
        from: 'Soak Sender <sender@soak.test>',
        to,
        subject: `soak ${i}`,
        messageId,
        text,
        html: i % 3 === 0 ? `<p>Soak message <b>${i}</b></p><p>${'lorem ipsum '.repeat(20)}</p>` : undefined,
        attachments: options.attachmentEvery > 0 && i % options.attachmentEvery === 0 ?
            [{ filename: `report-${i}.txt`, contentType: 'text/plain', content: `attachment of ${i}\n`.repeat(100) }] :
            undefined
    });
}

/**
 * Runs the service (SQLite + files in a temp dir) in a child process and loads it:
 * SMTP senders deliver `messages` while `longPolls` clients wait for mail and
 * listers and deleters work the API; then checks that every acknowledged message
 * is stored or was deleted by a client, that no answer was a 5xx, that every
 * long-poll was answered within its timeout, and that waiters, subscriptions,
 * handles and heap went back to their baseline. Rules broken are collected in
 * `failures`; only a service that cannot start makes it throw.
 */
export async function runSoak(overrides: Partial<SoakOptions> = {}): Promise<SoakReport> {
    const options: SoakOptions = { ...LONG_SOAK_OPTIONS, ...overrides };
    const { progress, ...reportedOptions } = options;
    const runStart = Date.now();
    const deadline = runStart + options.deadlineMs;
    const random = seededRandom(options.seed);
    const runId = `${runStart.toString(36)}${process.pid.toString(36)}`;
    const failures: string[] = [];
    const failureCounts = new Map<string, number>();
    // Counted by kind, kept verbatim only for the first few of each kind.
    const fail = (kind: string, detail: string) => {
        const seen = failureCounts.get(kind) ?? 0;
        failureCounts.set(kind, seen + 1);
        if (seen < KEPT_SAMPLES) {
            failures.push(`${kind}: ${detail}`);
        }
    };

    try {
        await Fs.access(BUILT_ENTRY);
    }
    catch {
        throw new Error(`runSoak: ${BUILT_ENTRY} is missing; run \`npm run build\` first`);
    }

    const fdLimit = await openFileLimit();
    if (fdLimit < options.longPolls + FD_HEADROOM) {
        throw new Error(`runSoak: ${options.longPolls} long-polls need about ${options.longPolls + FD_HEADROOM} open files; ulimit -n is ${fdLimit}`);
    }

    const dataDir = await tempDir('soak');
    let service: ServiceChild | undefined;
    const transports: Nodemailer.Transporter[] = [];
    const agents: Http.Agent[] = [];
    try {
        service = await startService(dataDir, options.faults);
        const svc = service;
        const clientStatuses: Record<string, number> = {};
        let transportErrors = 0;
        // The deadline stops new work; in-flight work gets a grace, then `cutOff` cuts it, and
        // requests cut that way are not failures of the service.
        let deadlinePassed = false;
        let cutOff = false;
        const newAgent = () => {
            // One socket per concurrent request: long-polls hold theirs for up to their timeout.
            const agent = new Http.Agent({ keepAlive: true, maxSockets: options.longPolls + options.listers + options.deleters + 8 });
            agents.push(agent);
            return agent;
        };

        // Every request goes through here: every status counted, every 5xx a failure.
        const api = async (agent: Http.Agent, method: string, path: string, signal?: AbortSignal): Promise<HttpAnswer | null> => {
            try {
                const answer = await httpRequest(agent, svc.httpPort, svc.apiKey, method, path, signal);
                clientStatuses[answer.status] = (clientStatuses[answer.status] ?? 0) + 1;
                if (answer.status >= 500) {
                    fail('5xx', `${method} ${path} → ${answer.status} ${JSON.stringify(answer.body)}`);
                }

                return answer;
            }
            catch (err) {
                if (signal?.aborted) {
                    throw err;
                }

                if (cutOff) {
                    return null;
                }

                transportErrors++;
                fail('transport error', `${method} ${path}: ${(err as Error).message}`);
                return null;
            }
        };

        const newTransport = () => {
            const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: svc.smtpPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 1 });
            transports.push(transport);
            return transport;
        };

        // ---- Warm-up: lazy modules, compiled code, pools; then the baseline. ----
        {
            const agent = newAgent();
            // Waiting before the mail arrives: the wake-up path runs too.
            const woken = Array.from({ length: 5 }, () => api(agent, 'GET', `/v1/emails?inbox=warmup&wait=true&timeout=5&receivedAfter=${Date.now()}`));
            const quiet = Array.from({ length: 5 }, () => api(agent, 'GET', `/v1/emails?inbox=warmup-quiet&wait=true&timeout=1&receivedAfter=${Date.now()}`));
            let next = 0;
            await Promise.all(Array.from({ length: Math.min(options.senders, 4) }, async () => {
                const transport = newTransport();
                for (let i = next++; i < options.warmupMessages; i = next++) {
                    const raw = messageFor(i, runId, `warmup.${i}.${runId}@soak.test`, 'warmup@soak.test', options);
                    await transport.sendMail({ envelope: { from: 'sender@soak.test', to: ['warmup@soak.test'] }, raw });
                }

                transport.close();
            }));

            const page = await api(agent, 'GET', '/v1/emails?inbox=warmup&limit=10');
            const first = (page?.body as PageJson | null)?.emails[0];
            if (first) {
                await api(agent, 'GET', `/v1/emails/${encodeURIComponent(first.messageId)}`);
                await api(agent, 'DELETE', `/v1/emails/${encodeURIComponent(first.messageId)}`);
            }

            await Promise.all([...woken, ...quiet]);
            await api(agent, 'DELETE', '/v1/emails?inbox=warmup');
            agent.destroy();
        }

        const settle = async (done: (stats: ChildStats) => boolean): Promise<ChildStats> => {
            const until = Date.now() + options.settleMs;
            for (;;) {
                const { stats } = await svc.call<ChildMessage & { stats: ChildStats }>('stats', { gc: false });
                if (done(stats) || Date.now() >= until) {
                    return stats;
                }

                await sleep(SETTLE_POLL_MS);
            }
        };

        // Baseline: no client connected, nothing waiting, the same handles twice in a row.
        let previousHandles = '';
        await settle((s) => {
            const handles = JSON.stringify(s.resources);
            const steady = handles === previousHandles;
            previousHandles = handles;
            return steady && !s.resources.TCPSocketWrap && s.waiters === 0 && s.subscribers === 0;
        });
        const { stats: baseline } = await svc.call<ChildMessage & { stats: ChildStats }>('stats', { gc: true });
        const baselineRss = await processRss(svc.child.pid!);
        await svc.call('reset-lag');
        const driverLag = monitorEventLoopDelay({ resolution: 10 });
        driverLag.enable();
        const serviceCpuBefore = await processCpuSeconds(svc.child.pid!);
        const driverCpuBefore = process.cpuUsage();
        const loadAverageBefore = Os.loadavg()[0];

        // ---- The load. ----
        const sent = new Map<string, Sent>();
        const ackLatencies: number[] = [];
        const acksByInbox: Sent[][] = Array.from({ length: options.inboxes }, () => []);
        const deletedIds = new Set<string>();
        const bulkDeleted = new Map<number, number>();
        // Deletes the deadline cut off before their answer: the service may or may not have done them.
        const cutDeletes = new Set<string>();
        const cutBulkInboxes = new Set<number>();
        let refused = 0;
        let stopping = false;
        const counts = { pollsStarted: 0, answered: 0, withMail: 0, emptyAtTimeout: 0, aborted: 0, late: 0, early: 0, missed: 0, wrongContent: 0, maxLateness: -Infinity, walks: 0, pages: 0, fetched: 0, bulkRequests: 0 };
        const agent = newAgent();
        const loadStart = Date.now();
        const warmupMs = loadStart - runStart;

        const senders = Array.from({ length: options.senders }, async () => {
            const transport = newTransport();
            for (;;) {
                if (deadlinePassed || Date.now() > deadline) {
                    deadlinePassed = true;
                    return;
                }

                const i = sent.size;
                if (i >= options.messages) {
                    return;
                }

                const inbox = i % options.inboxes;
                const messageId = `soak.${i}.${runId}@soak.test`;
                const to = `${inboxName(inbox)}@soak.test`;
                const record: Sent = { inbox, startAt: Date.now() };
                sent.set(messageId, record);
                try {
                    const info = await transport.sendMail({ envelope: { from: 'sender@soak.test', to: [to] }, raw: messageFor(i, runId, messageId, to, options) });
                    if (!/^250[ -]/.test(String(info.response))) {
                        refused++;
                        fail('SMTP not 250', `${messageId}: ${info.response}`);
                        continue;
                    }

                    record.ackAt = Date.now();
                    ackLatencies.push(record.ackAt - record.startAt);
                    acksByInbox[inbox].push(record);
                }
                catch (err) {
                    if (cutOff) {
                        record.cut = true;
                        return;
                    }

                    refused++;
                    const e = err as Error & { responseCode?: number; response?: string };
                    fail('SMTP refused', `${messageId}: ${e.responseCode ?? ''} ${e.response ?? e.message}`);
                }
            }
        });

        const quietPollers = Math.round(options.longPolls * options.quietShare);
        const pollers = Array.from({ length: options.longPolls }, async (_, j) => {
            const quiet = j < quietPollers;
            while (!stopping) {
                const index = quiet ? j % options.quietInboxes : Math.floor(random() * options.inboxes);
                const inbox = quiet ? `quiet-${index}` : inboxName(index);
                const timeout = options.pollTimeoutSeconds.min + Math.floor(random() * (options.pollTimeoutSeconds.max - options.pollTimeoutSeconds.min + 1));
                const abandon = random() < options.abortShare;
                const issuedAt = Date.now();
                const path = `/v1/emails?inbox=${inbox}&wait=true&timeout=${timeout}&receivedAfter=${issuedAt}`;
                counts.pollsStarted++;
                if (abandon) {
                    // The client gives up early: the service must let go of the waiter.
                    const controller = new AbortController();
                    const timer = setTimeout(() => controller.abort(), 50 + Math.floor(random() * timeout * 500));
                    try {
                        await api(agent, 'GET', path, controller.signal);
                    }
                    catch {
                        counts.aborted++;
                        continue;
                    }
                    finally {
                        clearTimeout(timer);
                    }

                    counts.answered++;
                    continue;
                }

                const answer = await api(agent, 'GET', path);
                const answeredAt = Date.now();
                if (!answer || answer.status !== 200) {
                    if (answer) {
                        fail('long-poll status', `${path} → ${answer.status} ${JSON.stringify(answer.body)}`);
                    }

                    // Already a failure; do not spin on a service that is gone.
                    await sleep(100);
                    continue;
                }

                counts.answered++;
                const elapsed = answeredAt - issuedAt;
                const lateness = elapsed - timeout * 1000;
                counts.maxLateness = Math.max(counts.maxLateness, lateness);
                if (lateness > options.answerSlackMs) {
                    counts.late++;
                    fail('long-poll late', `${path} answered after ${elapsed} ms (timeout ${timeout} s)`);
                }

                const page = answer.body as PageJson;
                if (page.emails.length === 0) {
                    counts.emptyAtTimeout++;
                    // An empty answer before the timeout would be a waiter let go too soon.
                    if (lateness < 0) {
                        counts.early++;
                        fail('long-poll early', `${path} answered empty after ${elapsed} ms (timeout ${timeout} s)`);
                    }

                    if (!quiet && roleOf(index, options) === 'untouched') {
                        const missed = acksByInbox[index].find((s) => s.startAt > issuedAt && s.ackAt! < answeredAt - options.wakeupMarginMs);
                        if (missed) {
                            counts.missed++;
                            fail('missed wake-up', `${path} answered empty at ${answeredAt} though a message sent at ${missed.startAt} was acknowledged at ${missed.ackAt}`);
                        }
                    }

                    continue;
                }

                counts.withMail++;
                if (quiet) {
                    counts.wrongContent++;
                    fail('mail in a quiet inbox', `${path} → ${page.emails.map((e) => e.messageId).join(', ')}`);
                    continue;
                }

                for (const email of page.emails) {
                    if (email.inbox !== inbox || email.receivedAt < issuedAt || !sent.has(email.messageId)) {
                        counts.wrongContent++;
                        fail('long-poll content', `${path} → ${JSON.stringify({ messageId: email.messageId, inbox: email.inbox, receivedAt: email.receivedAt })}`);
                    }
                }
            }
        });

        const listers = Array.from({ length: options.listers }, async () => {
            while (!stopping) {
                const index = Math.floor(random() * options.inboxes);
                const inbox = inboxName(index);
                const limit = 10 + Math.floor(random() * 91);
                const seen = new Set<string>();
                let previous: EmailJson | undefined;
                let cursor: string | undefined;
                counts.walks++;
                for (let p = 0; p < LIST_WALK_PAGES && !stopping; p++) {
                    const path = `/v1/emails?inbox=${inbox}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
                    const answer = await api(agent, 'GET', path);
                    if (!answer || answer.status !== 200) {
                        if (answer) {
                            fail('list status', `${path} → ${answer.status} ${JSON.stringify(answer.body)}`);
                        }

                        break;
                    }

                    counts.pages++;
                    const page = answer.body as PageJson;
                    for (const email of page.emails) {
                        const ordered = !previous || previous.receivedAt > email.receivedAt ||
                            (previous.receivedAt === email.receivedAt && previous.messageId > email.messageId);
                        if (!ordered || seen.has(email.messageId) || email.inbox !== inbox || !sent.has(email.messageId)) {
                            fail('list page', `${path}: ${email.messageId} (ordered ${ordered}, repeated ${seen.has(email.messageId)}, inbox ${email.inbox})`);
                        }

                        seen.add(email.messageId);
                        previous = email;
                    }

                    if (page.hasMore !== (page.nextCursor !== undefined) || page.emails.length > limit) {
                        fail('list envelope', `${path}: ${page.emails.length} emails, hasMore ${page.hasMore}, nextCursor ${page.nextCursor}`);
                    }

                    // Mail no client deletes must be readable one by one too.
                    const one = page.emails[0];
                    if (one && roleOf(index, options) === 'untouched') {
                        const got = await api(agent, 'GET', `/v1/emails/${encodeURIComponent(one.messageId)}`);
                        counts.fetched++;
                        if (got && (got.status !== 200 || (got.body as EmailJson).messageId !== one.messageId)) {
                            fail('get email', `${one.messageId} → ${got.status} ${JSON.stringify(got.body)}`);
                        }
                    }

                    if (!page.hasMore) {
                        break;
                    }

                    cursor = page.nextCursor;
                }

                await sleep(options.listPauseMs);
            }
        });

        const byIdInboxes = Array.from({ length: options.inboxes }, (_, i) => i).filter((i) => roleOf(i, options) === 'byId');
        const deleters = Array.from({ length: options.deleters }, async (_, d) => {
            // Each deleter owns its inboxes: a 404 can then only mean a lost message.
            const mine = byIdInboxes.filter((i) => Math.floor(i / 4) % options.deleters === d);
            while (!stopping && mine.length > 0) {
                const inbox = inboxName(mine[Math.floor(random() * mine.length)]);
                const answer = await api(agent, 'GET', `/v1/emails?inbox=${inbox}&limit=50`);
                for (const email of answer?.status === 200 ? (answer.body as PageJson).emails : []) {
                    if (stopping || random() >= options.deleteShare) {
                        continue;
                    }

                    const path = `/v1/emails/${encodeURIComponent(email.messageId)}`;
                    const deleted = await api(agent, 'DELETE', path);
                    if (deleted?.status === 200 && (deleted.body as { deleted: boolean }).deleted === true) {
                        deletedIds.add(email.messageId);
                    }
                    else if (deleted) {
                        fail('delete', `${path} → ${deleted.status} ${JSON.stringify(deleted.body)}`);
                    }
                    else if (cutOff) {
                        cutDeletes.add(email.messageId);
                    }
                }

                await sleep(options.deletePauseMs);
            }
        });

        const bulkInboxes = Array.from({ length: options.inboxes }, (_, i) => i).filter((i) => roleOf(i, options) === 'bulk');
        const bulkDeleter = (async () => {
            for (let n = 0; !stopping && bulkInboxes.length > 0; n++) {
                await sleep(options.bulkDeleteEveryMs);
                const index = bulkInboxes[n % bulkInboxes.length];
                const answer = await api(agent, 'DELETE', `/v1/emails?inbox=${inboxName(index)}`);
                counts.bulkRequests++;
                if (answer?.status === 200) {
                    bulkDeleted.set(index, (bulkDeleted.get(index) ?? 0) + (answer.body as { deleted: number }).deleted);
                }
                else if (answer) {
                    fail('bulk delete', `${inboxName(index)} → ${answer.status} ${JSON.stringify(answer.body)}`);
                }
                else if (cutOff) {
                    cutBulkInboxes.add(index);
                }
            }
        })();

        let peakWaiters = 0;
        let lastProgress = Date.now();
        let sampling = true;
        const sampler = (async () => {
            while (sampling) {
                await sleep(SAMPLE_EVERY_MS);
                const { stats } = await svc.call<ChildMessage & { stats: ChildStats }>('stats', { gc: false });
                peakWaiters = Math.max(peakWaiters, stats.waiters);
                if (progress && Date.now() - lastProgress >= options.progressEveryMs) {
                    lastProgress = Date.now();
                    const seconds = (Date.now() - loadStart) / 1000;
                    const acked = ackLatencies.length;
                    const { rss } = await processRss(svc.child.pid!);
                    progress(`soak ${seconds.toFixed(0)} s: ${acked}/${options.messages} acknowledged (${(acked / seconds).toFixed(0)} msg/s), ` +
                        `${counts.answered} long-polls answered, ${stats.waiters} waiting, ${counts.pages} pages listed, ${deletedIds.size} deleted, ` +
                        `service RSS ${(rss / 1048576).toFixed(0)} MiB, failures ${[...failureCounts.values()].reduce((a, b) => a + b, 0)}`);
                }
            }
        })();

        // The deadline stops new work; what is in flight gets its longest timeout and a
        // margin to finish, then is cut off with the sockets.
        let hardCut: NodeJS.Timeout | undefined;
        const watchdog = setTimeout(() => {
            deadlinePassed = true;
            stopping = true;
            hardCut = setTimeout(() => {
                cutOff = true;
                for (const a of agents) {
                    a.destroy();
                }

                for (const t of transports) {
                    t.close();
                }
            }, options.pollTimeoutSeconds.max * 1000 + DEADLINE_GRACE_MS);
        }, Math.max(0, deadline - Date.now()));

        await Promise.all(senders);
        const sendDurationMs = Date.now() - loadStart;
        for (const transport of transports) {
            transport.close();
        }

        stopping = true;
        await Promise.all([...pollers, ...listers, ...deleters, bulkDeleter]);
        sampling = false;
        await sampler;
        clearTimeout(watchdog);
        clearTimeout(hardCut);
        driverLag.disable();
        const driverCpu = process.cpuUsage(driverCpuBefore);
        const cpu = {
            loadSeconds: (Date.now() - loadStart) / 1000,
            serviceSeconds: Math.round((await processCpuSeconds(svc.child.pid!) - serviceCpuBefore) * 10) / 10,
            driverSeconds: Math.round((driverCpu.user + driverCpu.system) / 1e5) / 10,
            cpus: Os.availableParallelism()
        };
        const machineLoadAverage = { before: loadAverageBefore, after: Os.loadavg()[0] };
        if (deadlinePassed) {
            fail('deadline', `the load did not finish within ${options.deadlineMs} ms (${ackLatencies.length} of ${options.messages} acknowledged)`);
        }

        const { stats: loaded } = await svc.call<ChildMessage & { stats: ChildStats }>('stats', { gc: false });
        const auditStart = Date.now();

        // ---- Nothing lost: walk every inbox to the end. ----
        const stored = new Map<string, EmailJson>();
        let expectedBlobs = 0;
        let unexpected = 0;
        const storedByInbox = new Map<number, number>();
        const walkAll = async (inbox: string) => {
            let cursor: string | undefined;
            for (;;) {
                const path = `/v1/emails?inbox=${inbox}&limit=${AUDIT_PAGE_LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
                const answer = await api(agent, 'GET', path);
                if (!answer || answer.status !== 200) {
                    fail('audit list', `${path} → ${answer?.status}`);
                    return;
                }

                const page = answer.body as PageJson;
                for (const email of page.emails) {
                    const record = sent.get(email.messageId);
                    if (stored.has(email.messageId) || !record || (record.ackAt === undefined && !record.cut) || inboxName(record.inbox) !== inbox) {
                        unexpected++;
                        fail('unexpected stored email', `${email.messageId} in ${inbox} (stored twice ${stored.has(email.messageId)}, acknowledged ${record?.ackAt !== undefined})`);
                    }

                    stored.set(email.messageId, email);
                    expectedBlobs += 1 + email.attachments.length;
                    if (record) {
                        storedByInbox.set(record.inbox, (storedByInbox.get(record.inbox) ?? 0) + 1);
                    }
                }

                if (!page.hasMore) {
                    return;
                }

                cursor = page.nextCursor;
            }
        };

        for (let i = 0; i < options.inboxes; i++) {
            await walkAll(inboxName(i));
        }

        for (let q = 0; q < options.quietInboxes; q++) {
            await walkAll(`quiet-${q}`);
        }

        let acknowledged = 0;
        let lost = 0;
        let deleteOutcomeUnknown = 0;
        for (const [messageId, record] of sent) {
            if (record.ackAt === undefined) {
                continue;
            }

            acknowledged++;
            const isStored = stored.has(messageId);
            const isDeleted = deletedIds.has(messageId);
            if (isStored && isDeleted) {
                fail('deleted email still stored', messageId);
            }

            if (!isStored && !isDeleted && cutDeletes.has(messageId)) {
                deleteOutcomeUnknown++;
                continue;
            }

            // Bulk inboxes are accounted by count below: their deletes do not name ids.
            if (!isStored && !isDeleted && roleOf(record.inbox, options) !== 'bulk') {
                lost++;
                fail('lost', `${messageId} (${inboxName(record.inbox)}) acknowledged at ${record.ackAt} is neither stored nor deleted`);
            }
        }

        for (const index of bulkInboxes) {
            const ackedHere = acksByInbox[index].length;
            const storedHere = storedByInbox.get(index) ?? 0;
            const deletedHere = bulkDeleted.get(index) ?? 0;
            if (cutBulkInboxes.has(index) && storedHere + deletedHere <= ackedHere) {
                // A bulk delete cut off by the deadline removed an unknown number of them.
                deleteOutcomeUnknown += ackedHere - storedHere - deletedHere;
                continue;
            }

            if (storedHere + deletedHere !== ackedHere) {
                lost += Math.max(0, ackedHere - storedHere - deletedHere);
                fail('bulk accounting', `${inboxName(index)}: ${storedHere} stored + ${deletedHere} bulk-deleted != ${ackedHere} acknowledged`);
            }
        }

        // Deletes stick: a deleted id answers 404.
        for (const messageId of [...deletedIds].slice(0, DELETED_READBACK)) {
            const answer = await api(agent, 'GET', `/v1/emails/${encodeURIComponent(messageId)}`);
            if (answer && answer.status !== 404) {
                fail('deleted email readable', `${messageId} → ${answer.status}`);
            }
        }

        const blobAudit = await svc.call<ChildMessage & { blobs: number; orphanBlobs: number }>('audit');
        if (blobAudit.blobs !== expectedBlobs || blobAudit.orphanBlobs !== 0) {
            fail('blobs', `${blobAudit.blobs} blobs for ${expectedBlobs} expected, ${blobAudit.orphanBlobs} not referenced by any email`);
        }

        // ---- Back to baseline: clients gone, then waiters, subscriptions, handles, heap. ----
        const settleStart = Date.now();
        for (const a of agents) {
            a.destroy();
        }

        const handleTypes = (stats: ChildStats) => Object.fromEntries(LEAK_HANDLE_TYPES.map((t) => [t, stats.resources[t] ?? 0]));
        const grownHandles = (stats: ChildStats) => Object.fromEntries(LEAK_HANDLE_TYPES
            .map((t) => [t, (stats.resources[t] ?? 0) - (baseline.resources[t] ?? 0)] as const)
            .filter(([, delta]) => delta > 0));
        await settle((s) => s.waiters === 0 && s.subscribers === 0 && Object.keys(grownHandles(s)).length === 0);
        const { stats: after } = await svc.call<ChildMessage & { stats: ChildStats }>('stats', { gc: true });
        const afterRss = await processRss(svc.child.pid!);

        const handlesGrown = grownHandles(after);
        const listenersGrown: Record<string, number> = {};
        for (const [scope, before, now] of [['http', baseline.httpListeners, after.httpListeners], ['process', baseline.processListeners, after.processListeners]] as const) {
            for (const [event, count] of Object.entries(now)) {
                if (count > (before[event] ?? 0)) {
                    listenersGrown[`${scope}:${event}`] = count - (before[event] ?? 0);
                }
            }
        }

        if (after.waiters !== 0 || after.subscribers !== 0) {
            fail('waiters left', `${after.waiters} long-polls still waiting, ${after.subscribers} notifier subscriptions left ${options.settleMs} ms after the load`);
        }

        if (Object.keys(handlesGrown).length > 0) {
            fail('handles left', `more handles than at the baseline: ${JSON.stringify(handlesGrown)} (before ${JSON.stringify(handleTypes(baseline))})`);
        }

        if (Object.keys(listenersGrown).length > 0) {
            fail('listeners left', JSON.stringify(listenersGrown));
        }

        const heapGrowthBytes = after.memory.heapUsed - baseline.memory.heapUsed;
        if (heapGrowthBytes > options.heapGrowthLimitBytes) {
            fail('heap', `heap after the load ${after.memory.heapUsed} B exceeds the baseline ${baseline.memory.heapUsed} B by more than ${options.heapGrowthLimitBytes} B`);
        }

        const serverFiveXx = Object.entries(after.statuses).filter(([s]) => Number(s) >= 500).reduce((n, [, c]) => n + c, 0);
        if (serverFiveXx > 0 || after.requestErrors.count > 0) {
            fail('server errors', `${serverFiveXx} 5xx logged by the server, ${after.requestErrors.count} request errors: ${after.requestErrors.lines.join(' | ')}`);
        }

        if (after.logs.count > 0) {
            fail('service log', `${after.logs.count} warnings logged by the service: ${after.logs.lines.join(' | ')}`);
        }

        if (acknowledged !== options.messages) {
            fail('acknowledged', `${acknowledged} of ${options.messages} messages acknowledged with 250`);
        }

        // ---- Stop: the service must end by itself, with nothing left running. ----
        const stopStart = Date.now();
        await Promise.race([svc.call('stop'), sleep(STOP_TIMEOUT_MS)]);
        const exitCode = await Promise.race([svc.exited, sleep(STOP_TIMEOUT_MS).then(() => 'timeout' as const)]);
        if (exitCode !== 0) {
            fail('service exit', `exit ${exitCode}: ${svc.output().slice(-2000)}`);
        }

        for (const [kind, count] of failureCounts) {
            if (count > KEPT_SAMPLES) {
                failures.push(`${kind}: ${count - KEPT_SAMPLES} more`);
            }
        }

        const sortedLatencies = ackLatencies.sort((a, b) => a - b);
        return {
            options: reportedOptions,
            failures,
            failureKinds: Object.fromEntries(failureCounts),
            durationMs: Date.now() - runStart,
            phasesMs: { warmup: warmupMs, load: auditStart - loadStart, audit: settleStart - auditStart, settle: stopStart - settleStart, stop: Date.now() - stopStart },
            sendDurationMs,
            messagesPerSecond: Math.round(ackLatencies.length / (sendDurationMs / 1000)),
            messages: {
                attempted: sent.size,
                acknowledged,
                refused,
                stored: stored.size,
                deletedById: deletedIds.size,
                deletedInBulk: [...bulkDeleted.values()].reduce((a, b) => a + b, 0),
                lost,
                deleteOutcomeUnknown,
                unexpected
            },
            ackLatencyMs: { p50: percentile(sortedLatencies, 50), p99: percentile(sortedLatencies, 99), max: sortedLatencies[sortedLatencies.length - 1] ?? 0 },
            http: {
                statuses: clientStatuses,
                serverStatuses: after.statuses,
                serverErrors: serverFiveXx,
                transportErrors,
                serverClientErrors: after.clientErrors
            },
            longPolls: {
                started: counts.pollsStarted,
                answered: counts.answered,
                withMail: counts.withMail,
                emptyAtTimeout: counts.emptyAtTimeout,
                aborted: counts.aborted,
                late: counts.late,
                early: counts.early,
                missedWakeups: counts.missed,
                wrongContent: counts.wrongContent,
                maxLatenessMs: counts.maxLateness,
                peakWaiters
            },
            lists: { walks: counts.walks, pages: counts.pages, fetched: counts.fetched },
            deletes: { byId: deletedIds.size, bulkRequests: counts.bulkRequests, bulkDeleted: [...bulkDeleted.values()].reduce((a, b) => a + b, 0) },
            blobs: { total: blobAudit.blobs, expected: expectedBlobs, orphans: blobAudit.orphanBlobs },
            memory: {
                baseline: { rssBytes: baselineRss.rss, heapUsedBytes: baseline.memory.heapUsed },
                final: { rssBytes: afterRss.rss, heapUsedBytes: after.memory.heapUsed },
                peakRssBytes: afterRss.peak,
                heapGrowthBytes
            },
            leaks: {
                waitersAfter: after.waiters,
                subscribersAfter: after.subscribers,
                handlesBaseline: handleTypes(baseline),
                handlesAfter: handleTypes(after),
                handlesGrown,
                listenersGrown
            },
            serviceLoopDelayMs: loaded.loopDelayMs,
            driverLoopDelayMs: { max: driverLag.max / 1e6, p99: driverLag.percentile(99) / 1e6, mean: driverLag.mean / 1e6 },
            cpu,
            machineLoadAverage,
            serviceLogs: after.logs,
            serviceExitCode: typeof exitCode === 'number' ? exitCode : null
        };
    }
    finally {
        for (const a of agents) {
            a.destroy();
        }

        for (const t of transports) {
            t.close();
        }

        if (service && service.child.exitCode === null && service.child.signalCode === null) {
            service.child.kill('SIGKILL');
            await service.exited;
        }

        await Fs.rm(dataDir, { recursive: true, force: true });
    }
}

/** A few lines for a human: the figures of a report. */
export function describeSoak(report: SoakReport): string {
    const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
    const { messages: m, longPolls: p, memory, leaks, http } = report;
    return [
        `duration ${(report.durationMs / 1000).toFixed(1)} s (${Object.entries(report.phasesMs).map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`).join(', ')}; sending ${(report.sendDurationMs / 1000).toFixed(1)} s), ${report.messagesPerSecond} msg/s, ack latency p50 ${report.ackLatencyMs.p50} ms p99 ${report.ackLatencyMs.p99} ms max ${report.ackLatencyMs.max} ms`,
        `messages: ${m.attempted} sent, ${m.acknowledged} acknowledged, ${m.refused} refused, ${m.stored} stored + ${m.deletedById} deleted by id + ${m.deletedInBulk} deleted in bulk, ${m.deleteOutcomeUnknown} deleted by a request the deadline cut off, ${m.lost} lost, ${m.unexpected} unexpected`,
        `http statuses (client): ${JSON.stringify(http.statuses)}; server: ${JSON.stringify(http.serverStatuses)}; transport errors ${http.transportErrors}; client resets seen by the server ${http.serverClientErrors}`,
        `long-polls: ${p.started} started, ${p.answered} answered (${p.withMail} with mail, ${p.emptyAtTimeout} empty at timeout), ${p.aborted} abandoned by the client, ${p.late} late, ${p.early} early, ${p.missedWakeups} missed wake-ups, max lateness ${p.maxLatenessMs} ms, peak waiting ${p.peakWaiters}`,
        `lists: ${report.lists.walks} walks, ${report.lists.pages} pages, ${report.lists.fetched} single reads; deletes: ${report.deletes.byId} by id, ${report.deletes.bulkRequests} bulk requests removing ${report.deletes.bulkDeleted}`,
        `blobs: ${report.blobs.total} (expected ${report.blobs.expected}), ${report.blobs.orphans} orphans`,
        `service memory: baseline RSS ${mib(memory.baseline.rssBytes)} heap ${mib(memory.baseline.heapUsedBytes)}; peak RSS ${mib(memory.peakRssBytes)}; after RSS ${mib(memory.final.rssBytes)} heap ${mib(memory.final.heapUsedBytes)} (heap growth ${mib(memory.heapGrowthBytes)})`,
        `leaks: ${leaks.waitersAfter} waiters, ${leaks.subscribersAfter} subscriptions after; handles before ${JSON.stringify(leaks.handlesBaseline)} after ${JSON.stringify(leaks.handlesAfter)}; listeners grown ${JSON.stringify(leaks.listenersGrown)}`,
        `event-loop delay: service max ${report.serviceLoopDelayMs.max.toFixed(0)} ms, p99 ${report.serviceLoopDelayMs.p99.toFixed(0)} ms, mean ${report.serviceLoopDelayMs.mean.toFixed(1)} ms; ` +
            `driver max ${report.driverLoopDelayMs.max.toFixed(0)} ms, p99 ${report.driverLoopDelayMs.p99.toFixed(0)} ms, mean ${report.driverLoopDelayMs.mean.toFixed(1)} ms`,
        `cpu over ${report.cpu.loadSeconds.toFixed(1)} s of load: service ${report.cpu.serviceSeconds} s, driver ${report.cpu.driverSeconds} s (${report.cpu.cpus} CPUs), machine load average ${report.machineLoadAverage.before.toFixed(1)} → ${report.machineLoadAverage.after.toFixed(1)}; service exit code ${report.serviceExitCode}`,
        `failures: ${report.failures.length === 0 ? 'none' : `\n  ${report.failures.join('\n  ')}`}`
    ].join('\n');
}
