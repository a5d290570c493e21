import { S3Client } from '@aws-sdk/client-s3';
import { createS3BlobStore } from '../../lib/blob-store/s3-blob-store';
import { createKnexRecordStore } from '../../lib/record-store/knex-record-store';
import { openPostgresKnex } from '../../lib/record-store/postgres/postgres-knex';
import { startPostgres } from './postgres';
import { provisionServer, type ProvisionedServer, type ProvisionOptions } from './provision-server';
import { startRecordingProxy, type RecordedRequest } from './recording-proxy';
import { startS3 } from './s3';
import { sqliteFsStores } from './test-stores';

/** A listening server for client tests, and what the download links' host saw. */
export interface ClientBackend {
    p: ProvisionedServer;
    /** `http://127.0.0.1:<port>` of the API. */
    baseUrl: string;
    /** Requests that reached the S3 endpoint (through a recording proxy); null on the fs store. */
    linkHostRequests: RecordedRequest[] | null;
    /** Stops the server and everything started for it. */
    cleanup(): Promise<void>;
}

/** How to start one backend. */
export interface ClientBackendKind {
    name: string;
    start(options?: Pick<ProvisionOptions, 'plugin' | 'server'>): Promise<ClientBackend>;
}

function baseUrlOf(p: ProvisionedServer): string {
    return `http://127.0.0.1:${p.server.info.port}`;
}

/** SQLite + files: download links are served by the API's own host. */
export const SQLITE_FS: ClientBackendKind = {
    name: 'sqlite+fs',
    async start(options = {}) {
        const p = await provisionServer({ stores: sqliteFsStores(), listen: true, ...options });
        return { p, baseUrl: baseUrlOf(p), linkHostRequests: null, cleanup: () => p.cleanup() };
    }
};

/**
 * Postgres + S3 (s3rver behind a recording proxy): download links are presigned URLs
 * on another host, whose every request is recorded.
 */
export const POSTGRES_S3: ClientBackendKind = {
    name: 'postgres+s3',
    async start(options = {}) {
        const postgres = await startPostgres();
        const s3 = await startS3();
        const proxy = await startRecordingProxy(s3.endpoint);
        const client = new S3Client({
            endpoint: proxy.url,
            region: 'us-east-1',
            forcePathStyle: true,
            credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
        });
        const recordStore = createKnexRecordStore({ knex: openPostgresKnex(postgres.connectionString), destroyKnexOnClose: true });
        const blobStore = createS3BlobStore({ client, bucket: s3.bucket });
        const release = async () => {
            client.destroy();
            await Promise.allSettled([proxy.close(), s3.stop(), postgres.stop()]);
        };

        let p: ProvisionedServer;
        try {
            p = await provisionServer({ recordStore, blobStore, listen: true, ...options });
        }
        catch (err) {
            await recordStore.close();
            await release();
            throw err;
        }

        return {
            p,
            baseUrl: baseUrlOf(p),
            linkHostRequests: proxy.requests,
            async cleanup() {
                try {
                    await p.cleanup();
                    await recordStore.close();
                }
                finally {
                    await release();
                }
            }
        };
    }
};
