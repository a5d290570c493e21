import type { Knex } from 'knex';
import { retryWithBackoff } from '../../util/backoff';
import { errorCode } from '../../util/error-code';
import { sha256Hex } from '../../ingest/ids';
import { isPostgres } from './dialect';
import * as initial from './migrations/20261121000000_initial';
import * as searchTrigrams from './migrations/20261121120000_search_trigrams';
import * as smallBlobs from './migrations/20261124000000_small_blobs';
import * as addressableIds from './migrations/20261124120000_addressable_ids';
import * as inboxSummary from './migrations/20261124200000_inbox_summary';
import * as linksCodes from './migrations/20261125000000_links_codes';
import * as shortMessageIds from './migrations/20261126000000_short_message_ids';
import * as retentionIndex from './migrations/20261128000000_retention_index';
import * as webhookDeliveries from './migrations/20261129000000_webhook_deliveries';
import * as expiryIndex from './migrations/20261130000000_expiry_index';
import * as search from './migrations/20261201000000_search';

/**
 * Our own migrations table, so the schema can live in a database that also holds
 * the host application's `knex_migrations` (knex adds `_lock` for its lock table).
 */
export const MIGRATIONS_TABLE_NAME = 'inbox_capture_migrations';

/** Attempts of `migrate()` while another process holds the migration lock. */
const MIGRATE_ATTEMPTS = 60;
/** Wait between those attempts, ms: with the attempts, about 30 s in all. */
const MIGRATE_RETRY_MS = 500;

/** Every migration, by name; names sort in the order they apply. */
const MIGRATIONS: Record<string, Knex.Migration> = {
    '20261121000000_initial': initial,
    '20261121120000_search_trigrams': searchTrigrams,
    '20261124000000_small_blobs': smallBlobs,
    '20261124120000_addressable_ids': addressableIds,
    '20261124200000_inbox_summary': inboxSummary,
    '20261125000000_links_codes': linksCodes,
    '20261126000000_short_message_ids': shortMessageIds,
    '20261128000000_retention_index': retentionIndex,
    '20261129000000_webhook_deliveries': webhookDeliveries,
    '20261130000000_expiry_index': expiryIndex,
    '20261201000000_search': search
};

/**
 * Migrations imported as modules rather than read from a directory: knex resolves
 * directories against the working directory, which breaks once this package sits
 * inside someone's node_modules (or is bundled).
 */
export const migrationSource: Knex.MigrationSource<string> = {
    getMigrations() {
        return Promise.resolve(Object.keys(MIGRATIONS).sort());
    },

    getMigrationName(name) {
        return name;
    },

    getMigration(name) {
        const migration = MIGRATIONS[name];
        if (!migration) {
            return Promise.reject(new Error(`Unknown inbox-capture migration ${name}`));
        }

        return Promise.resolve(migration);
    }
};

/** The migrator configuration the store and knexfile.ts share. */
export const migratorConfig: Knex.MigratorConfig = {
    migrationSource,
    tableName: MIGRATIONS_TABLE_NAME
};

/**
 * Brings the schema up to date. Several processes may start at once against one
 * Postgres: they take turns on a session advisory lock (released by Postgres
 * itself if the holder dies, unlike knex's lock table), and the later ones find
 * nothing left to do. Anything else that trips over knex's lock (a knex CLI run,
 * two first starts on one SQLite file) waits and tries again.
 */
export async function migrate(knex: Knex): Promise<void> {
    const lock = isPostgres(knex) ? await lockPostgres(knex) : undefined;
    try {
        // A fixed wait, not a growing one: the other migrator finishes in one go.
        await retryWithBackoff(() => knex.migrate.latest(migratorConfig), {
            retries: MIGRATE_ATTEMPTS - 1,
            firstMs: MIGRATE_RETRY_MS,
            maxMs: MIGRATE_RETRY_MS,
            retryable: isLockContention
        });
    }
    finally {
        await lock?.();
    }
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
