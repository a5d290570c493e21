/**
 * Where the CPU of a durable small message goes, thread by thread, and what one wake-up
 * between two threads costs on this machine: the profile behind the small-mail figures of
 * bench/README.md, "Thread CPU". For each checkout and C, the standalone service takes
 * SMTP load from our generator while the bench reads each of its threads' CPU time from
 * /proc (Linux only); then two threads of the bench process pass a message back and forth.
 *
 *   node dist-bench/bench/thread-cpu.js [--roots DIR,DIR] [--c 1,4,16] [--rounds 3] [--profile text-1k] [--warm-up 500]
 *
 * `--roots` are checkouts whose dist/ is built (other commits, for a before/after; default
 * this one); rounds alternate between them, so a busy spell of the machine hits each alike.
 */
import { execFileSync } from 'node:child_process';
import * as Path from 'node:path';
import { Worker } from 'node:worker_threads';
import { PROFILE_NAMES, profiles, type ProfileName } from './profiles';
import { runBench, type BenchArgs, type Table } from './report';
import { runLoad } from './smtp-load';
import { ROOT, startStandalone } from './standalone';
import { fmt, median } from './stats';
import { cpuBetween, mainWaitBetween, threadTicks } from './thread-ticks';

/** Messages of a measured cell at most, and its time at most, ms. */
const CELL_MESSAGES = 6000;
const CELL_MS = 6000;
/**
 * Messages sent before measuring, by default: the service's workers started, its hot code
 * compiled once. V8's optimizing compiler is still at work for some thousands of messages more
 * (its threads count among "other threads"): `--warm-up 20000` measures the steady state
 * (bench/README.md, "Thread CPU").
 */
const WARM_UP_MESSAGES = 500;
/** The warm-up's time at most, ms. */
const WARM_UP_MS = 60_000;
/** Round trips of the two-thread measurement. */
const ROUND_TRIPS = 20_000;

/** The short commit of a checkout, or its path. */
function checkoutName(root: string): string {
    try {
        return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    }
    catch {
        return root;
    }
}

interface Cell {
    msgPerSec: number;
    p50: number;
    /** µs of CPU per acknowledged message: every thread, the main thread, the parse workers (nice 19), the rest. */
    all: number;
    main: number;
    parse: number;
    other: number;
    /** The main thread: µs a message runnable but waiting for a core, and its slices on a core a message. */
    mainWait: number;
    mainSlices: number;
}

async function measureCell(root: string, sessions: number, profile: ProfileName, smoke: boolean, tag: string, warmUp: number): Promise<Cell> {
    const service = await startStandalone({ root });
    try {
        const load = (messages: number, prefix: string, maxMs = smoke ? 2000 : CELL_MS) => runLoad({
            port: service.smtpPort, profile: profiles()[profile], sessions, maxMessages: messages, maxMs, inboxPrefix: prefix, tag: `${tag}-${prefix}`
        });
        await load(smoke ? 10 : warmUp, 'warm', smoke ? 2000 : WARM_UP_MS);
        const before = threadTicks(service.pid);
        const result = await load(smoke ? 30 : CELL_MESSAGES, 'cell');
        const after = threadTicks(service.pid);
        const spent = cpuBetween(service.pid, before, after);
        const perMessage = (seconds: number) => seconds * 1e6 / Math.max(1, result.acked);
        const { main, parse, other } = spent;
        const waited = mainWaitBetween(service.pid, before, after);
        return {
            msgPerSec: result.msgPerSec, p50: result.latency.p50, all: perMessage(main + parse + other), main: perMessage(main), parse: perMessage(parse), other: perMessage(other),
            mainWait: perMessage(waited.waitSeconds), mainSlices: waited.slices / Math.max(1, result.acked)
        };
    }
    finally {
        await service.stop();
    }
}

