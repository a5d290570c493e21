import * as Os from 'node:os';
import { startPostgres, type PostgresServer } from '../test/helpers/postgres';
import { BENCH_POSTGRES } from './postgres-options';
import { fsyncTable, measureFsync, type FsyncFigures } from './fsync-bandwidth';
import { startMailDev, type MailDev } from './maildev';
import { cpuMsOf } from './process-cpu';
import { mib, sampleRss } from './process-rss';
import { INBOX_SPREAD, PROFILE_NAMES, profiles, type ProfileName } from './profiles';
import { runBench, type BenchArgs, type Table, type TargetCheck } from './report';
import { startS3, type S3Fixture } from '../test/helpers/s3';
import { runLoad, type LoadResult } from './smtp-load';
import { startFloorServer } from './floor-server';
import type { ReferenceServer } from './reference-server';
import { startSmtpSink, type SinkMode } from './smtp-sink';
import { smallMailChecks } from './small-mail-targets';
import { runSmtpSourceCells, type SourceFigures } from './smtp-source-cells';
import { countListed, startStandalone, type Standalone } from './standalone';
import { fmt, median } from './stats';

/** SMTP sessions in parallel (the issue: C = 1, 4, 16). */
const CONCURRENCIES = [1, 4, 16];
/** C of the smtp-source cells (the issue: 4 and 16). */
const SOURCE_CONCURRENCIES = [4, 16];
/** One cell (server × profile × C) runs this long, ms, unless it reaches its message count first. */
const CELL_MS = 5000;
/** Rounds of the alternation per profile and C: figures and ratios are medians of the rounds (the issue: at least 3). */
const ROUNDS = 3;
/** Messages per cell at most: bounds disk use of the 1 MB profile (about 2 GB per cell at worst). */
const CELL_MAX_MESSAGES = 20_000;
/** Warm-up per server before the measured cells (JIT, connection pools, SQLite pages), ms. */
const WARMUP_MS = 1500;
/** Longest wait for MailDev's store to catch up with what it acknowledged, ms (2.2.1 answers 250 before parsing). */
const MAILDEV_SETTLE_MS = 10_000;

/** Attachment profiles at C = 4 and 16, ours ÷ either MailDev. */
const ATTACHMENT_VS_MAILDEV = 2;
/** p50 ack latency of a 1 KB message at C = 1, ms. */
const P50_AT_C1_MS = 3;

const OURS = 'ours (SQLite, embedded default)';
const OURS_PG = 'ours (Postgres + S3)';
const MAILDEV2 = 'MailDev 2.2.1';
const MAILDEV3 = 'MailDev 3.0.0';
const FLOOR = 'floor: one thread, durable, indexed';
const FLOOR_OBLIGATIONS = 'floor with our storage obligations';
type ServerName = typeof OURS | typeof OURS_PG | typeof MAILDEV2 | typeof MAILDEV3 | typeof FLOOR | typeof FLOOR_OBLIGATIONS | 'floor without the index' | 'sink: bare smtp-server' | 'sink: our listener, no store';

/** A reference server's --refs name: the sinks (smtp-sink.ts) and the floor (floor-server.ts). */
type RefName = SinkMode | 'floor' | 'floor-no-index' | 'floor-obligations';

/** The reference servers by their --refs name. */
const SINKS: Record<RefName, { name: ServerName; short: string; start(): Promise<ReferenceServer> }> = {
    bare: { name: 'sink: bare smtp-server', short: 'sb', start: () => startSmtpSink('bare') },
    listener: { name: 'sink: our listener, no store', short: 'sl', start: () => startSmtpSink('listener') },
    floor: { name: FLOOR, short: 'fl', start: () => startFloorServer('index') },
    'floor-no-index': { name: 'floor without the index', short: 'fn', start: () => startFloorServer('no-index') },
    'floor-obligations': { name: FLOOR_OBLIGATIONS, short: 'fo', start: () => startFloorServer('obligations') }
};

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
    /** Server CPU (all its threads) per message answered, ms. */
    serverCpuPerMsg: number;
    /** CPU the load generator (this process) used during the cell, % of one core. */
    generatorCpu: number;
    /** The rounds this cell is the median of (itself when there was one). */
    rounds: Cell[];
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
    const cell: Cell = {
        profile, concurrency, server: target.name, load, rssPeak, listed, serverCpu,
        serverCpuPerMsg: cpuPerMessage(serverCpu, load),
        generatorCpu: (generatorCpu.user + generatorCpu.system) / 1000 / load.elapsedMs * 100,
        rounds: []
    };
    cell.rounds.push(cell);
    return cell;
}

