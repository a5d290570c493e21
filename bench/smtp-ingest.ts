import * as Os from 'node:os';
import { startPostgres, type BenchPostgres } from './embedded-postgres';
import { fsyncTable, measureFsync, type FsyncFigures } from './fsync-bandwidth';
import { startMailDev, type MailDev } from './maildev';
import { mib, sampleRss } from './process-rss';
import { INBOX_SPREAD, PROFILE_NAMES, profiles, type ProfileName } from './profiles';
import { runBench, type BenchArgs, type Table, type TargetCheck } from './report';
import { startS3rver, type BenchS3 } from './s3rver';
import { runLoad, type LoadResult } from './smtp-load';
import { countListed, startStandalone, type Standalone } from './standalone';
import { fmt } from './stats';

/** SMTP sessions in parallel (the issue: C = 1, 4, 16). */
const CONCURRENCIES = [1, 4, 16];
/** One cell (server × profile × C) runs this long, ms, unless it reaches its message count first. */
const CELL_MS = 5000;
/** Messages per cell at most: bounds disk use of the 1 MB profile (about 2 GB per cell at worst). */
const CELL_MAX_MESSAGES = 20_000;
/** Warm-up per server before the measured cells (JIT, connection pools, SQLite pages), ms. */
const WARMUP_MS = 1500;
/** Longest wait for MailDev's store to catch up with what it acknowledged, ms (it answers 250 before parsing). */
const MAILDEV_SETTLE_MS = 10_000;

/** Fraction of MailDev's rate that the small profiles must reach (the issue: 5×). */
const SMALL_RATIO_TARGET = 5;
/** ... and the attachment profiles (2×). */
const ATTACHMENT_RATIO_TARGET = 2;
/** Share of the disk's fsync'd bandwidth the attachment profiles must reach (60 %). */
const BANDWIDTH_SHARE_TARGET = 0.6;

type ServerName = 'ours (SQLite + fs)' | 'MailDev' | 'ours (Postgres + S3)';

interface Target {
    name: ServerName;
    short: string;
    pid: number;
    smtpPort: number;
    /** Messages the server holds for the given inboxes, as its own API (or store) tells. */
    stored(inboxes: string[], expected: number): Promise<number>;
}

interface Cell {
    profile: ProfileName;
    concurrency: number;
    server: ServerName;
    load: LoadResult;
    rssPeak: number;
    listed: number;
}

function oursTarget(name: ServerName, short: string, service: Standalone): Target {
    return {
        name,
        short,
        pid: service.pid,
        smtpPort: service.smtpPort,
        async stored(inboxes) {
            let total = 0;
            for (const inbox of inboxes) {
                total += await countListed(service.base, service.apiKey, inbox);
            }

            return total;
        }
    };
}

function maildevTarget(maildev: MailDev): Target {
    let seen = 0;
    return {
        name: 'MailDev',
        short: 'md',
        pid: maildev.pid,
        smtpPort: maildev.smtpPort,
        // MailDev keeps one in-memory list: what this cell added is the growth since the last cell.
        async stored(_inboxes, expected) {
            const deadline = Date.now() + MAILDEV_SETTLE_MS;
            let count = await maildev.count();
            while (count - seen < expected && Date.now() < deadline) {
                await new Promise((r) => setTimeout(r, 100));
                count = await maildev.count();
            }

            const added = count - seen;
            seen = count;
            return added;
        }
    };
}

async function runCell(target: Target, profile: ProfileName, concurrency: number, cellMs: number, maxMessages: number, tag: string): Promise<Cell> {
    const prefix = `${target.short}-${profile}-c${concurrency}-${tag}`.toLowerCase();
    const rss = sampleRss(target.pid);
    const load = await runLoad({
        port: target.smtpPort,
        profile: profiles()[profile],
        sessions: concurrency,
        maxMessages,
        maxMs: cellMs,
        inboxPrefix: prefix,
        tag: prefix
    });
    const rssPeak = rss.stop();
    const inboxes = Array.from({ length: INBOX_SPREAD }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);
    const listed = await target.stored(inboxes, load.acked);
    return { profile, concurrency, server: target.name, load, rssPeak, listed };
}

