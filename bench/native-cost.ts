/**
 * The part of a small message's CPU no JS profile sees: SQLite's own work on libuv's pool
 * (statements, the search index's FTS5 rows, the commit's WAL writes and fsync). `perf record`
 * samples every thread of the standalone while our generator sends text-1k (or `--profile`) at C; the SQLite
 * functions' inclusive samples, per acknowledged message, give the rows of the cost table in
 * bench/README.md, "The small-mail fast path: cost per stage", that cpu-profile cannot.
 * Not in run.ts: it needs `perf` (Debian package linux-perf) and the rights to attach it.
 *
 *   node dist-bench/bench/native-cost.js [--c 1,16] [--load-ms 6000] [--warm-up 500] [--root DIR|floor|floor-obligations]
 *
 * `--root floor` measures the floor (floor-server.ts) the same way, for its SQLite beside ours.
 */
import { startFloorServer } from './floor-server';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import * as Path from 'node:path';
import { promisify } from 'node:util';
import { PROFILE_NAMES, profiles, type ProfileName } from './profiles';
import { runBench, type BenchArgs, type Table } from './report';
import { runLoad } from './smtp-load';
import { startStandalone } from './standalone';
import { fmt } from './stats';
import { tempDir } from '../test/helpers/temp-dir';

const run = promisify(execFile);

/** Samples a second per thread. */
const FREQUENCY = 997;
/** Messages sent before perf attaches: code compiled, workers started. */
const WARM_UP_MESSAGES = 500;

/**
 * Inclusive groups of symbols, summed (their members never call each other; a group that is
 * `part` of the one before it is not taken from the statements). FTS5's rows are written by
 * its xUpdate (the INSERT) and flushed by xSync at COMMIT, before the pager's commit, or by
 * xSavepoint when a later statement of the transaction begins; xSavepoint flushes through an
 * `INSERT ... VALUES('flush')`, i.e. xUpdate again, so it is left out (counted in xUpdate;
 * summed, it was counted twice). The commit's WAL frames and fsync are the pager's commit
 * phase; the checkpoint that follows a commit past `wal_autocheckpoint` frames (copying the
 * WAL's pages into the database) is SQLite's WAL hook, after it; compiling SQL text is
 * sqlite3Prepare, whether for a prepared statement or for each statement of an exec.
 */
const GROUPS: Array<{ name: string; pattern: RegExp; part?: boolean }> = [
    { name: 'search index (FTS5: its xUpdate, xSync, ...)', pattern: /^fts5(Update|Sync|Begin|Release|Rollback|RollbackTo|Commit)Method$/ },
    { name: 'commit: WAL frames and fsync (sqlite3PagerCommitPhaseOne)', pattern: /^sqlite3PagerCommitPhaseOne$/ },
    { name: 'of which fsync', pattern: /^(fsync|fdatasync)$/, part: true },
    { name: 'checkpoint (sqlite3WalDefaultHook)', pattern: /^sqlite3WalDefaultHook$/ },
    { name: 'compiling SQL (sqlite3Prepare)', pattern: /^sqlite3Prepare$/ }
];

/** Inclusive (children) share of each symbol, %, from `perf report`. */
async function inclusiveShares(data: string): Promise<Map<string, number>> {
    const { stdout } = await run('perf', ['report', '-i', data, '--children', '--sort', 'sym', '-g', 'none', '--stdio', '--percent-limit', '0.05'], { maxBuffer: 64 * 1024 * 1024 });
    const shares = new Map<string, number>();
    for (const line of stdout.split('\n')) {
        // "    12.34%     1.23%  [.] sqlite3VdbeExec"
        const match = /^\s+([\d.]+)%\s+[\d.]+%\s+\[[.k]\]\s+(\S+)/.exec(line);
        if (match) {
            // The compiler's split parts (`sqlite3PagerCommitPhaseOne.part.0`) count as their function.
            const sym = match[2]!.replace(/\.(part|isra|constprop|cold)(\.\d+)?/g, '');
            shares.set(sym, Math.max(shares.get(sym) ?? 0, Number(match[1])));
        }
    }

    return shares;
}

/** Samples perf took, all threads, and the inclusive share (%) of node-sqlite3 (the binding and SQLite in it). */
async function sampleCount(data: string): Promise<{ samples: number; sqlite: number }> {
    const { stdout } = await run('perf', ['report', '-i', data, '--stdio', '--children', '--sort', 'dso', '-g', 'none'], { maxBuffer: 16 * 1024 * 1024 });
    // One header per event recorded (perf may add an empty one): the largest is the samples'.
    const counts = [...stdout.matchAll(/Samples: ([\d.]+)([KM]?)/g)].map((m) => Number(m[1]) * (m[2] === 'K' ? 1e3 : m[2] === 'M' ? 1e6 : 1));
    const sqlite = /^\s+([\d.]+)%\s+[\d.]+%\s+node_sqlite3\.node/m.exec(stdout);
    return { samples: counts.length > 0 ? Math.max(...counts) : NaN, sqlite: sqlite ? Number(sqlite[1]) : 0 };
}

