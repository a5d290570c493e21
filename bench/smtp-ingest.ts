import { execFileSync } from 'node:child_process';
import * as Fs from 'node:fs';
import * as Os from 'node:os';
import { startPostgres, type PostgresServer } from '../test/helpers/postgres';
import { BENCH_POSTGRES } from './postgres-options';
import { fsyncTable, measureFsync, type FsyncFigures } from './fsync-bandwidth';
import { startMailDev, type MailDev } from './maildev';
import { mib, sampleRss } from './process-rss';
import { INBOX_SPREAD, PROFILE_NAMES, profiles, type ProfileName } from './profiles';
import { runBench, type BenchArgs, type Table, type TargetCheck } from './report';
import { startS3, type S3Fixture } from '../test/helpers/s3';
import { runLoad, type LoadResult } from './smtp-load';
import { startSmtpSink, type SinkMode } from './smtp-sink';
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

type ServerName = 'ours (SQLite, embedded default)' | 'MailDev' | 'ours (Postgres + S3)' | 'sink: bare smtp-server' | 'sink: our listener, no store';

/** The reference servers (smtp-sink.ts) by their --refs name. */
const SINKS: Record<SinkMode, { name: ServerName; short: string }> = {
    bare: { name: 'sink: bare smtp-server', short: 'sb' },
    listener: { name: 'sink: our listener, no store', short: 'sl' }
};

/** Clock ticks per second of /proc/<pid>/stat times (100 on every usual Linux). */
const CLOCK_TICKS = (() => {
    try {
        return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    }
    catch {
        return 100;
    }
})();

/** CPU time a process has used so far (user + system), ms; NaN when it cannot be read. */
function cpuMsOf(pid: number): number {
    try {
        const stat = Fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        // Fields after the command name (which may hold spaces) start at field 3: utime is 14, stime 15.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS * 1000;
    }
    catch {
        return NaN;
    }
}

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
    /** CPU the server used during the cell, % of one core. */
    serverCpu: number;
    /** CPU the load generator (this process) used during the cell, % of one core. */
    generatorCpu: number;
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

function countingTarget(name: ServerName, short: string, server: Pick<MailDev, 'pid' | 'smtpPort' | 'count'>): Target {
    let seen = 0;
    return {
        name,
        short,
        pid: server.pid,
        smtpPort: server.smtpPort,
        // MailDev (and a sink) keeps one count for all inboxes: what this cell added is the growth since the last cell.
        async stored(_inboxes, expected) {
            const deadline = Date.now() + MAILDEV_SETTLE_MS;
            let count = await server.count();
            while (count - seen < expected && Date.now() < deadline) {
                await new Promise((r) => setTimeout(r, 100));
                count = await server.count();
            }

            const added = count - seen;
            seen = count;
            return added;
        }
    };
}

async function runCell(target: Target, profile: ProfileName, concurrency: number, cellMs: number, maxMessages: number, tag: string, pipelining: boolean): Promise<Cell> {
    const prefix = `${target.short}-${profile}-c${concurrency}-${tag}`.toLowerCase();
    const rss = sampleRss(target.pid);
    const serverCpu0 = cpuMsOf(target.pid);
    const generatorCpu0 = process.cpuUsage();
    const load = await runLoad({
        port: target.smtpPort,
        profile: profiles()[profile],
        sessions: concurrency,
        maxMessages,
        maxMs: cellMs,
        inboxPrefix: prefix,
        tag: prefix,
        pipelining
    });
    const generatorCpu = process.cpuUsage(generatorCpu0);
    const serverCpu = (cpuMsOf(target.pid) - serverCpu0) / load.elapsedMs * 100;
    const rssPeak = rss.stop();
    const inboxes = Array.from({ length: INBOX_SPREAD }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);
    const listed = await target.stored(inboxes, load.acked);
    return {
        profile, concurrency, server: target.name, load, rssPeak, listed, serverCpu,
        generatorCpu: (generatorCpu.user + generatorCpu.system) / 1000 / load.elapsedMs * 100
    };
}

/**
 * One cell from the rounds of a server at one profile and C: rates over the summed
 * time, CPU weighted by time, RSS the peak; latency is that of the round with the
 * median rate (the rounds' samples are not kept).
 */
