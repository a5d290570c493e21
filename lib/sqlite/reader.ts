/** A read-only SQLite connection with prepared statements kept for reuse. */

import * as Sqlite3 from 'sqlite3';
import { busyTimeoutPragma, closeDatabase, openDatabase, prepareStatement } from './connection';

/**
 * Idle prepared statements kept per SQL text. Each caller in flight needs a statement
 * of its own (node-sqlite3 queues calls on one statement); more callers prepare more,
 * and those beyond this are finalized when they finish.
 */
const IDLE_STATEMENTS_PER_SQL = 8;
/**
 * Distinct SQL texts whose idle statements are kept, least recently used dropped first:
 * a search's SQL depends on its terms, so callers can ask for any number of texts.
 */
export const MAX_CACHED_SQL_TEXTS = 256;

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
export function openSqliteReader(filename: string, options: { busyTimeoutMs?: number } = {}): SqliteReader {
    if (filename === ':memory:' || filename === '') {
        throw new Error('a SQLite reader needs a database file (every connection to :memory: is a database of its own)');
    }

    const setup = `${busyTimeoutPragma(options.busyTimeoutMs, 'openSqliteReader')}; PRAGMA query_only = ON`;
    let opened: Promise<Sqlite3.Database> | undefined;
    const idle = new Map<string, Sqlite3.Statement[]>();
    const inFlight = new Set<Promise<unknown>>();
    let closed = false;

    // query_only: whatever SQL reaches it, this connection never writes.
    const open = () => opened ??= openDatabase(filename, Sqlite3.OPEN_READWRITE, setup)
        .catch((err: unknown) => {
            opened = undefined;
            throw err;
        });

    const run = async <T>(sql: string, params: unknown[]): Promise<T[]> => {
        const db = await open();
        const statement = idle.get(sql)?.pop() ?? await prepareStatement(db, sql);
        try {
            // all(), not get(): get() leaves the statement mid-result, its read
            // transaction open, and an open reader stops WAL checkpoints.
            return await new Promise<T[]>((resolve, reject) => {
                statement.all<T>(params, (err, rows) => (err ? reject(err) : resolve(rows)));
            });
        }
        finally {
            // Deleted and set again: the Map's order is then the order of last use.
            const list = idle.get(sql) ?? [];
            idle.delete(sql);
            idle.set(sql, list);
            if (closed || list.length >= IDLE_STATEMENTS_PER_SQL) {
                statement.finalize();
            }
            else {
                list.push(statement);
            }

            for (const [oldest, statements] of idle) {
                if (idle.size <= MAX_CACHED_SQL_TEXTS) {
                    break;
                }

                idle.delete(oldest);
                statements.forEach((s) => s.finalize());
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
            await closeDatabase(db, statements);
        }
    };
}
