/**
 * What a durable small message writes: the bytes the service's process writes to storage per
 * acknowledged message (`/proc/<pid>/io`, the WAL, checkpoints and blob files together), and
 * the pages each commit puts in the WAL, by the table or index they belong to. A copy of the
 * WAL and the database taken mid-load is read frame by frame (the frames of the WAL's current
 * salt, cut at each commit frame) and each page number named with SQLite's `dbstat`. Ours
 * (the standalone) or `--root floor` (floor-server.ts). Not in run.ts: a diagnosis, not a target.
 *
 *   node dist-bench/bench/wal-pages.js [--profile text-1k] [--c 16] [--root DIR|floor|floor-obligations]
 */
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Sqlite3 from 'sqlite3';
import { startFloorServer } from './floor-server';
import { PROFILE_NAMES, profiles, type ProfileName } from './profiles';
import { runBench, type BenchArgs, type Table } from './report';
import { runLoad } from './smtp-load';
import { startStandalone } from './standalone';
import { fmt } from './stats';
import { tempDir } from '../test/helpers/temp-dir';

/** Messages sent before the counts start: code compiled, the tables past their first pages. */
const WARM_UP_MESSAGES = 2_000;
/** Bytes of a WAL header and of a frame's header. */
const WAL_HEADER = 32;
const FRAME_HEADER = 24;
/** Copies of the WAL taken during the load. */
const COPIES = 3;

/** The process's storage counters (`write_bytes` counts what reaches the page cache for a file). */
async function processIo(pid: number): Promise<Record<string, number>> {
    const text = await Fs.readFile(`/proc/${pid}/io`, 'utf8');
    return Object.fromEntries(text.trim().split('\n').map((line) => {
        const [key, value] = line.split(': ');
        return [key!, Number(value)];
    }));
}

/** The page numbers of each commit in a WAL file's frames of its current salt (the first and last commits left out: cut by the copy). */
function walCommits(wal: Buffer): number[][] {
    const pageSize = wal.readUInt32BE(8);
    const [salt1, salt2] = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
    const commits: number[][] = [];
    let pages: number[] = [];
    for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize) {
        if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) {
            break;
        }

        pages.push(wal.readUInt32BE(at));
        // A commit frame holds the database's size in pages after the commit; others 0.
        if (wal.readUInt32BE(at + 4) !== 0) {
            commits.push([...new Set(pages)]);
            pages = [];
        }
    }

    return commits.slice(1, -1);
}

/** Page number → the table or index it belongs to, in the database `file` with its WAL beside it. */
function pageOwners(file: string): Promise<Map<number, string>> {
    return new Promise((resolve, reject) => {
        const db = new Sqlite3.Database(file, (err) => {
            if (err) {
                reject(err);
                return;
            }

            db.all<{ name: string; pageno: number }>('SELECT name, pageno FROM dbstat', (e, rows) => {
                db.close();
                return e ? reject(e) : resolve(new Map(rows.map((r) => [r.pageno, r.name])));
            });
        });
    });
}

/** The SQLite file under `dir` (the service's data dir, or the floor's temp dir). */
async function databaseIn(dir: string): Promise<string> {
    const names = await Fs.readdir(dir);
    const name = names.find((n) => /\.sqlite$/.test(n) && !n.includes('blob'));
    if (name === undefined) {
        throw new Error(`no SQLite file in ${dir}: ${names.join(', ')}`);
    }

    return Path.join(dir, name);
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    const sessions = smoke ? 2 : Number(args.values.c ?? 16);
    const profile = String(args.values.profile ?? 'text-1k') as ProfileName;
    if (!PROFILE_NAMES.includes(profile)) {
        throw new Error(`--profile must be one of ${PROFILE_NAMES.join(', ')}`);
    }

    const root = args.values.root as string | undefined;
    const service = root === 'floor' || root === 'floor-obligations' ? await startFloorServer(root === 'floor' ? 'index' : 'obligations') : await startStandalone(root ? { root } : {});
    const copy = await tempDir('bench-wal-pages');
    try {
        const dir = 'dataDir' in service ? service.dataDir : service.dir;
        const load = (messages: number, prefix: string, ms: number) => runLoad({
            port: service.smtpPort, profile: profiles()[profile], sessions, maxMessages: messages, maxMs: ms, inboxPrefix: prefix, tag: `${prefix}${Date.now().toString(36)}`
        });
        await load(smoke ? 20 : WARM_UP_MESSAGES, 'warm', 20_000);
        const before = await processIo(service.pid);
        const loadMs = smoke ? 1_000 : 5_000;
        const loaded = load(1_000_000, 'cell', loadMs);
        // Three times mid-load, the WAL first (a checkpoint after it only copies into the database
        // what the WAL still holds): a WAL starts over after each checkpoint, so one copy may hold few commits.
        const file = await databaseIn(dir);
        const commits: number[][] = [];
        for (let i = 1; i <= COPIES; i++) {
            await new Promise((resolve) => setTimeout(resolve, loadMs / (COPIES + 1)));
            await Fs.copyFile(`${file}-wal`, Path.join(copy, 'copy.sqlite-wal'));
            await Fs.copyFile(file, Path.join(copy, 'copy.sqlite'));
            commits.push(...walCommits(await Fs.readFile(Path.join(copy, 'copy.sqlite-wal'))));
        }

        const result = await loaded;
        const after = await processIo(service.pid);
        // Page numbers named as the last copy has them (a page freed and reused between copies is rare).
        const owners = await pageOwners(Path.join(copy, 'copy.sqlite'));
        const perOwner = new Map<string, number>();
        for (const page of commits.flat()) {
            const owner = owners.get(page) ?? '(free or new)';
            perOwner.set(owner, (perOwner.get(owner) ?? 0) + 1);
        }

        const perMessage = (key: string) => (after[key]! - before[key]!) / Math.max(1, result.acked);
        const pages = commits.reduce((sum, c) => sum + c.length, 0);
        const table: Table = {
            title: `What a durable ${profile} message writes, ${root === 'floor' ? 'the floor' : 'ours'}, C = ${sessions}`,
            columns: ['what', 'value'],
            rows: [
                ['msg/s', fmt(result.msgPerSec)],
                ['bytes written to storage a message (/proc io write_bytes)', fmt(perMessage('write_bytes'))],
                ['write calls a message (syscw, sockets too)', fmt(perMessage('syscw'))],
                ['commits read in the WAL copy', String(commits.length)],
                ['distinct pages a commit', fmt(pages / Math.max(1, commits.length))],
                ...[...perOwner].sort((a, b) => b[1] - a[1]).map(([owner, n]) => [`… of ${owner}`, fmt(n / Math.max(1, commits.length))])
            ]
        };
        return {
            tables: [table],
            targets: [],
            notes: [`Our generator's ${profile} from ${sessions} sessions for ${loadMs / 1000} s after ${smoke ? 20 : WARM_UP_MESSAGES} messages; the WAL and the database copied ${COPIES} times during it, the first and last commits of each copy left out.`]
        };
    }
    finally {
        await service.stop();
        await Fs.rm(copy, { recursive: true, force: true });
    }
}

runBench('What a small message writes (WAL pages)', 'wal-pages', bench, ['c', 'profile', 'root']);
