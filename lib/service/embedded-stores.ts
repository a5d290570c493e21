import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import type { SelfServedBlobStore } from '../blob-store/blob-store';
import { createFsBlobStore } from '../blob-store/fs-blob-store';
import { PRIVATE_DIR_MODE } from '../util/node-fs';
import { loadOrCreateSigningSecret } from '../blob-store/signing-secret';
import { createSqliteBlobStore } from '../blob-store/sqlite-blob-store';
import { createTieredBlobStore } from '../blob-store/tiered-blob-store';
import { createKnexRecordStore } from '../record-store/knex-record-store';
import type { RecordStore } from '../record-store/record-store';
import { openSqliteKnex } from '../sqlite/knex';
import { openSqliteReader } from '../sqlite/reader';
import { BLOBS_DIRNAME, BLOBS_SQLITE_FILENAME, SQLITE_FILENAME } from '../defaults';


/** Where the embedded defaults keep their data. */
export interface EmbeddedStoresOptions {
    /** Directory for the SQLite file, the blobs and the generated signing secret; created if missing. */
    dataDir: string;
    /**
     * HMAC key for download links (e.g. INBOX_CAPTURE_SIGNING_SECRET, which the caller
     * reads); without it a secret is generated once and kept in the data dir.
     */
    signingSecret?: string | Buffer;
}

// Mail is private: the directory is for the service's own user only.
async function ensureDataDir(dataDir: string): Promise<string> {
    const dir = Path.resolve(dataDir);
    await Fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    return dir;
}

/** The embedded record store: SQLite at `<dataDir>/inbox-capture.sqlite` (not migrated yet). */
export async function openEmbeddedRecordStore(options: { dataDir: string }): Promise<RecordStore> {
    const dir = await ensureDataDir(options.dataDir);
    const filename = Path.join(dir, SQLITE_FILENAME);
    // Reads of one email go through a connection of their own (WAL), beside the writer's.
    return createKnexRecordStore({ knex: openSqliteKnex(filename), reader: openSqliteReader(filename), destroyKnexOnClose: true });
}

/**
 * The embedded blob store, with links signed with the given or the data dir's secret:
 * - small blobs an ingest stages go to the `blobs` table of `<dataDir>/inbox-capture.sqlite`,
 *   where the embedded record store commits them with their records (one transaction,
 *   one fsync; with another record store nothing is staged);
 * - other small blobs (put() directly, or records in Postgres) to `<dataDir>/blobs.sqlite`;
 * - larger ones as fsync'd files under `<dataDir>/blobs`.
 * Reads look in that order, so data dirs of earlier versions (blobs.sqlite and files,
 * or files only) are served as they are.
 */
export async function openEmbeddedBlobStore(options: EmbeddedStoresOptions): Promise<SelfServedBlobStore> {
    const dir = await ensureDataDir(options.dataDir);
    const signingSecret = options.signingSecret ?? await loadOrCreateSigningSecret(dir);
    const large = createFsBlobStore({ root: Path.join(dir, BLOBS_DIRNAME), signingSecret });
    const withRecords = createSqliteBlobStore({ filename: Path.join(dir, SQLITE_FILENAME), links: large, staging: true, createIfMissing: false });
    const small = createSqliteBlobStore({ filename: Path.join(dir, BLOBS_SQLITE_FILENAME), links: large, createIfMissing: false });
    return createTieredBlobStore({ small, large, withRecords });
}

/** The embedded default stores: SQLite at `<dataDir>/inbox-capture.sqlite` (records and small blobs), larger blobs under `<dataDir>/blobs`. */
export async function openEmbeddedStores(options: EmbeddedStoresOptions): Promise<{ recordStore: RecordStore; blobStore: SelfServedBlobStore }> {
    const blobStore = await openEmbeddedBlobStore(options);
    const recordStore = await openEmbeddedRecordStore(options);
    return { recordStore, blobStore };
}