function cellRow(cell: Cell): string[] {
    const { load } = cell;
    const refused = Object.entries(load.refused).map(([code, n]) => `${n}×${code}`).join(' ');
    const problems = [refused, load.brokenSessions ? `${load.brokenSessions} sessions broke: ${load.firstError}` : ''].filter(Boolean).join('; ');
    return [
        cell.profile, String(cell.concurrency), cell.server,
        fmt(load.msgPerSec), fmt(load.mbPerSec), fmt(load.latency.p50), fmt(load.latency.p99), mib(cell.rssPeak),
        String(load.acked), `${cell.listed}${cell.listed === load.acked ? ' ok' : ' MISMATCH'}`, problems || '-'
    ];
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    const withPostgres = args.values.postgres !== 'off';
    const onlyProfiles = (args.values.profiles as string | undefined)?.split(',') ?? [...PROFILE_NAMES];
    const concurrencies = (args.values.c as string | undefined)?.split(',').map(Number) ?? (smoke ? [1, 4] : CONCURRENCIES);
    const cellMs = smoke ? 300 : Number(args.values['cell-ms'] ?? CELL_MS);
    const maxMessages = smoke ? 6 : CELL_MAX_MESSAGES;
    const tag = Date.now().toString(36);

    const fsync: FsyncFigures = await measureFsync(Os.tmpdir(), smoke);

    let pg: BenchPostgres | undefined;
    let s3: BenchS3 | undefined;
    const started: Array<{ stop(): Promise<void> }> = [];
    const targets: Target[] = [];
    const notes: string[] = [];
    const cells: Cell[] = [];
    try {
        const sqlite = await startStandalone();
        started.push(sqlite);
        targets.push(oursTarget('ours (SQLite + fs)', 'sq', sqlite));

        const maildev = await startMailDev();
        started.push(maildev);
        targets.push(maildevTarget(maildev));

        if (withPostgres) {
            pg = await startPostgres();
            s3 = await startS3rver();
            const service = await startStandalone({ databaseUrl: await pg.createDatabase(), s3: { endpoint: s3.endpoint, bucket: s3.bucket } });
            started.push(service);
            targets.push(oursTarget('ours (Postgres + S3)', 'pg', service));
        }

        for (const target of targets) {
            await runCell(target, 'text-1k', 4, smoke ? 100 : WARMUP_MS, maxMessages, `w${tag}`);
        }

        // Alternating servers within each profile and C, so that noise from the shared
        // machine falls on all of them alike.
        for (const profile of PROFILE_NAMES.filter((p) => onlyProfiles.includes(p))) {
            for (const concurrency of concurrencies) {
                for (const target of targets) {
                    const cell = await runCell(target, profile, concurrency, cellMs, maxMessages, tag);
                    cells.push(cell);
                    console.error(cellRow(cell).join(' | '));
                }
            }
        }
    }
    finally {
        for (const service of started.reverse()) {
            await service.stop().catch((err: unknown) => notes.push(`stopping a server failed: ${String(err)}`));
        }

        await s3?.stop();
        await pg?.stop();
    }

    const tables: Table[] = [fsyncTable(fsync, Os.tmpdir())];
    tables.push({
        title: 'SMTP ingest: C sessions, each sending messages in one session (RSET between), recipients over 100 inboxes; latency = end of DATA → 250',
        columns: ['profile', 'C', 'server', 'msg/s', 'MiB/s', 'p50 ms', 'p99 ms', 'server RSS peak MiB', 'acked', 'listed after', 'refused / errors'],
        rows: cells.map(cellRow)
    });

    const find = (profile: ProfileName, c: number, server: ServerName) => cells.find((x) => x.profile === profile && x.concurrency === c && x.server === server);
    const ratioRows: string[][] = [];
    const checks: TargetCheck[] = [];
    for (const profile of PROFILE_NAMES) {
        for (const c of concurrencies) {
            const md = find(profile, c, 'MailDev');
            const sq = find(profile, c, 'ours (SQLite + fs)');
            const pgCell = find(profile, c, 'ours (Postgres + S3)');
            if (!md || !sq) {
                continue;
            }

            const ratio = sq.load.msgPerSec / md.load.msgPerSec;
            const pgRatio = pgCell ? pgCell.load.msgPerSec / md.load.msgPerSec : NaN;
            ratioRows.push([profile, String(c), fmt(ratio), fmt(pgRatio), fmt(sq.load.mbPerSec / fsync.bestMBps * 100)]);
            if (c === 1) {
                continue;
            }

            const small = profile === 'text-1k' || profile === 'alt-10k';
            const wanted = small ? SMALL_RATIO_TARGET : ATTACHMENT_RATIO_TARGET;
            checks.push({
                target: `${profile} C=${c}: ours (SQLite) ≥ ${wanted}× MailDev msg/s`,
                measured: `${fmt(ratio)}× (${fmt(sq.load.msgPerSec)} vs ${fmt(md.load.msgPerSec)} msg/s)`,
                met: smoke ? null : ratio >= wanted
            });
            if (!small) {
                const share = sq.load.mbPerSec / fsync.bestMBps;
                checks.push({
                    target: `${profile} C=${c}: ours (SQLite) ≥ ${BANDWIDTH_SHARE_TARGET * 100} % of fsync'd bandwidth (${fmt(fsync.bestMBps)} MiB/s)`,
                    measured: `${fmt(share * 100)} % (${fmt(sq.load.mbPerSec)} MiB/s)`,
                    met: smoke ? null : share >= BANDWIDTH_SHARE_TARGET
                });
            }
        }
    }

    tables.push({
        title: 'Ratios measured in this run (msg/s of ours ÷ msg/s of MailDev at the same profile and C)',
        columns: ['profile', 'C', 'ours SQLite + fs / MailDev', 'ours Postgres + S3 / MailDev', 'ours SQLite MiB/s as % of fsync\'d bandwidth'],
        rows: ratioRows
    });

    const mismatched = cells.filter((c) => c.listed !== c.load.acked && c.server !== 'MailDev');
    checks.push({
        target: 'every acknowledged message is listed by the API afterwards (ours)',
        measured: mismatched.length === 0 ? `all ${cells.filter((c) => c.server !== 'MailDev').length} cells equal` : mismatched.map((c) => `${c.server} ${c.profile} C=${c.concurrency}: ${c.load.acked} acked, ${c.listed} listed`).join('; '),
        met: mismatched.length === 0
    });

    notes.push(
        'Every server runs in its own process; the load generator runs in the bench process on the same 2 cores.',
        'MailDev answers 250 when DATA ends, before its parse and file write finish, and never fsyncs; ours answers after blobs and record are fsync\'d (SQLite synchronous=FULL; Postgres fsync=on, synchronous_commit=on).',
        's3rver writes objects to its directory without fsync, so the Postgres + S3 row is durable for records only.',
        `Each cell runs ${cellMs} ms or ${maxMessages} messages, whichever ends first; MiB are of the raw messages acknowledged.`
    );
    if (!withPostgres) {
        notes.push('The Postgres + S3 configuration was skipped (--postgres off).');
    }

    return { tables, targets: checks, notes };
}

if (require.main === module) {
    runBench('SMTP ingest (ours vs MailDev)', 'smtp-ingest', bench, ['postgres', 'profiles', 'c', 'cell-ms']);
}
