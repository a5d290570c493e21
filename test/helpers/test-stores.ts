import * as Path from 'node:path';
import { createFsBlobStore } from '../../lib/blob-store/fs-blob-store';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import { createS3BlobStore } from '../../lib/blob-store/s3-blob-store';
import { openEmbeddedRecordStore } from '../../lib/service/embedded-stores';
import { createKnexRecordStore } from '../../lib/record-store/knex-record-store';
import { openPostgresKnex } from '../../lib/record-store/postgres/postgres-knex';
import type { RecordStore } from '../../lib/record-store/record-store';
import { startPostgres } from './postgres';
import { startS3 } from './s3';
import { removeDir, tempDir } from './temp-dir';

/** A fresh, empty pair of stores and how to remove what they left behind. */
export interface TestStores {
    recordStore: RecordStore;
    blobStore: BlobStore;
    /** Closes the stores and deletes their data. */
    cleanup(): Promise<void>;
    /**
     * Stores on the same data through connections of their own, as a second process
     * would open them (for "mail stored by another process" tests).
     */
    connectAgain(): Promise<{ recordStore: RecordStore; blobStore: BlobStore; close(): Promise<void> }>;
    /** The Postgres database the record store uses (Postgres backends only), for tests that inspect the server. */
    databaseUrl?: string;
}

/** Which record store a factory makes. */
export type RecordKind = 'sqlite' | 'postgres';
/** Which blob store a factory makes: `fs` links are served by the plugin, `s3` links are presigned URLs. */
export type BlobKind = 'fs' | 's3';

/** Makes fresh stores for one server: the API suite runs against any backend through one of these. */
export interface StoreFactory {
    /** Shown in suite titles, e.g. `sqlite+fs`. */
    name: string;
    records: RecordKind;
    blobs: BlobKind;
    create(): Promise<TestStores>;
    /**
     * Keeps the backend's shared servers (embedded PostgreSQL, s3rver) running until
     * the returned function is called, so that the many create() calls of one suite
     * do not start and stop them in between. Optional to call: create() starts what
     * it needs.
     */
    hold?(): Promise<() => Promise<void>>;
}

/** Signing secret of test fs stores (never a real one). */
export const TEST_SIGNING_SECRET = 'inbox-capture test signing secret';

/** SQLite file + filesystem blobs in a fresh temp dir, the embedded default backend. */
export function sqliteFsStores(options: { now?: () => number } = {}): StoreFactory {
    return {
        name: 'sqlite+fs',
        records: 'sqlite',
        blobs: 'fs',
        async create() {
            const dir = await tempDir('sqlite-fs');
            const recordStore = await openEmbeddedRecordStore({ dataDir: dir });
            const blobStore = createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: TEST_SIGNING_SECRET, now: options.now });
            return {
                recordStore,
                blobStore,
                async cleanup() {
                    await recordStore.close();
                    await removeDir(dir);
                },
                async connectAgain() {
                    const other = await openEmbeddedRecordStore({ dataDir: dir });
                    return {
                        recordStore: other,
                        blobStore: createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: TEST_SIGNING_SECRET }),
                        close: () => other.close()
                    };
                }
            };
        }
    };
}

/** A record store and how another process would open the same records. */
interface RecordSide {
    recordStore: RecordStore;
    databaseUrl?: string;
    /** Another record store on the same records, through connections of its own. */
    openAgain(): Promise<RecordStore>;
    cleanup(): Promise<void>;
}

/** A blob store and how another process would open the same blobs. */
interface BlobSide {
    blobStore: BlobStore;
    /** Another blob store on the same blobs, through a client of its own. */
    openAgain(): BlobStore;
    cleanup(): Promise<void>;
}

