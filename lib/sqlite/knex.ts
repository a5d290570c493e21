/** The Knex side of the embedded SQLite backend: pool and per-connection settings. */

import knexFactory, { type Knex } from 'knex';
import { busyTimeoutPragma } from './connection';
import { createPrivateDatabaseFile } from '../util/private-file';

/**
 * Connections in the pool: one. SQLite takes one writer at a time anyway, and a
 * single connection can never get SQLITE_BUSY from another of our own. The cost
 * is that reads queue behind a save transaction (the store's reader avoids it).
 * More connections sped reads up but slowed saves whenever readers were busy;
 * acknowledged deliveries matter more than list latency here. Postgres is the
 * choice for heavy concurrent reading.
 * Tuned by measurement: bench/README.md, "Tuned constants › POOL_MAX".
 */
const POOL_MAX = 1;

/** How the connections to a SQLite file behave. */
export interface SqliteConnectionOptions {
    /**
     * How long a connection waits for another process' lock before SQLITE_BUSY, ms
     * (default BUSY_TIMEOUT_MS). Every connection the record store opens on the file
     * waits this long: Knex's pool, and the record store's batch writer, which reads it from the config.
     */
    busyTimeoutMs?: number;
}

/** Per-connection settings of a writer (journal_mode persists in the file; the rest do not). */
export function sqliteConnectionPragmas(options: SqliteConnectionOptions = {}): string {
    return [
        // First, so that switching to WAL waits for a lock instead of failing.
        busyTimeoutPragma(options.busyTimeoutMs, 'openSqliteKnex'),
        // Readers never block the writer and the writer never blocks readers.
        'PRAGMA journal_mode = WAL',
        // WAL's default (NORMAL) may lose the last commits on power loss; an SMTP "250"
        // promises the message is stored, so every commit is synced.
        'PRAGMA synchronous = FULL',
        // email_blobs rows go with their email.
        'PRAGMA foreign_keys = ON',
        // A multi-row statement inside a transaction keeps the pages it changes in a statement
        // journal, which past 64 KiB spills to a temporary file: a pwrite a page in every save.
        'PRAGMA temp_store = MEMORY'
    ].join(';\n');
}

interface SqliteConnection {
    exec(sql: string, callback: (err: Error | null) => void): void;
}

/** The Knex configuration openSqliteKnex() uses (also read by knexfile.ts). */
export function sqliteKnexConfig(filename: string, options: SqliteConnectionOptions = {}): Knex.Config {
    const inMemory = filename === ':memory:' || filename === '';
    const pragmas = sqliteConnectionPragmas(options);
    return {
        client: 'sqlite3',
        // busyTimeoutMs rides along (node-sqlite3 ignores it) for the record store's batch writer.
        connection: { filename, ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }) },
        useNullAsDefault: true,
        pool: {
            min: 1,
            // Every connection to ':memory:' would be a database of its own.
            max: inMemory ? 1 : POOL_MAX,
            afterCreate(conn: SqliteConnection, done: (err: Error | null, conn: SqliteConnection) => void) {
                conn.exec(pragmas, (err) => done(err, conn));
            }
        }
    };
}

/** A Knex instance for the embedded SQLite backend, configured for durability; a new database file is made 0600 (mail is private). */
export function openSqliteKnex(filename: string, options: SqliteConnectionOptions = {}): Knex {
    const config = sqliteKnexConfig(filename, options);
    if (filename !== ':memory:' && filename !== '') {
        createPrivateDatabaseFile(filename);
    }

    return knexFactory(config);
}
