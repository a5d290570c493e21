/**
 * The record store's share of an ingest, alone: the saves `ingestRawEmail` makes (drafts
 * and staged raw blobs, recorded once from real ingests) replayed, alternating, on
 * - `ours`: a fresh embedded record store, `--in-flight` saves at a time;
 * - `writer-loop`: the SQLite batch writer alone on this event loop (as the store runs it),
 *   one batch of `--batch` deliveries (default: `--in-flight`) at a time;
 * - `floor`: floor-store.ts's save of the same messages, parsed beforehand;
 * - `writer-loop/<part>` with `--ablate <part>,…`: the loop's writer with a part left out (ABLATIONS).
 * Prints msg/s, CPU per message (the whole process, every thread; `--threads`: each
 * thread's) and deliveries per commit.
 *
 *   node dist-bench/bench/store-loop.js [--profile text-1k] [--messages 6000] [--in-flight 16] [--batch N] [--rounds 3] [--only ours,floor] [--ablate no-index,…]
 */

import * as Fs from 'node:fs';
import { parseArgs } from 'node:util';
import { simpleParser } from 'mailparser';
import * as Path from 'node:path';
import { openEmbeddedStores } from '../lib/service/embedded-stores';
import { createKnexRecordStore } from '../lib/record-store/knex-record-store';
import { openSqliteKnex } from '../lib/sqlite/knex';
import { openSqliteReader } from '../lib/sqlite/reader';
import { SQLITE_FILENAME } from '../lib/defaults';
import { createInboxCapture } from '../lib/service/inbox-capture';
import type { RecordStore } from '../lib/record-store/record-store';
import type { StagedBlob } from '../lib/blob-store/blob-store';
import type { EmailDraft } from '../lib/types';
import { openSqliteBatchWriter } from '../lib/record-store/sqlite/sqlite-batch-writer';
import { openFloorStore } from './floor-store';
import { profiles, recipientOf, type ProfileName } from './profiles';
import { tempDir } from '../test/helpers/temp-dir';

type SaveArgs = Parameters<RecordStore['saveEmails']>;

interface Measured {
    rate: number;
    cpuUsPerMessage: number;
    mainUsPerMessage: number;
    perCommit: number;
}

/** Clock ticks per second of /proc's times (100 on every usual Linux). */
const TICKS_PER_SECOND = 100;

