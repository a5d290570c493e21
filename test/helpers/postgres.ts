import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { launchPostgres, type PostgresProcess } from './postgres-process';

/** What we use of node-postgres' Client (the package ships no types; knex loads it too). */
interface AdminClient {
    connect(): Promise<void>;
    query(sql: string): Promise<unknown>;
    escapeIdentifier(name: string): string;
    end(): Promise<void>;
}

const { Client } = createRequire(__filename)('pg') as { Client: new (config: { connectionString: string }) => AdminClient };

/** A running PostgreSQL to test against (shared by every test file of the process). */
export interface PostgresServer {
    /** URL of a fresh database created for this user. */
    connectionString: string;
    /** How long this user waited for initdb and start-up, ms (0 when the server was already up). */
    startupMs: number;
    /** Creates a fresh database (a unique name when none is given) and returns its URL. */
    createDatabase(name?: string): Promise<string>;
    /** Releases this user's hold; after the last release the server stops and its files go. */
    stop(): Promise<void>;
}

/** How the server runs; the benchmarks want Postgres as production runs it. */
export interface PostgresOptions {
    /**
     * fsync, synchronous_commit and full_page_writes on (Postgres' defaults: a commit
     * is on disk). Default false: tests do not test Postgres' durability and like speed.
     */
    durable?: boolean;
    /** max_connections (default: Postgres' own, 100). */
    maxConnections?: number;
}

interface Running {
    server: PostgresProcess;
    startupMs: number;
}

interface Shared {
    users: number;
    running: Promise<Running>;
    startupReported: boolean;
    linger?: NodeJS.Timeout;
}

/**
 * How long the server outlives its last user, ms. Lab runs the test files of a
 * process one after another, each with its own before()/after(): the next file
 * claims the server within milliseconds instead of paying for another initdb.
 * Whatever is still running when the process exits is stopped in an exit hook.
 */
const LINGER_MS = 2000;

/** One server per distinct PostgresOptions, keyed by settingsKey(). */
const shared = new Map<string, Shared>();

function settingsKey(options: PostgresOptions): string {
    return JSON.stringify([options.durable ?? false, options.maxConnections ?? null]);
}

/**
 * Starts, or joins, the one embedded PostgreSQL of this test process (127.0.0.1,
 * a free port, data in a fresh directory under the OS temp dir) and creates a
 * database for the caller.
 */
export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
    const key = settingsKey(options);
    let mine = shared.get(key);
    if (!mine) {
        const entry: Shared = { users: 0, running: launch(options), startupReported: false };
        // A failed start is not cached: the next caller tries again.
        entry.running.catch(() => {
            if (shared.get(key) === entry) {
                shared.delete(key);
            }
        });
        shared.set(key, entry);
        mine = entry;
    }

    clearTimeout(mine.linger);
    mine.linger = undefined;
    mine.users++;

    let released = false;
    const stop = async () => {
        if (!released) {
            released = true;
            release(key, mine!);
        }
    };

    try {
        const running = await mine.running;
        const url = (database: string) =>
            `postgres://postgres:${encodeURIComponent(running.server.password)}@${running.server.host}:${running.server.port}/${encodeURIComponent(database)}`;

        const createDatabase = async (name = `test_${randomBytes(6).toString('hex')}`) => {
            const client = new Client({ connectionString: url('postgres') });
            await client.connect();
            try {
                // An ICU default collation (like most production databases, unlike the
                // C locale initdb picks on this machine), so tests catch code that relies
                // on the default collation for ordering or case folding.
                await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)} TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`);
            }
            finally {
                await client.end();
            }

            return url(name);
        };

        const connectionString = await createDatabase();
        const startupMs = mine.startupReported ? 0 : running.startupMs;
        mine.startupReported = true;
        return { connectionString, startupMs, createDatabase, stop };
    }
    catch (err) {
        await stop();
        throw err;
    }
}

function release(key: string, entry: Shared): void {
    entry.users--;
    if (entry.users > 0) {
        return;
    }

    entry.linger = setTimeout(() => {
        if (shared.get(key) === entry && entry.users === 0) {
            shared.delete(key);
            void shutdown(entry);
        }
    }, LINGER_MS);
    entry.linger.unref();
}

async function shutdown(entry: Shared): Promise<void> {
    const running = await entry.running.catch(() => null);
    if (running) {
        stopAtExit.delete(running.server);
        await running.server.stop();
    }
}

// Lab ends with process.exit(), where nothing asynchronous runs any more: a server still
// lingering is stopped synchronously.
const stopAtExit = new Set<PostgresProcess>();

process.on('exit', () => {
    for (const server of stopAtExit) {
        server.stopNow();
    }

    stopAtExit.clear();
});

async function launch(options: PostgresOptions): Promise<Running> {
    const started = Date.now();
    const server = await launchPostgres([
        '-c', 'listen_addresses=127.0.0.1',
        // TCP only: no socket or lock file outside the data directory.
        '-c', 'unix_socket_directories=',
        // Durability is not under test here; speed is welcome. Durable (the
        // benchmarks): a 250 after a commit means the record is on disk, as for
        // SQLite's synchronous=FULL.
        ...(options.durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
        ...(options.maxConnections === undefined ? [] : ['-c', `max_connections=${options.maxConnections}`])
    ]);
    stopAtExit.add(server);
    return { server, startupMs: Date.now() - started };
}
