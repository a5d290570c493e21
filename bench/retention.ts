import { createFsBlobStore } from '../lib/blob-store/fs-blob-store';
import { openEmbeddedStores } from '../lib/service/embedded-stores';
import { createInboxCapture, type InboxCapture } from '../lib/service/inbox-capture';
import { createKnexRecordStore } from '../lib/record-store/knex-record-store';
import { tempDir } from '../test/helpers/temp-dir';
import { profiles, recipientOf } from './profiles';
import { runBench, type BenchArgs, type Table, type TargetCheck } from './report';
import { seededBackends, type SeededBackend } from './seeded-backends';
import { BIG_INBOX, seedRecord, seedRecords, SEED_SHAPE } from './seed-records';
import { fmt, summarize, wallMs } from './stats';

/** Stored emails before the sweep (the issue: 1,000,000). */
const ROWS = 1_000_000;
/** Share of them the sweep deletes (the issue: 90 %). */
const DELETED_SHARE = 0.9;
/** Ingest callers in flight during the measurement, as 16 SMTP sessions would be. */
const INGEST_IN_FLIGHT = 16;
/** The window measured before the sweep, ms. */
const BEFORE_MS = 15_000;
/**
 * Longest window measured under load once the sweep started, ms: past it ingest and
 * listing stop and the sweep finishes alone (a run stays within the 15 minutes a bench may take).
 */
const DURING_MS = 120_000;
/** The maximum age of the pass (any: `now` is placed so that it cuts at the 90 % row). */
const MAX_AGE_MS = 7 * 86_400_000;

/** What one window measured. */
interface Window {
    label: string;
    seconds: number;
    ingested: number;
    listMs: number[];
    /** Longest time between two stored messages (or from the window's start to the first), ms: a stall shows here. */
    longestGapMs: number;
}

/**
 * Runs ingest (INGEST_IN_FLIGHT callers) and listing (one caller, the big inbox's first
 * page, back to back) until `until` settles; returns what each did meanwhile.
 */
async function measure(capture: InboxCapture, label: string, until: Promise<unknown>, seqStart: number): Promise<Window> {
    const message = profiles()['text-1k'];
    let done = false;
    let seq = seqStart;
    let ingested = 0;
    let lastStored = wallMs();
    let longestGapMs = 0;
    const listMs: number[] = [];
    const settled = until.finally(() => {
        done = true;
    });
    const start = wallMs();
    const ingestLoop = async () => {
        while (!done) {
            const n = seq++;
            await capture.ingestRawEmail(message.message(n, recipientOf('retention', n), 'retention'));
            ++ingested;
            const t = wallMs();
            longestGapMs = Math.max(longestGapMs, t - lastStored);
            lastStored = t;
        }
    };
    const listLoop = async () => {
        while (!done) {
            const t = wallMs();
            await capture.listEmails({ inbox: BIG_INBOX, limit: 50 });
            listMs.push(wallMs() - t);
        }
    };

    await Promise.all([settled, listLoop(), ...Array.from({ length: INGEST_IN_FLIGHT }, ingestLoop)]);
    return { label, seconds: (wallMs() - start) / 1000, ingested, listMs, longestGapMs };
}

