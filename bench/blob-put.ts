import { randomBytes } from 'node:crypto';
import * as Fs from 'node:fs/promises';
import * as Os from 'node:os';
import * as Path from 'node:path';
import type { BlobStore } from '../lib/blob-store/blob-store';
import { createFsBlobStore, type FsBlobStoreOptions } from '../lib/blob-store/fs-blob-store';
import { newBlobPrefix } from '../lib/identity/ids';
import { runBench, type BenchArgs } from './report';
import { fmt, summarize } from './stats';
import { tempDir } from '../test/helpers/temp-dir';

/** How long each cell runs, ms: short, so that A/B rounds alternate often on a noisy machine. */
const CELL_MS = 2000;
/** Puts per cell at most: bounds the disk a cell writes (100 KB blobs). */
const CELL_MAX_PUTS = 20_000;
/** Rounds of every cell; implementations alternate within a round, their order flips each round. */
const ROUNDS = 3;
/** Blob sizes measured, bytes: a 1 KB message and a 100 KB attachment. */
const SIZES = [1024, 100 * 1024];
/** Puts in flight: one alone, and as many as the busiest SMTP run has sessions. */
const IN_FLIGHT = [1, 16];

type CreateStore = (options: FsBlobStoreOptions) => BlobStore;

/** Latencies (ms) of puts of `size` bytes, `inFlight` at a time, for `ms` (at most `max` puts). */
async function putLoop(store: BlobStore, size: number, inFlight: number, ms: number, max: number): Promise<{ latencies: number[]; seconds: number; cpuMs: number; keys: string[] }> {
    const body = randomBytes(size);
    const latencies: number[] = [];
    const keys: string[] = [];
    const deadline = Date.now() + ms;
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    await Promise.all(Array.from({ length: inFlight }, async () => {
        while (keys.length < max && Date.now() < deadline) {
            // The keys ingest writes: a fresh prefix per message.
            const key = `${newBlobPrefix()}/raw.eml`;
            keys.push(key);
            const begin = process.hrtime.bigint();
            await store.put(key, body, 'message/rfc822');
            latencies.push(Number(process.hrtime.bigint() - begin) / 1e6);
        }
    }));
    const used = process.cpuUsage(cpu);
    return { latencies, seconds: Number(process.hrtime.bigint() - start) / 1e9, cpuMs: (used.user + used.system) / 1000, keys };
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    const ms = smoke ? 100 : Number(args.values['cell-ms'] ?? CELL_MS);
    const rounds = smoke ? 1 : Number(args.values.rounds ?? ROUNDS);
    const max = smoke ? 20 : CELL_MAX_PUTS;
    // `--sizes 1,100` (KiB) and `--in-flight 1,16`: a subset of the cells.
    const list = (value: unknown, fallback: number[]) => typeof value === 'string' ? value.split(',').map(Number) : fallback;
    const sizes = list(args.values.sizes, SIZES.map((b) => b / 1024)).map((kib) => kib * 1024);
    const inFlights = list(args.values['in-flight'], IN_FLIGHT);

    // `--compare <file.js>`: another build of fs-blob-store (e.g. the previous commit's), measured alternately.
    const implementations: Array<{ name: string; create: CreateStore }> = [{ name: 'lib/blob-store/fs-blob-store', create: createFsBlobStore }];
    const compare = args.values.compare;
    if (typeof compare === 'string') {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const other = require(Path.resolve(compare)) as { createFsBlobStore: CreateStore };
        implementations.push({ name: compare, create: other.createFsBlobStore });
    }

    const dataDir = await tempDir('bench-blob-put');
    const samples = new Map<string, { latencies: number[]; puts: number; seconds: number; cpuMs: number }>();
    try {
        const stores = implementations.map((impl, i) => impl.create({ root: Path.join(dataDir, `store-${i}`), signingSecret: randomBytes(32) }));
        // Warm-up: JIT, and the directories each store makes once.
        for (const store of stores) {
            await putLoop(store, 1024, 4, smoke ? 20 : 300, 200);
        }

        for (let round = 0; round < rounds; round++) {
            for (const size of sizes) {
                for (const inFlight of inFlights) {
                    const order = implementations.map((_, i) => i);
                    if (round % 2 === 1) {
                        order.reverse();
                    }

                    for (const i of order) {
                        const run = await putLoop(stores[i], size, inFlight, ms, max);
                        const cell = `${i}|${size}|${inFlight}`;
                        const sample = samples.get(cell) ?? { latencies: [], puts: 0, seconds: 0, cpuMs: 0 };
                        sample.latencies.push(...run.latencies);
                        sample.puts += run.latencies.length;
                        sample.seconds += run.seconds;
                        sample.cpuMs += run.cpuMs;
                        samples.set(cell, sample);
                        // Removed between cells (not timed), so every cell starts from the same disk state.
                        await stores[i].delete(run.keys);
                    }
                }
            }
        }
    }
    finally {
        await Fs.rm(dataDir, { recursive: true, force: true });
    }

    const rows: string[][] = [];
    for (const size of sizes) {
        for (const inFlight of inFlights) {
            implementations.forEach((impl, i) => {
                const sample = samples.get(`${i}|${size}|${inFlight}`)!;
                const s = summarize(sample.latencies);
                rows.push([impl.name, `${size / 1024} KiB`, String(inFlight), String(sample.puts), fmt(sample.puts / sample.seconds), fmt(s.mean), fmt(s.p50), fmt(s.p99), fmt(sample.cpuMs / sample.puts)]);
            });
        }
    }

    return {
        tables: [{
            title: 'FsBlobStore.put(): durable puts of a Buffer, fresh key `<24 hex>/raw.eml` each',
            columns: ['implementation', 'blob size', 'in flight', 'puts', 'puts/s', 'mean ms', 'p50 ms', 'p99 ms', 'process CPU ms per put'],
            rows
        }],
        targets: [],
        notes: [
            `${rounds} rounds of ${ms} ms per cell (at most ${max} puts); implementations alternate, their order flips each round.`,
            'Process CPU = user + system time of this process (its thread pool included) over the cell ÷ puts; the kernel\'s own journal threads are not in it.',
            `UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? '(default, 4)'}; the data dir is under ${Os.tmpdir()}.`
        ]
    };
}

if (require.main === module) {
    runBench('Blob store put (filesystem)', 'blob-put', bench, ['cell-ms', 'rounds', 'compare', 'sizes', 'in-flight']);
}