/**
 * One cell from the rounds of a server at one profile and C: msg/s, MiB/s, p50, p99
 * and CPU are the medians of the rounds, RSS the peak; counts add up.
 */
function mergeRounds(rounds: Cell[]): Cell {
    if (rounds.length === 1) {
        return rounds[0];
    }

    const sum = (f: (c: Cell) => number) => rounds.reduce((total, c) => total + f(c), 0);
    const mid = (f: (c: Cell) => number) => median(rounds.map(f));
    const refused: Record<string, number> = {};
    for (const cell of rounds) {
        for (const [code, n] of Object.entries(cell.load.refused)) {
            refused[code] = (refused[code] ?? 0) + n;
        }
    }

    const first = rounds[0];
    return {
        ...first,
        load: {
            ...first.load,
            acked: sum((c) => c.load.acked),
            ackedBytes: sum((c) => c.load.ackedBytes),
            refused,
            elapsedMs: sum((c) => c.load.elapsedMs),
            brokenSessions: sum((c) => c.load.brokenSessions),
            firstError: rounds.find((c) => c.load.firstError)?.load.firstError,
            msgPerSec: mid((c) => c.load.msgPerSec),
            mbPerSec: mid((c) => c.load.mbPerSec),
            latency: { ...first.load.latency, p50: mid((c) => c.load.latency.p50), p99: mid((c) => c.load.latency.p99) }
        },
        rssPeak: Math.max(...rounds.map((c) => c.rssPeak)),
        listed: sum((c) => c.listed),
        serverCpu: mid((c) => c.serverCpu),
        serverCpuPerMsg: mid((c) => c.serverCpuPerMsg),
        generatorCpu: mid((c) => c.generatorCpu),
        rounds
    };
}

