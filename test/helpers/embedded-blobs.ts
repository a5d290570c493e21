import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Sqlite3 from 'sqlite3';

/** Where the embedded default keeps one data dir's blobs, counted as they sit on disk. */
export interface EmbeddedBlobCount {
    /** Files under `blobs/` (not temporary ones, which start with a dot). */
    files: number;
    /** Rows of the `blobs` table of `inbox-capture.sqlite` (small blobs committed with the records). */
    withRecords: number;
    /** Rows of the `blobs` table of `blobs.sqlite` (small blobs put on their own). */
    separate: number;
}

/** Rows of the `blobs` table of a SQLite file, 0 when the file or the table is missing. */
async function blobRows(filename: string): Promise<number> {
    if (!await Fs.stat(filename).then(() => true, () => false)) {
        return 0;
    }

    const db = await new Promise<Sqlite3.Database>((resolve, reject) => {
        const opened = new Sqlite3.Database(filename, Sqlite3.OPEN_READONLY, (err) => (err ? reject(err) : resolve(opened)));
    });
    try {
        return await new Promise<number>((resolve) => {
            db.get<{ n: number }>('SELECT count(*) AS n FROM blobs', (err, row) => resolve(err ? 0 : row?.n ?? 0));
        });
    }
    finally {
        await new Promise((resolve) => db.close(resolve));
    }
}

/** The blobs of an embedded data dir, read from the files and databases themselves (not through a store). */
export async function countEmbeddedBlobs(dataDir: string): Promise<EmbeddedBlobCount> {
    let files = 0;
    for (const entry of await Fs.readdir(Path.join(dataDir, 'blobs'), { withFileTypes: true, recursive: true }).catch(() => [])) {
        if (entry.isFile() && !entry.name.startsWith('.')) {
            files++;
        }
    }

    return {
        files,
        withRecords: await blobRows(Path.join(dataDir, 'inbox-capture.sqlite')),
        separate: await blobRows(Path.join(dataDir, 'blobs.sqlite'))
    };
}