function mergeRounds(rounds: Cell[]): Cell {
    if (rounds.length === 1) {
        return rounds[0];
    }

    const sum = (f: (c: Cell) => number) => rounds.reduce((total, c) => total + f(c), 0);
    const elapsedMs = sum((c) => c.load.elapsedMs);
    const acked = sum((c) => c.load.acked);
    const ackedBytes = sum((c) => c.load.ackedBytes);
    const refused: Record<string, number> = {};
    for (const cell of rounds) {
        for (const [code, n] of Object.entries(cell.load.refused)) {
            refused[code] = (refused[code] ?? 0) + n;
        }
    }

    const median = [...rounds].sort((a, b) => a.load.msgPerSec - b.load.msgPerSec)[Math.floor(rounds.length / 2)];
    return {
        ...median,
        load: {
            ...median.load,
            acked,
            ackedBytes,
            refused,
            elapsedMs,
            brokenSessions: sum((c) => c.load.brokenSessions),
            firstError: rounds.find((c) => c.load.firstError)?.load.firstError,
            msgPerSec: acked / (elapsedMs / 1000),
            mbPerSec: ackedBytes / 2 ** 20 / (elapsedMs / 1000)
        },
        rssPeak: Math.max(...rounds.map((c) => c.rssPeak)),
        listed: sum((c) => c.listed),
        serverCpu: sum((c) => c.serverCpu * c.load.elapsedMs) / elapsedMs,
        generatorCpu: sum((c) => c.generatorCpu * c.load.elapsedMs) / elapsedMs
    };
}

/** CPU ms per message answered, from a CPU share (% of one core) over the cell. */
function cpuPerMessage(cpuPercent: number, load: LoadResult): number {
    return cpuPercent / 100 * load.elapsedMs / (load.acked + Object.values(load.refused).reduce((a, b) => a + b, 0));
}