/** ours ÷ peer msg/s: the median of the rounds' ratios (each round ran both, next to each other). */
function rateRatio(ours: Cell, peer: Cell): number {
    return median(ours.rounds.map((cell, i) => cell.load.msgPerSec / (peer.rounds[i]?.load.msgPerSec ?? NaN)));
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
        fmt(cell.serverCpu), fmt(cell.serverCpuPerMsg), fmt(cell.generatorCpu),
        String(load.acked), `${cell.listed}${cell.listed === load.acked ? ' ok' : ' MISMATCH'}`, problems || '-'
    ];
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    // A smoke run proves the bench runs and fills its tables: a fresh Postgres and S3 (half its
    // start-up) only with --postgres on; one C and one profile of each kind of target row
    // (text, with an attachment) fill every table.
    const withPostgres = args.values.postgres === undefined ? !smoke : args.values.postgres !== 'off';
    const onlyProfiles = (args.values.profiles as string | undefined)?.split(',') ?? (smoke ? ['text-1k', 'att-100k'] : [...PROFILE_NAMES]);
    const concurrencies = (args.values.c as string | undefined)?.split(',').map(Number) ?? (smoke ? [4] : CONCURRENCIES);
    const cellMs = smoke ? 300 : Number(args.values['cell-ms'] ?? CELL_MS);
    const rounds = Number(args.values.rounds ?? (smoke ? 1 : ROUNDS));
    if (!(Number.isSafeInteger(rounds) && rounds >= 1)) {
        throw new Error('--rounds must be a positive integer');
    }

    const maxMessages = smoke ? 6 : CELL_MAX_MESSAGES;
    // A real client (nodemailer, a test suite's SMTP library) waits for each reply; --pipelining on is the old generator.
    const pipelining = args.values.pipelining === 'on';
    const refsArg = (args.values.refs as string | undefined) ?? 'bare,floor,floor-obligations';
    const refs = refsArg === 'off' ? [] : refsArg.split(',') as RefName[];
    for (const mode of refs) {
        if (!(mode in SINKS)) {
            throw new Error(`--refs: unknown reference server ${mode} (bare, listener, floor, floor-no-index, floor-obligations, off)`);
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
    let sourceFigures: SourceFigures = { tables: [], checks: [], notes: [] };
    try {
        // The servers start together (start-up is not measured: mostly waits on child processes,
        // a CLI run, migrations); targets keep this order, and the finally stops each one that came up.
        type Started = { server: { stop(): Promise<void> }; target: Target };
        const starters: Array<() => Promise<Started>> = [
            async () => {
                const sqlite = await startStandalone();
                return { server: sqlite, target: oursTarget(OURS, 'sq', sqlite) };
            },
            async () => {
                const maildev3: MailDev = await startMailDev('3.0.0');
                return { server: maildev3, target: countingTarget(MAILDEV3, 'm3', maildev3) };
            },
            async () => {
                const maildev2: MailDev = await startMailDev('2.2.1');
                return { server: maildev2, target: countingTarget(MAILDEV2, 'm2', maildev2) };
            },
            ...refs.map((mode) => async (): Promise<Started> => {
                const sink = await SINKS[mode].start();
                return { server: sink, target: countingTarget(SINKS[mode].name, SINKS[mode].short, sink) };
            }),
            ...(withPostgres ? [async (): Promise<Started> => {
                pg = await startPostgres(BENCH_POSTGRES);
                s3 = await startS3();
                const service = await startStandalone({ databaseUrl: await pg.createDatabase(), s3: { endpoint: s3.endpoint, bucket: s3.bucket } });
                return { server: service, target: oursTarget(OURS_PG, 'pg', service) };
            }] : [])
        ];
        const starts = await Promise.allSettled(starters.map((start) => start()));
        for (const start of starts) {
            if (start.status === 'fulfilled') {
                started.push(start.value.server);
                targets.push(start.value.target);
            }
        }

        const failed = starts.find((start) => start.status === 'rejected');
        if (failed) {
            throw failed.reason;
        }

        for (const target of targets) {
            await runCell(target, 'text-1k', 4, smoke ? 100 : WARMUP_MS, maxMessages, `w${tag}`, pipelining);
        }

        // Alternating servers within each profile and C, so that noise from the shared
        // machine falls on all of them alike; each round runs them in another order.
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

        // Postfix's smtp-source beside our generator (C = 4 and 16), while the same servers run.
        const sinkTarget = targets.find((t) => t.name === SINKS.bare.name);
        sourceFigures = args.values.source === 'off' ? sourceFigures : await runSmtpSourceCells(targets.filter((t) => t.name !== OURS_PG), {
            concurrencies: smoke ? [4] : SOURCE_CONCURRENCIES, rounds, smoke, tag, oursName: OURS, maildev3: MAILDEV3, maildev2: MAILDEV2, sinkName: sinkTarget?.name,
            floorName: targets.find((t) => t.name === FLOOR)?.name, obligationsName: targets.find((t) => t.name === FLOOR_OBLIGATIONS)?.name
        });
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
        title: `SMTP ingest: C sessions, each sending messages one at a time (RSET between), recipients over 100 inboxes; latency = end of DATA → 250; ${rounds === 1 ? 'one round' : `medians of ${rounds} rounds`}`,
        columns: ['profile', 'C', 'server', 'msg/s', 'MiB/s', 'p50 ms', 'p99 ms', 'server RSS peak MiB', 'server CPU %', 'server CPU ms/msg', 'load generator CPU %', 'acked', 'listed after', 'refused / errors'],
        rows: cells.map(cellRow)
    });

    const find = (profile: ProfileName, c: number, server: ServerName) => cells.find((x) => x.profile === profile && x.concurrency === c && x.server === server);
    const ratio = (profile: ProfileName, c: number, a: ServerName, b: ServerName) => {
        const [x, y] = [find(profile, c, a), find(profile, c, b)];
        return x && y ? rateRatio(x, y) : NaN;
    };
    const rate = (profile: ProfileName, c: number, server: ServerName) => fmt(find(profile, c, server)?.load.msgPerSec ?? NaN);
    const ratioRows: string[][] = [];
    const checks: TargetCheck[] = [];
    const judge = (met: boolean) => (smoke ? null : met);
    for (const profile of PROFILE_NAMES) {
        for (const c of concurrencies) {
            const ours = find(profile, c, OURS);
            if (!ours) {
                continue;
            }

            const vs3 = ratio(profile, c, OURS, MAILDEV3);
            const vs2 = ratio(profile, c, OURS, MAILDEV2);
            ratioRows.push([
                profile, String(c), fmt(vs3), fmt(vs2),
                ...(withPostgres ? [fmt(ratio(profile, c, OURS_PG, MAILDEV3)), fmt(ratio(profile, c, OURS_PG, MAILDEV2))] : []),
                ...refs.map((mode) => fmt(ratio(profile, c, SINKS[mode].name, OURS))),
                fmt(ours.load.mbPerSec / fsync.bestMBps * 100)
            ]);
            const rates = `(${rate(profile, c, OURS)} vs ${rate(profile, c, MAILDEV3)} and ${rate(profile, c, MAILDEV2)} msg/s)`;
            if (profile === 'text-1k' || profile === 'alt-10k') {
                checks.push(...smallMailChecks({
                    where: `${profile} C=${c}`, concurrency: c, vsFloor: ratio(profile, c, OURS, FLOOR), vsMaildev3: vs3,
                    oursCpuMs: ours.serverCpuPerMsg, floorCpuMs: find(profile, c, FLOOR)?.serverCpuPerMsg ?? NaN,
                    rates: `(${rate(profile, c, OURS)} vs the floor's ${rate(profile, c, FLOOR)}, MailDev 3.0.0's ${rate(profile, c, MAILDEV3)} msg/s)`,
                    obligations: find(profile, c, FLOOR_OBLIGATIONS) && find(profile, c, FLOOR) ? {
                        vsFloor: ratio(profile, c, FLOOR_OBLIGATIONS, FLOOR), oursVs: ratio(profile, c, OURS, FLOOR_OBLIGATIONS),
                        cpuMs: find(profile, c, FLOOR_OBLIGATIONS)!.serverCpuPerMsg
                    } : undefined
                }, smoke));
            }
            else if (c >= 4) {
                checks.push({
                    target: `${profile} C=${c}: ours (SQLite) ≥ ${ATTACHMENT_VS_MAILDEV}× both MailDev versions msg/s`,
                    measured: `${fmt(vs3)}× 3.0.0 and ${fmt(vs2)}× 2.2.1 ${rates}`,
                    met: judge(vs3 >= ATTACHMENT_VS_MAILDEV && vs2 >= ATTACHMENT_VS_MAILDEV)
                });
            }
        }
    }

    const cpuOurs = find('text-1k', 16, OURS);
    const cpuMd3 = find('text-1k', 16, MAILDEV3);
    if (cpuOurs && cpuMd3) {
        checks.push({
            target: 'text-1k C=16: server CPU per durable message, ours ≤ MailDev 3.0.0',
            measured: `${fmt(cpuOurs.serverCpuPerMsg)} vs ${fmt(cpuMd3.serverCpuPerMsg)} ms/msg`,
            met: judge(cpuOurs.serverCpuPerMsg <= cpuMd3.serverCpuPerMsg)
        });
    }

    const c1 = find('text-1k', 1, OURS);
    if (c1) {
        checks.push({
            target: `text-1k C=1: p50 ack latency (ours) ≤ ${P50_AT_C1_MS} ms`,
            measured: `${fmt(c1.load.latency.p50)} ms`,
            met: judge(c1.load.latency.p50 <= P50_AT_C1_MS)
        });
    }

    tables.push({
        title: 'Ratios measured in this run: msg/s of one server ÷ another at the same profile and C (median of the rounds\' ratios)',
        columns: ['profile', 'C', 'ours SQLite / MailDev 3.0.0', 'ours SQLite / MailDev 2.2.1', ...(withPostgres ? ['ours Postgres + S3 / MailDev 3.0.0', 'ours Postgres + S3 / MailDev 2.2.1'] : []), ...refs.map((mode) => `${SINKS[mode].name} / ours SQLite`), 'ours SQLite MiB/s as % of fsync\'d bandwidth'],
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
        'Every server runs in its own process at its defaults (only ports and the loopback address set); the load generator runs in the bench process on the same 2 cores.',
        'What a 250 means: ours answers after the blobs and the record are committed and fsync\'d (SQLite synchronous=FULL; Postgres fsync=on, synchronous_commit=on). MailDev 3.0.0 answers after it has written the .eml (no fsync) and parsed the message into its in-memory store. MailDev 2.2.1 answers when the last byte of DATA has arrived, before its parse and file write finish; it never fsyncs.',
        's3rver writes objects to its directory without fsync, so the Postgres + S3 row is durable for records only.',
        `Each cell runs ${cellMs} ms or ${maxMessages} messages, whichever ends first; MiB are of the raw messages acknowledged. ` +
            (rounds > 1 ? `${rounds} rounds of the alternation per profile and C, each in another order; a row gives the medians of a server's rounds (acked and listed add up), a ratio the median of the rounds' ratios.` : 'One round.'),
        'Reference servers (each in its own process, --refs; by default bare, floor and floor-obligations): "floor" (floor-server.ts) is the least a durable, indexed small message needs with our libraries: smtp-server, simpleParser on its one thread, group commit of one multi-row INSERT per table into SQLite (WAL, synchronous=FULL; the raw bytes in SQLite; a contentless trigram FTS5 row of the body), the 250 after the COMMIT; "floor without the index" leaves the FTS5 table out; "floor with our storage obligations" is the floor keeping, the same way, what the API\'s routes and earlier targets make a store keep for each message (the Message-ID\'s unique digest, the listing order and receivedAt indexes, the inbox summary and its trigger, seqs never reused, the raw message as a shared blob row with its link, the folded search text and a document of every searched field; floor-store.ts). "bare smtp-server" is smtp-server with our listener\'s options whose onData drains the message and answers 250 (nothing parsed or stored): the ceiling of SMTP handling plus the load generator here. "our listener, no store" is adapters/smtp in front of a core that only reads the message: the adapter\'s own cost. Their "listed after" is the count they answered.',
        pipelining ?
            'The load generator pipelined each envelope (--pipelining on: the RSET owed from the last message, MAIL, RCPT, DATA in one write; RFC 2920).' :
            'The load generator behaves like a real client (nodemailer): one message at a time per connection, each command sent only after the reply to the one before (no pipelining; --pipelining on sends the envelope in one write).',
        'CPU % is of one core over the cell (the server from /proc/<pid>/stat, all its threads; the load generator from process.cpuUsage() of the bench process); the two share the same 2 cores.'
    );
    if (!withPostgres) {
        notes.push('The Postgres + S3 configuration was skipped (--postgres off).');
    }

    tables.push(...sourceFigures.tables);
    checks.push(...sourceFigures.checks);
    notes.push(...sourceFigures.notes);
    return { tables, targets: checks, notes };
}

if (require.main === module) {
    runBench('SMTP ingest (ours vs MailDev 3.0.0 and 2.2.1)', 'smtp-ingest', bench, ['postgres', 'profiles', 'c', 'cell-ms', 'refs', 'pipelining', 'rounds', 'source']);
}