/** `count` round trips of a small message between this thread and a worker that answers at once: wall and CPU (both threads) per round trip, µs. */
async function roundTrips(count: number): Promise<{ wall: number; user: number; system: number }> {
    const worker = new Worker(`const { parentPort } = require('node:worker_threads'); parentPort.on('message', (m) => parentPort.postMessage(m));`, { eval: true });
    try {
        // Started and compiled before the clock runs.
        await new Promise<void>((resolve) => {
            worker.once('message', () => resolve());
            worker.postMessage(0);
        });
        const cpu = process.cpuUsage();
        const start = process.hrtime.bigint();
        await new Promise<void>((resolve) => {
            let done = 0;
            worker.on('message', () => {
                if (++done === count) {
                    resolve();
                }
                else {
                    worker.postMessage(done);
                }
            });
            worker.postMessage(0);
        });
        const wall = Number(process.hrtime.bigint() - start) / 1e3 / count;
        const used = process.cpuUsage(cpu);
        return { wall, user: used.user / count, system: used.system / count };
    }
    finally {
        await worker.terminate();
    }
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    const roots = (args.values.roots as string | undefined)?.split(',').map((r) => Path.resolve(r)) ?? [ROOT];
    const cs = smoke ? [2] : ((args.values.c as string | undefined) ?? '1,4,16').split(',').map(Number);
    const rounds = smoke ? 1 : Number(args.values.rounds ?? 3);
    const profile = (args.values.profile ?? 'text-1k') as ProfileName;
    const warmUp = Number(args.values['warm-up'] ?? WARM_UP_MESSAGES);
    if (!Number.isSafeInteger(warmUp) || warmUp < 1) {
        throw new Error('--warm-up must be a positive number of messages');
    }
    if (!PROFILE_NAMES.includes(profile)) {
        throw new Error(`unknown profile ${profile}; known: ${PROFILE_NAMES.join(', ')}`);
    }

    const cells = new Map<string, Cell[]>();
    for (let round = 1; round <= rounds; round++) {
        for (const root of roots) {
            for (const c of cs) {
                const cell = await measureCell(root, c, profile, smoke, `r${round}-${Date.now()}`, warmUp);
                const key = `${root}\u0000${c}`;
                cells.set(key, [...cells.get(key) ?? [], cell]);
                console.error(`round ${round} ${checkoutName(root)} C=${c}: ${fmt(cell.msgPerSec)} msg/s, ${fmt(cell.all)} µs CPU a message`);
            }
        }
    }

    const perThread: Table = {
        title: `Server CPU per acknowledged ${profile} message, by thread (µs; medians of ${rounds} round${rounds === 1 ? '' : 's'}, rounds alternating between checkouts)`,
        columns: ['checkout', 'C', 'msg/s', 'p50 ack ms', 'all threads', 'main thread', 'parse workers (nice 19)', 'other threads (writer, libuv pool, V8 helpers)', 'main thread waiting for a core', 'main thread slices a message'],
        rows: []
    };
    for (const root of roots) {
        for (const c of cs) {
            const sample = cells.get(`${root}\u0000${c}`)!;
            const m = (pick: (cell: Cell) => number) => fmt(median(sample.map(pick)));
            perThread.rows.push([checkoutName(root), String(c), m((x) => x.msgPerSec), m((x) => x.p50), m((x) => x.all), m((x) => x.main), m((x) => x.parse), m((x) => x.other), m((x) => x.mainWait), m((x) => x.mainSlices)]);
        }
    }

    const trips = [];
    for (let i = 0; i < (smoke ? 1 : 3); i++) {
        trips.push(await roundTrips(smoke ? 200 : ROUND_TRIPS));
    }

    const crossing: Table = {
        title: 'One round trip between two threads of one process, each waiting for the other (µs; median of 3 runs)',
        columns: ['round trips', 'wall', 'CPU, both threads', 'of which user', 'of which system'],
        rows: [[String(smoke ? 200 : ROUND_TRIPS), fmt(median(trips.map((t) => t.wall))), fmt(median(trips.map((t) => t.user + t.system))), fmt(median(trips.map((t) => t.user))), fmt(median(trips.map((t) => t.system)))]]
    };

    return {
        tables: [perThread, crossing],
        targets: [],
        notes: [
            'CPU is each thread\'s user + system time from /proc/<pid>/task/<tid>/stat over the cell. Main thread: the service\'s event loop (SMTP sessions, HTTP, ingest). Parse workers: the threads at nice 19 (none in checkouts that parse on the main thread). Other threads: libuv\'s thread pool (SQLite statements, fsync, file I/O) and V8\'s helper threads (garbage collection, compilation); Linux names them all "node".',
            'Main thread waiting for a core: µs a message it was runnable but not running (/proc/<pid>/task/<pid>/schedstat), and its slices on a core a message (each wake-up is one): on two cores shared with the load generator, an event loop that sleeps between events waits for a core each time it is woken.',
            'Each cell is a fresh service: warmed with ' + (smoke ? 10 : warmUp) + ` messages (or ${WARM_UP_MS / 1000} s), then ` + (smoke ? 30 : CELL_MESSAGES) + ' messages or ' + (smoke ? 2 : CELL_MS / 1000) + ' s from C sessions of our generator (one message at a time per session, as nodemailer sends).',
            'A message crosses threads at least twice for its parse (to a parse worker and back) and each node-sqlite3 call of its batch\'s save is one more, between the event loop and libuv\'s pool (a small batch of new mail makes one). The second table is what one such round trip costs here when both sides sleep between messages.'
        ]
    };
}

runBench('Thread CPU (where a small message\'s CPU goes)', 'thread-cpu', bench, ['roots', 'c', 'rounds', 'profile', 'warm-up']);