async function measure(root: string | undefined, profile: ProfileName, sessions: number, loadMs: number, warmUp: number, smoke: boolean, dir: string): Promise<{ acked: number; msgPerSec: number; samples: number; sqlite: number; shares: Map<string, number> }> {
    const service = root === 'floor' || root === 'floor-obligations' ? await startFloorServer(root === 'floor' ? 'index' : 'obligations') : await startStandalone(root ? { root } : {});
    const data = Path.join(dir, `perf-c${sessions}.data`);
    try {
        const load = (messages: number, prefix: string, ms: number) => runLoad({
            port: service.smtpPort, profile: profiles()[profile], sessions, maxMessages: messages, maxMs: ms, inboxPrefix: prefix, tag: `${prefix}${Date.now().toString(36)}`
        });
        await load(warmUp, 'warm', 120_000);
        const perf = spawn('perf', ['record', '-F', String(FREQUENCY), '-g', '-p', String(service.pid), '-o', data, '--quiet'], { stdio: 'ignore' });
        // perf needs a moment to attach to every thread.
        await new Promise((resolve) => setTimeout(resolve, 300));
        const result = await load(smoke ? 30 : 1_000_000, 'cell', loadMs);
        perf.kill('SIGINT');
        await once(perf, 'exit');
        return { acked: result.acked, msgPerSec: result.msgPerSec, ...await sampleCount(data), shares: await inclusiveShares(data) };
    }
    finally {
        await service.stop();
    }
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    const cs = smoke ? [2] : String(args.values.c ?? '1,16').split(',').map(Number);
    const loadMs = smoke ? 1000 : Number(args.values['load-ms'] ?? 6000);
    const warmUp = smoke ? 10 : Number(args.values['warm-up'] ?? WARM_UP_MESSAGES);
    const profile = String(args.values.profile ?? 'text-1k') as ProfileName;
    if (!PROFILE_NAMES.includes(profile)) {
        throw new Error(`--profile must be one of ${PROFILE_NAMES.join(', ')}`);
    }

    const dir = await tempDir('bench-native-cost');
    const table: Table = {
        title: `SQLite's CPU a durable ${profile} message, all threads, µs (perf samples × their period ÷ acknowledged messages; inclusive of what each calls, the kernel's part too)`,
        columns: ['C', 'msg/s', 'all samples', 'node-sqlite3 (binding and SQLite)', ...GROUPS.map((g) => g.name), 'statements (node-sqlite3 less the groups before)'],
        rows: []
    };
    for (const c of cs) {
        const cell = await measure(args.values.root as string | undefined, profile, c, loadMs, warmUp, smoke, dir);
        const perMessage = (share: number) => share / 100 * cell.samples / FREQUENCY * 1e6 / Math.max(1, cell.acked);
        const group = (pattern: RegExp) => [...cell.shares].filter(([sym]) => pattern.test(sym)).reduce((sum, [, share]) => sum + share, 0);
        const sqlite = perMessage(cell.sqlite);
        const values = GROUPS.map((g) => perMessage(group(g.pattern)));
        const grouped = values.reduce((sum, v, i) => (GROUPS[i]!.part ? sum : sum + v), 0);
        table.rows.push([String(c), fmt(cell.msgPerSec), fmt(perMessage(100)), fmt(sqlite), ...values.map((v) => fmt(v)), fmt(Math.max(0, sqlite - grouped))]);
        console.error(`C=${c}: ${cell.acked} messages, ${cell.samples} samples`);
    }

    return {
        tables: [table],
        targets: [],
        notes: [
            `perf record -F ${FREQUENCY} -g on the standalone (every thread) for ${loadMs / 1000} s of our generator's ${profile} load after ${warmUp} messages of warm-up; a fresh service per C.`,
            '"all samples" is the whole process (JS threads, libuv pool, V8 helpers, kernel). The other columns are inclusive (what each calls, the kernel\'s part too): node-sqlite3 is every sample with the binding on its stack; the index, the commit, the checkpoint and the compiling are parts of it, and fsync is part of the commit.'
        ]
    };
}

runBench('SQLite\'s CPU a small message (perf)', 'native-cost', bench, ['c', 'load-ms', 'root', 'profile', 'warm-up']);
