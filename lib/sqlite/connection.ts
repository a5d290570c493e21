/**
 * Opening a raw node-sqlite3 connection, promised: shared by the record store's
 * reader and the SQLite blob store's writer and reader.
 */

import * as Sqlite3 from 'sqlite3';

/**
 * How long a connection waits for another process' lock (the CLI, a pipe ingest),
 * ms, before SQLITE_BUSY: far above one transaction, short enough to fail visibly.
 */
export const BUSY_TIMEOUT_MS = 5000;

/** `PRAGMA busy_timeout` of `ms` (default BUSY_TIMEOUT_MS); throws on a value that is not a positive integer. */
export function busyTimeoutPragma(ms: number | undefined, caller: string): string {
    if (ms !== undefined && (!Number.isSafeInteger(ms) || ms < 1)) {
        throw new TypeError(`${caller}: busyTimeoutMs must be a positive integer, not ${String(ms)}`);
    }

    return `PRAGMA busy_timeout = ${ms ?? BUSY_TIMEOUT_MS}`;
}

/** Opens `filename` with `mode` (Sqlite3.OPEN_* flags) and runs `setup` on it; the connection is closed again if either fails. */
export async function openDatabase(filename: string, mode: number, setup: string): Promise<Sqlite3.Database> {
    const db = await new Promise<Sqlite3.Database>((resolve, reject) => {
        const opened = new Sqlite3.Database(filename, mode, (err) => (err ? reject(err) : resolve(opened)));
    });

    try {
        await execSql(db, setup);
    }
    catch (err) {
        db.close();
        throw err;
    }

    return db;
}

/** Runs one or more statements that return no rows. */
export function execSql(db: Sqlite3.Database, sql: string): Promise<void> {
    return new Promise((resolve, reject) => {
        db.exec(sql, (err) => (err ? reject(err) : resolve()));
    });
}

/**
 * Prepares a statement. With a callback, so a bad statement rejects: without one,
 * node-sqlite3 emits 'error' on the statement and silently drops the calls queued on it.
 */
export function prepareStatement(db: Sqlite3.Database, sql: string): Promise<Sqlite3.Statement> {
    return new Promise((resolve, reject) => {
        const statement = db.prepare(sql, (err: Error | null) => (err ? reject(err) : resolve(statement)));
    });
}

/** Finalizes `statements`, then closes the connection. */
export async function closeDatabase(db: Sqlite3.Database, statements: Sqlite3.Statement[] = []): Promise<void> {
    await Promise.all(statements.map((s) => new Promise((resolve) => s.finalize(resolve))));
    await new Promise<void>((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
}
