import * as Hapi from '@hapi/hapi';
import * as Fs from 'node:fs/promises';
import * as Os from 'node:os';
import * as Path from 'node:path';
import { plugin, type InboxCapturePluginApi, type InboxCapturePluginOptions } from '../../adapters/hapi';
import { createFsBlobStore } from '../../lib/blob-store/fs-blob-store';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import { createS3BlobStore } from '../../lib/blob-store/s3-blob-store';
import { openEmbeddedRecordStore } from '../../lib/embedded-stores';
import { createKnexRecordStore } from '../../lib/record-store/knex-record-store';
import { openPostgresKnex } from '../../lib/record-store/postgres-knex';
import type { RecordStore } from '../../lib/record-store/record-store';
import { startPostgres } from './postgres';
import { startS3 } from './s3';

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

/** A fresh temp directory under the OS temp dir. */
export function tempDir(label = 'hapi'): Promise<string> {
    return Fs.mkdtemp(Path.join(Os.tmpdir(), `inbox-capture-${label}-`));
}

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
                    await Fs.rm(dir, { recursive: true, force: true });
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
            await Fs.rm(dir, { recursive: true, force: true });
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
        cleanup: () => Fs.rm(dir, { recursive: true, force: true })
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

/** How to build a test server. */
export interface ProvisionOptions {
    /** Backend (default SQLite + fs in a temp dir). */
    stores?: StoreFactory;
    /** Ready stores instead of a factory (the caller cleans them up). */
    recordStore?: RecordStore;
    blobStore?: BlobStore;
    /** Plugin options besides the stores. */
    plugin?: Omit<InboxCapturePluginOptions, 'recordStore' | 'blobStore' | 'capture'>;
    /** hapi `routes.prefix` of the registration. */
    prefix?: string;
    /** Hapi server options (default: loopback, port 0, no debug printing). */
    server?: Hapi.ServerOptions;
    /** Start a listening server (for tests with real sockets) instead of only initializing. */
    listen?: boolean;
}

/** A server with the plugin and a valid API key. */
export interface ProvisionedServer {
    server: Hapi.Server;
    stores: TestStores;
    api: InboxCapturePluginApi;
    apiKey: string;
    /** `{ authorization: 'Bearer <apiKey>' }`. */
    auth: { authorization: string };
    /** Stops the server and removes the stores' data. */
    cleanup(): Promise<void>;
}

/** A fresh Hapi server with the plugin on fresh stores, and a created API key. */
export async function provisionServer(options: ProvisionOptions = {}): Promise<ProvisionedServer> {
    const server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false, ...options.server });
    let stores: TestStores | undefined;
    if (options.recordStore && options.blobStore) {
        const { recordStore, blobStore } = options;
        stores = {
            recordStore,
            blobStore,
            cleanup: async () => undefined,
            connectAgain: async () => ({ recordStore, blobStore, close: async () => undefined })
        };
    }
    else {
        stores = await (options.stores ?? sqliteFsStores()).create();
    }

    try {
        await server.register(
            { plugin, options: { ...options.plugin, recordStore: stores.recordStore, blobStore: stores.blobStore } },
            options.prefix ? { routes: { prefix: options.prefix } } : {}
        );
        if (options.listen) {
            await server.start();
        }
        else {
            await server.initialize();
        }
    }
    catch (err) {
        await stores.cleanup();
        throw err;
    }

    const api = server.plugins['inbox-capture'];
    const apiKey = await api.capture.createKey(`test-${Date.now()}-${Math.random()}`);
    return {
        server,
        stores,
        api,
        apiKey,
        auth: { authorization: `Bearer ${apiKey}` },
        async cleanup() {
            await server.stop();
            await stores.cleanup();
        }
    };
}

/** A followed download: status, headers and the exact body bytes. */
export interface Download {
    statusCode: number;
    headers: Record<string, string>;
    body: Buffer;
}

/**
 * Follows a download redirect: into the server for a link it serves itself (a path),
 * over HTTP for object storage (an absolute URL, which must point at loopback: the
 * tests' s3rver). No API key is sent either way.
 */
export async function followDownload(server: Hapi.Server, location: string): Promise<Download> {
    if (location.startsWith('/')) {
        const res = await server.inject({ method: 'GET', url: location });
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
            headers[name] = String(value);
        }

        return { statusCode: res.statusCode, headers, body: res.rawPayload };
    }

    const url = new URL(location);
    if (url.hostname !== '127.0.0.1' || url.protocol !== 'http:') {
        throw new Error(`Refusing to follow a download link off loopback: ${url.origin}`);
    }

    const res = await fetch(url, { redirect: 'manual' });
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => {
        headers[name] = value;
    });
    return { statusCode: res.status, headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** What a download link itself promises, whichever store made it. */
export interface LinkTerms {
    /** `server`: a path the plugin serves (fs store); `presigned`: an absolute object-storage URL. */
    kind: 'server' | 'presigned';
    /** Unix seconds after which the link stops working. */
    expiresAt: number;
    /** The lifetime the link states itself (presigned: `X-Amz-Expires`), seconds; null for server links, which state only `expires`. */
    lifetimeSeconds: number | null;
    /** The media type the download will be served as. */
    contentType: string | null;
    /** The Content-Disposition it will be served with (presigned), or null when the server builds it. */
    disposition: string | null;
    /** The file name it carries (server links), or null. */
    filename: string | null;
}

/**
 * Reads a download link's own parameters: `expires`/`type`/`filename` of a signed
 * server link, or `X-Amz-Date` + `X-Amz-Expires`, `response-content-type` and
 * `response-content-disposition` of a presigned S3 URL (SigV4 query parameters).
 */
export function linkTerms(location: string): LinkTerms {
    if (location.startsWith('/')) {
        const query = new URL(location, 'http://server.invalid').searchParams;
        return {
            kind: 'server',
            expiresAt: Number(query.get('expires')),
            lifetimeSeconds: null,
            contentType: query.get('type'),
            disposition: null,
            filename: query.get('filename')
        };
    }

    const query = new URL(location).searchParams;
    // X-Amz-Date is ISO 8601 basic format: 20261121T145509Z.
    const signedAt = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(query.get('X-Amz-Date') ?? '');
    const signedSeconds = signedAt ?
        Date.UTC(+signedAt[1], +signedAt[2] - 1, +signedAt[3], +signedAt[4], +signedAt[5], +signedAt[6]) / 1000 :
        Number.NaN;
    return {
        kind: 'presigned',
        expiresAt: signedSeconds + Number(query.get('X-Amz-Expires')),
        lifetimeSeconds: Number(query.get('X-Amz-Expires')),
        contentType: query.get('response-content-type'),
        disposition: query.get('response-content-disposition'),
        filename: null
    };
}
