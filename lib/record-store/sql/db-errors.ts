/**
 * What a database error means for the store: worth another attempt, a unique
 * violation, the database unreachable, or a failure of the call itself.
 */

import { errorCode } from '../../util/error-code';
import { InboxCaptureError } from '../../errors';
import type { RecordStore } from '../record-store';

/** True for a unique-constraint violation (Postgres 23505, SQLite's UNIQUE constraint). */
export function isUniqueViolation(err: unknown): boolean {
    const code = errorCode(err);
    return code === '23505' ||
        (code === 'SQLITE_CONSTRAINT' && /UNIQUE constraint failed/.test((err as Error).message));
}

/**
 * True when a write is worth another attempt: unique races and serialization
 * failures (Postgres), a lock held too long by another process (SQLite).
 */
export function isTransient(err: unknown): boolean {
    const code = errorCode(err);
    return code === '23505' || code === '40001' || code === '40P01' || code === 'SQLITE_BUSY';
}

// Node's socket errors for a database that cannot be reached (refused, reset, no route, no name).
const NETWORK_CODES = new Set([
    'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT',
    'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN'
]);

// Postgres SQLSTATEs of a server that is shutting down, starting, out of resources,
// read-only (a standby after failover) or too busy: the same call can succeed later.
// Class 08 (connection exception) is matched by prefix.
const POSTGRES_UNAVAILABLE_CODES = new Set([
    '57P01', // admin_shutdown: the backend was terminated (restart, pg_terminate_backend)
    '57P02', // crash_shutdown
    '57P03', // cannot_connect_now: starting up or shutting down
    '57014', // query_canceled: statement_timeout on an overloaded server
    '55P03', // lock_not_available: lock_timeout
    '53100', // disk_full
    '53200', // out_of_memory
    '53300', // too_many_connections
    '25006', // read_only_sql_transaction: connected to a standby
    '40001', // serialization_failure, still failing after the write retries
    '40P01' // deadlock_detected, likewise
]);

// SQLite result codes of a database another process holds locked, or whose file
// cannot be opened, read or written right now (node-sqlite3 puts the primary code in `code`).
const SQLITE_UNAVAILABLE_CODES = new Set([
    'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_PROTOCOL'
]);

// node-postgres' errors for a lost or unusable connection carry no code, only these
// messages (which Knex prefixes with the failed SQL).
const LOST_CONNECTION = /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|Query read timeout/;

/** Causes followed to find the driver's own error under wrappers. */
const MAX_CAUSE_DEPTH = 5;

/**
 * True when `err` says the database cannot be reached or used right now (down,
 * restarting, locked by another process, out of connections or disk), as opposed
 * to a failure of the call itself. Knex's pool timeout counts: no connection
 * became free within acquireConnectionTimeout.
 */
export function isUnavailableError(err: unknown): boolean {
    for (let depth = 0, current = err; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
        const code = errorCode(current);
        if (code !== undefined && (
            NETWORK_CODES.has(code) ||
            POSTGRES_UNAVAILABLE_CODES.has(code) ||
            (code.startsWith('08') && code.length === 5) ||
            SQLITE_UNAVAILABLE_CODES.has(code))) {
            return true;
        }

        if (current.name === 'KnexTimeoutError' || LOST_CONNECTION.test(current.message)) {
            return true;
        }

        // Node's dual-stack connect fails with one error per address tried.
        if (current instanceof AggregateError && current.errors.some(isUnavailableError)) {
            return true;
        }

        current = current.cause;
    }

    return false;
}

/**
 * True for a failure of one delivery (its data, a trigger), as opposed to one of the
 * transaction or the database, which every delivery of the batch shares.
 */
export function isOwnFailure(err: unknown): boolean {
    return !isTransient(err) && !isUnavailableError(err);
}

/**
 * Every method of the store, with "the database is unreachable right now" turned into
 * RECORD_STORE_UNAVAILABLE, which adapters answer with HTTP 503 and SMTP 451. Other
 * failures pass unchanged: they are bugs or bad input, not outages.
 */
export function classifyFailures(store: RecordStore): RecordStore {
    const wrapped: Record<string, unknown> = { ...store };
    for (const [name, method] of Object.entries(store)) {
        if (typeof method !== 'function' || name === 'close') {
            continue;
        }

        wrapped[name] = async (...args: unknown[]) => {
            try {
                return await (method as (...a: unknown[]) => Promise<unknown>).apply(store, args);
            }
            catch (err) {
                if (err instanceof InboxCaptureError || !isUnavailableError(err)) {
                    throw err;
                }

                // The driver's words (host, port, SQL) are for the log; adapters never send them.
                throw new InboxCaptureError('RECORD_STORE_UNAVAILABLE', `record store unavailable in ${name}(): ${(err as Error).message}`, { cause: err });
            }
        };
    }

    return wrapped as unknown as RecordStore;
}
