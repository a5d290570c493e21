/**
 * Bringing a database up to date: the migrations (frozen history, migration-source.ts),
 * then the back-fills of what an upgrade adds to stored emails and only runtime code can
 * work out (links and codes; the searched texts and SQLite's index documents), under one
 * lock: a store serves nothing it has not filled.
 */

import type { Knex } from 'knex';
import { retryWithBackoff } from '../../util/backoff';
import { errorCode } from '../../util/error-code';
import { sha256Hex } from '../../identity/ids';
import { backfillLinksAndCodes, type BackfillOptions } from './backfill-links-codes';
import { backfillSearch } from './backfill-search';
import { hasSqliteSearchIndex } from './search-index';
import { isPostgres } from './dialect';
import { MIGRATIONS_TABLE_NAME, migratorConfig } from './migration-source';
import { EMAILS_TABLE } from './schema';

/** Attempts of `migrate()` while another process holds the migration lock. */
const MIGRATE_ATTEMPTS = 60;
/** Wait between those attempts, ms: with the attempts, about 30 s in all. */
const MIGRATE_RETRY_MS = 500;

/** What migrate() did. */
export interface MigrateResult {
    /** Emails stored by an earlier version whose links and codes this call filled. */
    backfilled: number;
    /** Emails stored by an earlier version whose searched texts this call filled (docs/design.md, "Search"). */
    searchBackfilled: number;
}

/**
 * Brings the schema up to date, then fills the links and codes, and the searched texts, of
 * emails stored before them (`backfill.onBatch` hears the rows filled by both, of both's
 * total). Several processes may start at once against one Postgres: they take turns on a
 * session advisory lock (released by Postgres itself if the holder dies, unlike knex's
 * lock table) held over both steps, and the later ones find nothing left to do. Anything
 * else that trips over knex's lock (a knex CLI run, two first starts on one SQLite file)
 * waits and tries again; on SQLite two back-fills at once take turns per batch, and a row
 * is filled once (backfill-links-codes.ts).
 */
export async function migrate(knex: Knex, backfill: BackfillOptions = {}): Promise<MigrateResult> {
    const lock = isPostgres(knex) ? await lockPostgres(knex) : undefined;
    try {
        // A fixed wait, not a growing one: the other migrator finishes in one go.
        await retryWithBackoff(() => knex.migrate.latest(migratorConfig), {
            retries: MIGRATE_ATTEMPTS - 1,
            firstMs: MIGRATE_RETRY_MS,
            maxMs: MIGRATE_RETRY_MS,
            retryable: isLockContention
        });
        // The two back-fills are one piece of work to a caller that shows progress: rows to
        // fill in both, counted (through their partial indexes) before the first starts.
        const { onBatch } = backfill;
        const total = onBatch ? await pendingRows(knex) : 0;
        const backfilled = await backfillLinksAndCodes(knex, { ...backfill, onBatch: onBatch && ((filled) => onBatch(filled, total)) });
        const sqliteSearchIndex = !isPostgres(knex) && await hasSqliteSearchIndex(knex);
        const searchBackfilled = await backfillSearch(knex, {
            transaction: backfill.transaction,
            sqliteSearchIndex,
            onBatch: onBatch && ((filled) => onBatch(backfilled + filled, total))
        });
        return { backfilled, searchBackfilled };
    }
    finally {
        await lock?.();
    }
}

/** Rows the back-fills have to fill: those without links and codes, plus those without searched texts. */
async function pendingRows(knex: Knex): Promise<number> {
    const count = async (column: string) => Number((await knex(EMAILS_TABLE).whereNull(column).count({ n: '*' }).first() as { n: number | string } | undefined)?.n ?? 0);
    return await count('links') + await count('body_folded');
}

/** A raw node-postgres client, as far as the lock needs it. */
interface LockClient {
    query(sql: string, values?: unknown[]): Promise<unknown>;
}

/** Arbitrary, fixed key of the migration advisory lock: 64 bits of SHA-256 of our name. */
const MIGRATION_LOCK_KEY = BigInt.asIntN(64, BigInt(`0x${sha256Hex('inbox-capture migrations').slice(0, 16)}`)).toString();

// Held on a connection of its own, outside the pool knex migrates with.
async function lockPostgres(knex: Knex): Promise<() => Promise<void>> {
    const connection = await knex.client.acquireRawConnection() as LockClient;
    try {
        await connection.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
    }
    catch (err) {
        await knex.client.destroyRawConnection(connection);
        throw err;
    }

    return async () => {
        // Closing the session releases the lock as well; unlock first to be tidy.
        await connection.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
        await knex.client.destroyRawConnection(connection);
    };
}

// knex throws LockError (name MigrationLocked) while another migrator holds its
// lock table; two first starts may also race to create the migrations tables.
function isLockContention(err: unknown): boolean {
    const e = err as { name?: string; message?: string } | null;
    return e?.name === 'MigrationLocked' ||
        errorCode(err) === 'SQLITE_BUSY' ||
        (typeof e?.message === 'string' && e.message.includes(MIGRATIONS_TABLE_NAME) && /already exists/.test(e.message));
}