// SQLite in a fresh temp dir.
async function sqliteSide(): Promise<RecordSide> {
    const dir = await tempDir('sqlite');
    const recordStore = await openEmbeddedRecordStore({ dataDir: dir });
    return {
        recordStore,
        openAgain: () => openEmbeddedRecordStore({ dataDir: dir }),
        async cleanup() {
            await recordStore.close();
            await removeDir(dir);
        }
    };
}

// A fresh database on the shared embedded PostgreSQL (held until cleanup).
async function postgresSide(): Promise<RecordSide> {
    const server = await startPostgres();
    const open = () => createKnexRecordStore({ knex: openPostgresKnex(server.connectionString), destroyKnexOnClose: true });
    const recordStore = open();
    return {
        recordStore,
        databaseUrl: server.connectionString,
        // Migrated already by the first store's start(), which the caller has run.
        openAgain: async () => open(),
        async cleanup() {
            try {
                await recordStore.close();
            }
            finally {
                await server.stop();
            }
        }
    };
}

// Files in a fresh temp dir.
async function fsSide(now?: () => number): Promise<BlobSide> {
    const dir = await tempDir('fs');
    const root = Path.join(dir, 'blobs');
    return {
        blobStore: createFsBlobStore({ root, signingSecret: TEST_SIGNING_SECRET, now }),
        openAgain: () => createFsBlobStore({ root, signingSecret: TEST_SIGNING_SECRET }),
        cleanup: () => removeDir(dir)
    };
}

// A fresh bucket on the shared s3rver (held until cleanup); clients die with the fixture.
async function s3Side(): Promise<BlobSide> {
    const fixture = await startS3();
    return {
        blobStore: createS3BlobStore({ client: fixture.createClient(), bucket: fixture.bucket }),
        openAgain: () => createS3BlobStore({ client: fixture.createClient(), bucket: fixture.bucket }),
        cleanup: () => fixture.stop()
    };
}

// One backend from a record side and a blob side; a failure half-way releases what was made.
function combine(name: string, records: RecordKind, blobs: BlobKind, sides: { records(): Promise<RecordSide>; blobs(): Promise<BlobSide> }): StoreFactory {
    return {
        name,
        records,
        blobs,
        async create() {
            const recordSide = await sides.records();
            let blobSide: BlobSide;
            try {
                blobSide = await sides.blobs();
            }
            catch (err) {
                await recordSide.cleanup();
                throw err;
            }

            return {
                recordStore: recordSide.recordStore,
                blobStore: blobSide.blobStore,
                databaseUrl: recordSide.databaseUrl,
                async cleanup() {
                    try {
                        await recordSide.cleanup();
                    }
                    finally {
                        await blobSide.cleanup();
                    }
                },
                async connectAgain() {
                    const recordStore = await recordSide.openAgain();
                    return { recordStore, blobStore: blobSide.openAgain(), close: () => recordStore.close() };
                }
            };
        },
        async hold() {
            const postgres = records === 'postgres' ? await startPostgres() : null;
            let s3;
            try {
                s3 = blobs === 's3' ? await startS3() : null;
            }
            catch (err) {
                await postgres?.stop();
                throw err;
            }

            return async () => {
                await Promise.all([postgres?.stop(), s3?.stop()]);
            };
        }
    };
}

/** Postgres (a fresh database on the embedded server per create()) + filesystem blobs in a temp dir. */
export function postgresFsStores(options: { now?: () => number } = {}): StoreFactory {
    return combine('postgres+fs', 'postgres', 'fs', { records: postgresSide, blobs: () => fsSide(options.now) });
}

/** SQLite in a temp dir + S3 (a fresh bucket on the shared s3rver per create()). */
export function sqliteS3Stores(): StoreFactory {
    return combine('sqlite+s3', 'sqlite', 's3', { records: sqliteSide, blobs: s3Side });
}

/** Postgres + S3, the scale-out backend: a fresh database and a fresh bucket per create(). */
export function postgresS3Stores(): StoreFactory {
    return combine('postgres+s3', 'postgres', 's3', { records: postgresSide, blobs: s3Side });
}