/** CPU of each thread of this process so far, µs, by thread id (the main thread's is the process id). */
function threadUs(): Map<string, number> {
    const threads = new Map<string, number>();
    for (const tid of Fs.readdirSync('/proc/self/task')) {
        try {
            const stat = Fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
            const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
            threads.set(tid, (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND * 1e6);
        }
        catch {
            // The thread ended between the listing and the read.
        }
    }

    return threads;
}

/** Set by --threads: each loop prints its threads' CPU per message, busiest first. */
let printThreads = false;

/** Runs `work(i)` for i < count, `inFlight` at a time; msg/s and CPU per message of the whole process. */
async function loop(count: number, inFlight: number, work: (i: number) => Promise<unknown>): Promise<Omit<Measured, 'perCommit'>> {
    let next = 0;
    const cpu0 = process.cpuUsage();
    const threads0 = threadUs();
    const start = process.hrtime.bigint();
    await Promise.all(Array.from({ length: inFlight }, async () => {
        while (next < count) {
            await work(next++);
        }
    }));
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    const used = [...threadUs()].map(([tid, us]) => [tid, (us - (threads0.get(tid) ?? 0)) / count] as const).sort((a, b) => b[1] - a[1]);
    if (printThreads) {
        console.log(`  threads µs/msg: ${used.filter(([, us]) => us >= 1).map(([tid, us]) => `${tid === String(process.pid) ? 'main' : tid} ${us.toFixed(0)}`).join(', ')}`);
    }

    return { rate: count / seconds, cpuUsPerMessage: (cpu.user + cpu.system) / count, mainUsPerMessage: used.find(([tid]) => tid === String(process.pid))?.[1] ?? NaN };
}

// The saves of `count` real ingests of `profile`, recorded on a store that keeps them.
export async function recordSaves(profile: ProfileName, count: number): Promise<SaveArgs[]> {
    const dir = await tempDir('store-loop-record');
    const stores = await openEmbeddedStores({ dataDir: dir });
    const saves: SaveArgs[] = [];
    const recording = new Proxy(stores.recordStore, {
        get(target, property, receiver) {
            const value = Reflect.get(target, property, receiver) as unknown;
            if (property === 'saveEmails') {
                return (...args: SaveArgs) => {
                    saves.push(args);
                    return (value as RecordStore['saveEmails']).apply(target, args);
                };
            }

            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        }
    });
    const capture = createInboxCapture({ recordStore: recording, blobStore: stores.blobStore });
    await capture.start();
    try {
        const make = profiles()[profile];
        await loop(count, 16, (i) => capture.ingestRawEmail(make.message(i, recipientOf('store-loop', i), 'store-loop')));
    }
    finally {
        await capture.close();
        await Fs.promises.rm(dir, { recursive: true, force: true });
    }

    return saves;
}

// The recorded saves on a fresh embedded record store (migrated), each blob staged again for its file.
async function ours(saves: SaveArgs[], inFlight: number): Promise<Measured> {
    const dir = await tempDir('store-loop-ours');
    const filename = Path.join(dir, SQLITE_FILENAME);
    let commits = 0;
    const store = createKnexRecordStore({
        knex: openSqliteKnex(filename),
        reader: openSqliteReader(filename),
        destroyKnexOnClose: true,
        observeBatchWriter: { commit: () => void commits++ }
    });
    try {
        await store.migrate();
        const target = store.stagedBlobTarget!;
        const restaged = (prefix: string) => saves.map(([drafts, options]): SaveArgs => [drafts.map((d) => ({ ...d, sourceId: `${prefix}${d.sourceId}` })), options && {
            ...options,
            blobs: options.blobs?.map((b): StagedBlob => ({ ...b, key: `${prefix}${b.key}`, target }))
        }]);
        // Warm-up on other ids: JIT and the page cache.
        const warm = restaged('warm-');
        await loop(Math.min(500, saves.length), inFlight, (i) => store.saveEmails(...warm[i]!));
        const measuredSaves = restaged('');
        const before = commits;
        const measured = await loop(saves.length, inFlight, (i) => store.saveEmails(...measuredSaves[i]!));
        return { ...measured, perCommit: saves.length / (commits - before) };
    }
    finally {
        await store.close();
        await Fs.promises.rm(dir, { recursive: true, force: true });
    }
}

/**
 * What a writer row can leave out, to see what each part of a save costs: the search index
 * (table and trigger dropped: the writer then writes no documents), the inbox summary's
 * trigger, the staged raw blobs (not passed), FTS5's automerge at other values than the
 * migration's 8. Not a store anyone runs: measurement only.
 */
const ABLATIONS = {
    'no-index': ['DROP TRIGGER email_search_on_delete', 'DROP TABLE email_search'],
    'no-inbox-trigger': ['DROP TRIGGER inboxes_on_insert'],
    'no-staged-blobs': [],
    'automerge-4': ['INSERT INTO email_search (email_search, rank) VALUES (\'automerge\', 4)'],
    'automerge-16': ['INSERT INTO email_search (email_search, rank) VALUES (\'automerge\', 16)']
} satisfies Record<string, string[]>;
type Ablation = keyof typeof ABLATIONS;

// The batch writer alone (no batcher, no store around it) on a fresh migrated file: the
// recorded saves in batches of `batch` deliveries, one batch at a time, as group commit
// makes them when `batch` saves wait for a commit.
async function writer(saves: SaveArgs[], batch: number, ablation?: Ablation): Promise<Measured> {
    const dir = await tempDir('store-loop-writer');
    const filename = Path.join(dir, SQLITE_FILENAME);
    const knex = openSqliteKnex(filename);
    const store = createKnexRecordStore({ knex, destroyKnexOnClose: true });
    await store.migrate();
    for (const sql of ablation ? ABLATIONS[ablation] : []) {
        await knex.raw(sql);
    }

    await store.close();
    const open = openSqliteBatchWriter(filename);
    try {
        const batches: Array<[EmailDraft[][], StagedBlob[]]> = [];
        for (let i = 0; i < saves.length; i += batch) {
            const chunk = saves.slice(i, i + batch);
            const blobs = ablation === 'no-staged-blobs' ? [] : chunk.flatMap(([, options]) => (options?.blobs ?? []).map((b) => ({ ...b, target: filename })));
            batches.push([chunk.map(([drafts]) => drafts), blobs]);
        }

        const warm = batches[0]!;
        await open.save(warm[0].map((drafts) => drafts.map((d) => ({ ...d, sourceId: `warm-${d.sourceId}` }))), []);
        const measured = await loop(batches.length, 1, (i) => open.save(...batches[i]!));
        // loop() counted batches: per message.
        const factor = saves.length / batches.length;
        return { rate: measured.rate * factor, cpuUsPerMessage: measured.cpuUsPerMessage / factor, mainUsPerMessage: measured.mainUsPerMessage / factor, perCommit: factor };
    }
    finally {
        await open.close();
        await Fs.promises.rm(dir, { recursive: true, force: true });
    }
}

// The floor's store on the same messages, parsed beforehand: its save alone.
async function floor(profile: ProfileName, count: number, inFlight: number): Promise<Measured> {
    const dir = await tempDir('store-loop-floor');
    const store = await openFloorStore(`${dir}/floor.sqlite`);
    try {
        const make = profiles()[profile];
        const parsed = await Promise.all(Array.from({ length: count + 500 }, async (_, i) => {
            const raw = make.message(i, recipientOf('store-loop', i), 'store-loop');
            return { raw, parsed: await simpleParser(raw), recipient: recipientOf('store-loop', i) };
        }));
        await loop(500, inFlight, (i) => store.saveParsed(parsed[count + i]!.raw, parsed[count + i]!.parsed, parsed[count + i]!.recipient));
        const commits0 = store.commits;
        const measured = await loop(count, inFlight, (i) => store.saveParsed(parsed[i]!.raw, parsed[i]!.parsed, parsed[i]!.recipient));
        return { ...measured, perCommit: count / (store.commits - commits0) };
    }
    finally {
        await store.close();
        await Fs.promises.rm(dir, { recursive: true, force: true });
    }
}

async function main(): Promise<void> {
    const { values } = parseArgs({
        options: {
            profile: { type: 'string', default: 'text-1k' },
            messages: { type: 'string', default: '6000' },
            'in-flight': { type: 'string', default: '16' },
            batch: { type: 'string' },
            ablate: { type: 'string' },
            rounds: { type: 'string', default: '3' },
            only: { type: 'string' },
            threads: { type: 'boolean', default: false }
        }
    });
    const profile = values.profile as ProfileName;
    const count = Number(values.messages);
    const inFlight = Number(values['in-flight']);
    printThreads = values.threads;
    // Deliveries per writer batch: as many as ours commits at once with this many in flight (all of them, when they all wait).
    const batch = Number(values.batch ?? inFlight);
    const ablations = (values.ablate?.split(',') ?? []).map((a) => {
        if (!(a in ABLATIONS)) {
            throw new Error(`--ablate: one of ${Object.keys(ABLATIONS).join(', ')}, not ${a}`);
        }

        return a as Ablation;
    });
    const saves = await recordSaves(profile, count);
    console.log(`${profile}, ${count} saves, ${inFlight} in flight; CPU = whole process, every thread`);
    console.log('round\tstore\tmsg/s\tCPU µs/msg\tmain thread µs/msg\tmsg/commit');
    for (let round = 1; round <= Number(values.rounds); round++) {
        for (const [name, run] of [
            ['ours', () => ours(saves, inFlight)],
            ['writer-loop', () => writer(saves, batch)],
            ['floor', () => floor(profile, count, inFlight)],
            ...ablations.map((a) => [`writer-loop/${a}`, () => writer(saves, batch, a)] as const)
        ] as const) {
            if (values.only !== undefined && !values.only.split(',').includes(name)) {
                continue;
            }

            const m = await run();
            console.log(`${round}\t${name}\t${m.rate.toFixed(0)}\t${m.cpuUsPerMessage.toFixed(0)}\t${m.mainUsPerMessage.toFixed(0)}\t${m.perCommit.toFixed(1)}`);
        }
    }
}

if (require.main === module) {
    main().catch((err: unknown) => {
        console.error(err);
        process.exit(1);
    });
}
