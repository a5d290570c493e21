import * as Hapi from '@hapi/hapi';
import * as Fs from 'node:fs/promises';
import * as Os from 'node:os';
import * as Path from 'node:path';
import { plugin, type InboxCapturePluginApi, type InboxCapturePluginOptions } from '../../adapters/hapi';
import { createFsBlobStore } from '../../lib/blob-store/fs-blob-store';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import { openEmbeddedRecordStore } from '../../lib/embedded-stores';
import type { RecordStore } from '../../lib/record-store/record-store';

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
}

/** Makes fresh stores for one server: the API suite runs against any backend through one of these. */
export interface StoreFactory {
    /** Shown in suite titles, e.g. `sqlite+fs`. */
    name: string;
    create(): Promise<TestStores>;
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
 * over HTTP for object storage (an absolute URL). No API key is sent either way.
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

    const res = await fetch(location);
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => {
        headers[name] = value;
    });
    return { statusCode: res.status, headers, body: Buffer.from(await res.arrayBuffer()) };
}
