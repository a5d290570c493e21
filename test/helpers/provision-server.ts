import * as Hapi from '@hapi/hapi';
import { plugin, type InboxCapturePluginApi, type InboxCapturePluginOptions } from '../../adapters/hapi';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import type { RecordStore } from '../../lib/record-store/record-store';
import { sqliteFsStores, type StoreFactory, type TestStores } from './test-stores';

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
