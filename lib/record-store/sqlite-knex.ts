import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import * as Sqlite3 from 'sqlite3';

/**
 * How long a connection waits for another process' lock (the CLI, a pipe ingest),
 * ms, before SQLITE_BUSY: far above one transaction, short enough to fail visibly.
 */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Connections in the pool: one. SQLite takes one writer at a time anyway, and a
 * single connection can never get SQLITE_BUSY from another of our own. The cost
 * is that reads queue behind a save transaction. Measured (2 vCPUs, ext4, WAL +
 * synchronous=FULL, 5,000 stored mails, 5 s of concurrent saveEmails and
 * listEmails+inboxVersion loops): with 2-4 connections reads ran 2-4x faster, but
 * saves ran 2-4x slower whenever readers were busy (each statement of a save
 * transaction then waits behind reads for node-sqlite3's libuv worker threads), and
 * their p99 doubled. Acknowledged deliveries matter more than list latency here,
 * and reads stayed in single-digit to tens of ms. Postgres is the choice for
 * heavy concurrent reading.
 */
const POOL_MAX = 1;

/** Per-connection settings (journal_mode persists in the file; the rest do not). */
const PRAGMAS = [
    // First, so that switching to WAL waits for a lock instead of failing.
    `PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`,
    // Readers never block the writer and the writer never blocks readers.
    'PRAGMA journal_mode = WAL',
    // WAL's default (NORMAL) may lose the last commits on power loss; an SMTP "250"
    // promises the message is stored, so every commit is synced.
    'PRAGMA synchronous = FULL',
    // email_blobs rows go with their email.
    'PRAGMA foreign_keys = ON'
].join(';\n');

interface SqliteConnection {
    exec(sql: string, callback: (err: Error | null) => void): void;
}

/** The Knex configuration openSqliteKnex() uses (also read by knexfile.ts). */
export function sqliteKnexConfig(filename: string): Knex.Config {
    const inMemory = filename === ':memory:' || filename === '';
    return {
        client: 'sqlite3',
        connection: { filename },
        useNullAsDefault: true,
        pool: {
            min: 1,
            // Every connection to ':memory:' would be a database of its own.
            max: inMemory ? 1 : POOL_MAX,
            afterCreate(conn: SqliteConnection, done: (err: Error | null, conn: SqliteConnection) => void) {
                conn.exec(PRAGMAS, (err) => done(err, conn));
            }
        }
    };
}

/** A Knex instance for the embedded SQLite backend, configured for durability. */
export function openSqliteKnex(filename: string): Knex {
    if (filename !== ':memory:' && filename !== '') {
        mkdirSync(dirname(filename), { recursive: true });
    }

    return knexFactory(sqliteKnexConfig(filename));
}

/**
 * Idle prepared statements kept per SQL text. Each caller in flight needs a statement
 * of its own (node-sqlite3 queues calls on one statement); more callers prepare more,
 * and those beyond this are finalized when they finish.
 */
const IDLE_STATEMENTS_PER_SQL = 8;

/** A read-only connection beside the writer: WAL lets it read while a save transaction is open. */
export interface SqliteReader {
    /** The rows of a read-only statement; the statement stays prepared for the next call. */
    all<T>(sql: string, params: unknown[]): Promise<T[]>;
    /** Waits for the reads in flight, then closes the connection. */
    close(): Promise<void>;
}

/**
 * A read connection to the SQLite file, apart from Knex's pool: statements prepared
 * once and reused skip Knex's query building and two of node-sqlite3's three thread-pool
 * round trips a query (prepare, run, finalize), which is most of the cost of a small read.
 * It reads committed data only (its own connection, WAL), so a read that starts after a
 * write has resolved sees that write. Opened on first use (after the writer's migration).
 */
export function openSqliteReader(filename: string): SqliteReader {
    if (filename === ':memory:' || filename === '') {
        throw new Error('a SQLite reader needs a database file (every connection to :memory: is a database of its own)');
    }

    let opened: Promise<Sqlite3.Database> | undefined;
    const idle = new Map<string, Sqlite3.Statement[]>();
    const inFlight = new Set<Promise<unknown>>();
    let closed = false;

    const open = () => {
        opened ??= new Promise((resolve, reject) => {
            const db = new Sqlite3.Database(filename, Sqlite3.OPEN_READWRITE, (err) => {
                if (err) {
                    opened = undefined;
                    reject(err);
                    return;
                }

                // query_only: whatever SQL reaches it, this connection never writes.
                db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}; PRAGMA query_only = ON`, (pragmaErr) => {
                    if (pragmaErr) {
                        opened = undefined;
                        db.close();
                        reject(pragmaErr);
                        return;
                    }

                    resolve(db);
                });
            });
        });
        return opened;
    };

    // With a callback, so a bad statement rejects: without one, node-sqlite3 emits
    // 'error' on the statement and silently drops the calls queued on it.
    const prepare = (db: Sqlite3.Database, sql: string) => new Promise<Sqlite3.Statement>((resolve, reject) => {
        const statement = db.prepare(sql, (err: Error | null) => (err ? reject(err) : resolve(statement)));
    });

    const run = async <T>(sql: string, params: unknown[]): Promise<T[]> => {
        const db = await open();
        const statement = idle.get(sql)?.pop() ?? await prepare(db, sql);
        try {
            // all(), not get(): get() leaves the statement mid-result, its read
            // transaction open, and an open reader stops WAL checkpoints.
            return await new Promise<T[]>((resolve, reject) => {
                statement.all<T>(params, (err, rows) => (err ? reject(err) : resolve(rows)));
            });
        }
        finally {
            const list = idle.get(sql) ?? [];
            idle.set(sql, list);
            if (closed || list.length >= IDLE_STATEMENTS_PER_SQL) {
                statement.finalize();
            }
            else {
                list.push(statement);
            }
        }
    };

    return {
        all<T>(sql: string, params: unknown[]) {
            if (closed) {
                return Promise.reject(new Error('SQLite reader is closed'));
            }

            const read = run<T>(sql, params);
            const tracked = read.catch(() => undefined).finally(() => inFlight.delete(tracked));
            inFlight.add(tracked);
            return read;
        },

        async close() {
            closed = true;
            await Promise.all(inFlight);
            const db = await opened?.catch(() => undefined);
            if (!db) {
                return;
            }

            const statements = [...idle.values()].flat();
            idle.clear();
            await Promise.all(statements.map((s) => new Promise((resolve) => s.finalize(resolve))));
            await new Promise<void>((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
        }
    };
}