/** The service on a seeded backend, as the standalone opens it (SQLite: embedded stores; Postgres: files beside). */
async function openCapture(backend: SeededBackend): Promise<{ capture: InboxCapture; cleanup(): Promise<void> }> {
    if (backend.dataDir) {
        const capture = createInboxCapture(await openEmbeddedStores({ dataDir: backend.dataDir }));
        return { capture, cleanup: () => capture.close() };
    }

    const blobDir = await tempDir('bench-retention-blobs');
    const capture = createInboxCapture({
        recordStore: createKnexRecordStore({ knex: backend.open(), destroyKnexOnClose: true }),
        blobStore: createFsBlobStore({ root: blobDir, signingSecret: 'bench signing secret, not secret' })
    });
    return { capture, cleanup: () => capture.close() };
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    // A smoke run: 500 rows still make a sweep of 18 batches under load.
    const rows = smoke ? 500 : Number(args.values.rows ?? ROWS);
    const beforeMs = smoke ? 500 : BEFORE_MS;
    const duringMs = smoke ? Infinity : Number(args.values['during-ms'] ?? DURING_MS);
    const only = (args.values.backends as string | undefined)?.split(',') ?? ['sqlite'];
    const tables: Table[] = [];
    const checks: TargetCheck[] = [];
    const notes: string[] = [];
    // Rows below this index are older than the cutoff: seedRecord() gives SEED_SHAPE.rowsPerSecond rows each second.
    const cutRow = Math.floor(rows * DELETED_SHARE / SEED_SHAPE.rowsPerSecond) * SEED_SHAPE.rowsPerSecond;
    const now = seedRecord(cutRow).receivedAt + MAX_AGE_MS;

    for (const make of seededBackends(only)) {
        const backend = await make();
        try {
            const knex = backend.open();
            const seedStart = wallMs();
            try {
                await seedRecords(createKnexRecordStore({ knex }), knex, rows, (n) => {
                    if (n % 100_000 < 8000 || n === rows) {
                        console.error(`${backend.name}: seeded ${n} rows`);
                    }
                });
            }
            finally {
                await knex.destroy();
            }

            notes.push(`${backend.name}: seeded ${rows.toLocaleString('en-US')} rows in ${((wallMs() - seedStart) / 1000).toFixed(0)} s.`);
            const { capture, cleanup } = await openCapture(backend);
            try {
                await capture.start();
                const before = await measure(capture, 'before the sweep', new Promise((resolve) => setTimeout(resolve, beforeMs)), 0);
                console.error(`${backend.name}: before: ${(before.ingested / before.seconds).toFixed(0)} msg/s`);
                let deleted = 0;
                let batches = 0;
                const sweepStart = wallMs();
                const sweep = capture.pruneEmails({ maxAgeMs: MAX_AGE_MS }, { now }).then((n) => {
                    deleted = n;
                });
                // Deleted so far, read from the summary (the pass reports only at its end).
                const remaining = async () => (await capture.listInboxes({ limit: 100_000 })).inboxes.reduce((sum, i) => sum + i.count, 0);
                const window = duringMs === Infinity ? sweep : Promise.race([sweep, new Promise((resolve) => setTimeout(resolve, duringMs).unref())]);
                const during = await measure(capture, 'during the sweep', window, 1_000_000);
                const storedAfterWindow = await remaining();
                await sweep;
                const sweepSeconds = (wallMs() - sweepStart) / 1000;
                const deletedUnderLoad = Math.min(deleted, rows + during.ingested + before.ingested - storedAfterWindow);
                batches = Math.ceil(deleted / 25);
                console.error(`${backend.name}: sweep deleted ${deleted} in ${sweepSeconds.toFixed(1)} s`);
                if (deleted !== cutRow) {
                    throw new Error(`the sweep deleted ${deleted} emails, expected ${cutRow}`);
                }

                tables.push({
                    title: `Retention sweep on ${backend.name}: ${rows.toLocaleString('en-US')} stored emails, ${deleted.toLocaleString('en-US')} older than the maximum age; ${INGEST_IN_FLIGHT} ingests in flight (text-1k) and one list caller throughout`,
                    columns: ['window', 'seconds', 'ingest msg/s', 'longest gap between two stored messages, ms', 'list p50 ms', 'list p99 ms', 'list max ms', 'lists'],
                    rows: [before, during].map((w) => {
                        const s = summarize(w.listMs);
                        return [w.label, fmt(w.seconds), (w.ingested / w.seconds).toFixed(0), fmt(w.longestGapMs), fmt(s.p50), fmt(s.p99), fmt(s.max), String(w.listMs.length)];
                    })
                });
                tables.push({
                    title: `The sweep on ${backend.name}`,
                    columns: ['deleted', 'batches of 25', 'whole pass, s', 'deleted under load', 'rate under load, emails/s', 'rate alone afterwards, emails/s'],
                    rows: [[
                        deleted.toLocaleString('en-US'),
                        batches.toLocaleString('en-US'),
                        fmt(sweepSeconds),
                        deletedUnderLoad.toLocaleString('en-US'),
                        (deletedUnderLoad / during.seconds).toFixed(0),
                        sweepSeconds - during.seconds > 1 ? ((deleted - deletedUnderLoad) / (sweepSeconds - during.seconds)).toFixed(0) : ''
                    ]]
                });
                const ratio = (during.ingested / during.seconds) / (before.ingested / before.seconds);
                checks.push({
                    target: `${backend.name}: the sweep does not stall ingest (no second without a stored message)`,
                    measured: `longest gap ${fmt(during.longestGapMs)} ms; ${(ratio * 100).toFixed(0)} % of the msg/s before`,
                    met: smoke ? null : during.longestGapMs < 1000
                });
                const listRatio = summarize(during.listMs).p99 / summarize(before.listMs).p99;
                checks.push({
                    target: `${backend.name}: the sweep does not stall listing (list p99 at most twice the p99 before)`,
                    measured: `${(listRatio * 100).toFixed(0)} % of the p99 before`,
                    met: smoke ? null : listRatio <= 2
                });
            }
            finally {
                await cleanup();
            }
        }
        finally {
            await backend.cleanup();
        }
    }

    notes.push(
        `Ingest and listing run for the first ${duringMs === Infinity ? 'whole' : `${duringMs / 1000} s of the`} sweep; the sweep then finishes alone (its rate alone is the last column).`,
        'The sweep is one pruneEmails() pass with a maximum age that cuts at 90 % of the seeded rows (the oldest), as the periodic sweep would run it: batches of 25, each a transaction that selects through emails_received_at and deletes the rows (the inbox summary triggers follow), then the batch\'s blobs.',
        'The seeded rows name blobs that were never written (seed-records.ts writes rows only), so the blob deletes find nothing: the figure is the records\' side plus the blob store\'s lookups.',
        'Ingest: capture.ingestRawEmail() of text-1k messages (parse, blobs, group commit) by 16 callers; listing: the first page (50) of the inbox holding a tenth of the rows, one call after another.'
    );
    return { tables, targets: checks, notes };
}

if (require.main === module) {
    runBench('Retention: a sweep deleting 90 % of 1,000,000 emails under ingest and listing', 'retention', bench, ['rows', 'backends', 'during-ms']);
}
