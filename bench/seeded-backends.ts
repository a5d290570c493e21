import * as Hapi from '@hapi/hapi';
import type { Knex } from 'knex';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { plugin } from '../adapters/hapi';
import { createFsBlobStore } from '../lib/blob-store/fs-blob-store';
import { openPostgresKnex } from '../lib/record-store/postgres/postgres-knex';
import type { RecordStore } from '../lib/record-store/record-store';
import { openSqliteKnex } from '../lib/sqlite/knex';
import { startPostgres } from '../test/helpers/postgres';
import { tempDir } from '../test/helpers/temp-dir';
import { BENCH_POSTGRES } from './postgres-options';

/** A database the listing benchmarks seed and query (list.ts, inboxes.ts). */
export interface SeededBackend {
    name: 'SQLite' | 'Postgres';
    /** A fresh Knex on the seeded data (the production configuration, cold pool). */
    open(): Knex;
    /** SQLite: the data dir holding the file as `inbox-capture.sqlite`, for the embedded stores. */
    dataDir?: string;
    cleanup(): Promise<void>;
}

/** Makers of the backends named in `--backends` (default both), each started when called. */
export function seededBackends(only: string[] = ['sqlite', 'postgres']): Array<() => Promise<SeededBackend>> {
    const backends: Array<() => Promise<SeededBackend>> = [];
    if (only.includes('sqlite')) {
        backends.push(async () => {
            const dir = await tempDir('bench-seeded');
            const file = Path.join(dir, 'inbox-capture.sqlite');
            return { name: 'SQLite', open: () => openSqliteKnex(file), dataDir: dir, cleanup: () => Fs.rm(dir, { recursive: true, force: true }) };
        });
    }

    if (only.includes('postgres')) {
        backends.push(async () => {
            const server = await startPostgres(BENCH_POSTGRES);
            const url = await server.createDatabase();
            return { name: 'Postgres', open: () => openPostgresKnex(url), cleanup: () => server.stop() };
        });
    }

    return backends;
}

/** The plugin on `store` (files for blobs) with an API key: GETs through inject(), as a client's would be served. */
export interface BenchServer {
    /** GET `path` with the key; throws unless it answers 200. */
    get(path: string): Promise<void>;
    stop(): Promise<void>;
}

/** Starts a BenchServer on a record store. */
export async function startBenchServer(store: RecordStore): Promise<BenchServer> {
    const blobDir = await tempDir('bench-blobs');
    const server = Hapi.server();
    await server.register({ plugin, options: { recordStore: store, blobStore: createFsBlobStore({ root: blobDir, signingSecret: 'bench signing secret, not secret' }), docs: false } });
    await server.initialize();
    const apiKey = await server.plugins['inbox-capture'].capture.createKey(`bench-${Date.now()}`);
    return {
        async get(path) {
            const res = await server.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${apiKey}` } });
            if (res.statusCode !== 200) {
                throw new Error(`GET ${path} answered ${res.statusCode}: ${res.payload}`);
            }
        },
        async stop() {
            await server.stop();
            await Fs.rm(blobDir, { recursive: true, force: true });
        }
    };
}