function cellRow(cell: Cell): string[] {
    const { load } = cell;
    const refused = Object.entries(load.refused).map(([code, n]) => `${n}×${code}`).join(' ');
    const problems = [refused, load.brokenSessions ? `${load.brokenSessions} sessions broke: ${load.firstError}` : ''].filter(Boolean).join('; ');
    return [
        cell.profile, String(cell.concurrency), cell.server,
        fmt(load.msgPerSec), fmt(load.mbPerSec), fmt(load.latency.p50), fmt(load.latency.p99), mib(cell.rssPeak),
        fmt(cell.serverCpu), fmt(cpuPerMessage(cell.serverCpu, cell.load)), fmt(cell.generatorCpu), fmt(cpuPerMessage(cell.generatorCpu, cell.load)),
        String(load.acked), `${cell.listed}${cell.listed === load.acked ? ' ok' : ' MISMATCH'}`, problems || '-'
    ];
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    const withPostgres = args.values.postgres !== 'off';
    const onlyProfiles = (args.values.profiles as string | undefined)?.split(',') ?? [...PROFILE_NAMES];
    const concurrencies = (args.values.c as string | undefined)?.split(',').map(Number) ?? (smoke ? [1, 4] : CONCURRENCIES);
    const cellMs = smoke ? 300 : Number(args.values['cell-ms'] ?? CELL_MS);
    const rounds = Number(args.values.rounds ?? 1);
    if (!(Number.isSafeInteger(rounds) && rounds >= 1)) {
        throw new Error('--rounds must be a positive integer');
    }

    const maxMessages = smoke ? 6 : CELL_MAX_MESSAGES;
    const pipelining = args.values.pipelining !== 'off';
    const refsArg = (args.values.refs as string | undefined) ?? 'bare';
    const refs = refsArg === 'off' ? [] : refsArg.split(',') as SinkMode[];
    for (const mode of refs) {
        if (!(mode in SINKS)) {
            throw new Error(`--refs: unknown reference server ${mode} (bare, listener, off)`);
        }
    }
    const tag = Date.now().toString(36);

    const fsync: FsyncFigures = await measureFsync(Os.tmpdir(), smoke);

    let pg: PostgresServer | undefined;
    let s3: S3Fixture | undefined;
    const started: Array<{ stop(): Promise<void> }> = [];
    const targets: Target[] = [];
    const notes: string[] = [];
    const cells: Cell[] = [];
    try {
        const sqlite = await startStandalone();
        started.push(sqlite);
        targets.push(oursTarget('ours (SQLite, embedded default)', 'sq', sqlite));

        const maildev = await startMailDev();
        started.push(maildev);
        targets.push(countingTarget('MailDev', 'md', maildev));

        for (const mode of refs) {
            const sink = await startSmtpSink(mode);
            started.push(sink);
            targets.push(countingTarget(SINKS[mode].name, SINKS[mode].short, sink));
        }

        if (withPostgres) {
            pg = await startPostgres(BENCH_POSTGRES);
            s3 = await startS3();
            const service = await startStandalone({ databaseUrl: await pg.createDatabase(), s3: { endpoint: s3.endpoint, bucket: s3.bucket } });
            started.push(service);
            targets.push(oursTarget('ours (Postgres + S3)', 'pg', service));
        }

        for (const target of targets) {
            await runCell(target, 'text-1k', 4, smoke ? 100 : WARMUP_MS, maxMessages, `w${tag}`, pipelining);
        }

        // Alternating servers within each profile and C, so that noise from the shared
        // machine falls on all of them alike; with --rounds, the alternation repeats (each
        // round in another order) and a server's cells add up.
        for (const profile of PROFILE_NAMES.filter((p) => onlyProfiles.includes(p))) {
            for (const concurrency of concurrencies) {
                const perTarget = new Map<Target, Cell[]>(targets.map((t) => [t, []]));
                for (let round = 0; round < rounds; round++) {
                    const order = round % 2 === 0 ? targets : [...targets].reverse();
                    for (const target of order) {
                        const cell = await runCell(target, profile, concurrency, cellMs, maxMessages, `${tag}r${round}`, pipelining);
                        perTarget.get(target)!.push(cell);
                        console.error(cellRow(cell).join(' | '));
                    }
                }

                for (const target of targets) {
                    cells.push(mergeRounds(perTarget.get(target)!));
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
        columns: ['profile', 'C', 'server', 'msg/s', 'MiB/s', 'p50 ms', 'p99 ms', 'server RSS peak MiB', 'server CPU %', 'server CPU ms/msg', 'load generator CPU %', 'generator CPU ms/msg', 'acked', 'listed after', 'refused / errors'],
        rows: cells.map(cellRow)
    });

    const find = (profile: ProfileName, c: number, server: ServerName) => cells.find((x) => x.profile === profile && x.concurrency === c && x.server === server);
    const ratioRows: string[][] = [];
    const checks: TargetCheck[] = [];
    for (const profile of PROFILE_NAMES) {
        for (const c of concurrencies) {
            const md = find(profile, c, 'MailDev');
            const sq = find(profile, c, 'ours (SQLite, embedded default)');
            const pgCell = find(profile, c, 'ours (Postgres + S3)');
            if (!md || !sq) {
                continue;
            }

            const ratio = sq.load.msgPerSec / md.load.msgPerSec;
            const pgRatio = pgCell ? pgCell.load.msgPerSec / md.load.msgPerSec : NaN;
            const sinkRatios = (Object.keys(SINKS) as SinkMode[]).map((mode) => {
                const sink = find(profile, c, SINKS[mode].name);
                return sink ? sink.load.msgPerSec / md.load.msgPerSec : NaN;
            });
            ratioRows.push([profile, String(c), fmt(ratio), fmt(pgRatio), ...sinkRatios.map((r) => fmt(r)), fmt(sq.load.mbPerSec / fsync.bestMBps * 100)]);
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
        columns: ['profile', 'C', 'ours SQLite / MailDev', 'ours Postgres + S3 / MailDev', ...(Object.keys(SINKS) as SinkMode[]).map((mode) => `${SINKS[mode].name} / MailDev`), 'ours SQLite MiB/s as % of fsync\'d bandwidth'],
        rows: ratioRows
    });

    const isOurs = (c: Cell) => c.server.startsWith('ours');
    const mismatched = cells.filter((c) => c.listed !== c.load.acked && isOurs(c));
    checks.push({
        target: 'every acknowledged message is listed by the API afterwards (ours)',
        measured: mismatched.length === 0 ? `all ${cells.filter(isOurs).length} cells equal` : mismatched.map((c) => `${c.server} ${c.profile} C=${c.concurrency}: ${c.load.acked} acked, ${c.listed} listed`).join('; '),
        met: mismatched.length === 0
    });

    notes.push(
        'Every server runs in its own process; the load generator runs in the bench process on the same 2 cores.',
        'MailDev answers 250 when DATA ends, before its parse and file write finish, and never fsyncs; ours answers after blobs and record are fsync\'d (SQLite synchronous=FULL; Postgres fsync=on, synchronous_commit=on).',
        's3rver writes objects to its directory without fsync, so the Postgres + S3 row is durable for records only.',
        `Each cell runs ${cellMs} ms or ${maxMessages} messages, whichever ends first; MiB are of the raw messages acknowledged.` +
            (rounds > 1 ? ` ${rounds} rounds of the alternation per profile and C, in alternating order; a row adds up a server's rounds (latency: its median round).` : ''),
        'Reference servers (smtp-sink.ts, each in its own process, --refs): "bare smtp-server" is smtp-server with our listener\'s options whose onData drains the message and answers 250 (nothing parsed or stored): the ceiling of SMTP handling plus the load generator here. "our listener, no store" is adapters/smtp in front of a core that only reads the message: the adapter\'s own cost. Their "listed after" is the count they answered.',
        pipelining ?
            'The load generator pipelines each envelope (the RSET owed from the last message, MAIL, RCPT, DATA in one write; RFC 2920) since every server here offers PIPELINING, and sends the message after the 354; every command is still answered. --pipelining off sends commands in lock-step.' :
            'The load generator sent commands in lock-step (--pipelining off).',
        'CPU % is of one core over the cell (the server from /proc/<pid>/stat, the load generator from process.cpuUsage() of the bench process); the two share the same 2 cores.'
    );
    if (!withPostgres) {
        notes.push('The Postgres + S3 configuration was skipped (--postgres off).');
    }

    return { tables, targets: checks, notes };
}

if (require.main === module) {
    runBench('SMTP ingest (ours vs MailDev)', 'smtp-ingest', bench, ['postgres', 'profiles', 'c', 'cell-ms', 'refs', 'pipelining', 'rounds']);
}
