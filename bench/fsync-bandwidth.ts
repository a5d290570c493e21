import { randomBytes } from 'node:crypto';
import * as Fs from 'node:fs/promises';
import * as Os from 'node:os';
import * as Path from 'node:path';
import { runBench, type Table } from './report';
import { fmt, summarize } from './stats';

/** Size of one big file, bytes: 1 MiB, the size of the largest profile. */
const BIG_FILE_BYTES = 2 ** 20;
/** Size of one small file, bytes: a 1 KB message. */
const SMALL_FILE_BYTES = 1024;
/** Parallel writers in the parallel run: the largest parallelism two cores make useful. */
const PARALLEL_WRITERS = 4;

/** What this disk does with durable writes. */
export interface FsyncFigures {
    /** MiB/s writing 1 MiB files one at a time, each fsync'd before the next. */
    sequentialMBps: number;
    /** MiB/s with 4 writers doing the same at once. */
    parallelMBps: number;
    /** The better of the two: what this disk's fsync'd bandwidth is taken to be. */
    bestMBps: number;
    /** Open + write 1 KiB + fsync + close, ms. */
    smallFileP50Ms: number;
    smallFileMeanMs: number;
    smallFileP99Ms: number;
}

/** Writes `file` with `data` and fsyncs it, as a durable blob write does. */
async function writeSynced(file: string, data: Buffer): Promise<void> {
    const handle = await Fs.open(file, 'wx', 0o600);
    try {
        await handle.writeFile(data);
        await handle.sync();
    }
    finally {
        await handle.close();
    }
}

/** Bandwidth of `writers` loops writing fsync'd 1 MiB files for `ms` (at most `maxFiles` each). */
async function bandwidth(dir: string, writers: number, ms: number, maxFiles: number): Promise<number> {
    const data = randomBytes(BIG_FILE_BYTES);
    let written = 0;
    const deadline = Date.now() + ms;
    const start = process.hrtime.bigint();
    await Promise.all(Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < maxFiles && Date.now() < deadline; i++) {
            const file = Path.join(dir, `big-${w}-${i}`);
            await writeSynced(file, data);
            written += data.length;
            await Fs.unlink(file);
        }
    }));
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    return written / 2 ** 20 / seconds;
}

/**
 * Measures fsync'd write bandwidth (1 MiB files) and small-file latency in `dir`
 * (the data dir's filesystem): what "every 250 durable" can cost at best.
 */
export async function measureFsync(dir: string, smoke: boolean): Promise<FsyncFigures> {
    const work = await Fs.mkdtemp(Path.join(dir, 'fsync-'));
    try {
        const ms = smoke ? 300 : 3000;
        const maxFiles = smoke ? 20 : 2000;
        const sequentialMBps = await bandwidth(work, 1, ms, maxFiles);
        const parallelMBps = await bandwidth(work, PARALLEL_WRITERS, ms, maxFiles);

        const small = randomBytes(SMALL_FILE_BYTES);
        const latencies: number[] = [];
        const deadline = Date.now() + ms;
        for (let i = 0; i < maxFiles && Date.now() < deadline; i++) {
            const file = Path.join(work, `small-${i}`);
            const start = process.hrtime.bigint();
            await writeSynced(file, small);
            latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
            await Fs.unlink(file);
        }

        const s = summarize(latencies);
        return {
            sequentialMBps,
            parallelMBps,
            bestMBps: Math.max(sequentialMBps, parallelMBps),
            smallFileP50Ms: s.p50,
            smallFileMeanMs: s.mean,
            smallFileP99Ms: s.p99
        };
    }
    finally {
        await Fs.rm(work, { recursive: true, force: true });
    }
}

/** The figures as a table. */
export function fsyncTable(figures: FsyncFigures, where: string): Table {
    return {
        title: `fsync'd writes in ${where}`,
        columns: ['1 MiB files, 1 writer MiB/s', `1 MiB files, ${PARALLEL_WRITERS} writers MiB/s`, '1 KiB file write+fsync p50 ms', 'mean ms', 'p99 ms'],
        rows: [[fmt(figures.sequentialMBps), fmt(figures.parallelMBps), fmt(figures.smallFileP50Ms), fmt(figures.smallFileMeanMs), fmt(figures.smallFileP99Ms)]]
    };
}

if (require.main === module) {
    runBench('fsync bandwidth', 'fsync-bandwidth', async (args) => {
        const dir = (args.values.dir as string | undefined) ?? Os.tmpdir();
        const figures = await measureFsync(dir, args.smoke);
        return { tables: [fsyncTable(figures, dir)], targets: [], notes: ['The data dirs of every benchmark are made under the same directory (os.tmpdir()).'] };
    }, ['dir']);
}
