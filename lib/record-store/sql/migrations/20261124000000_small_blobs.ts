import type { Knex } from 'knex';

/** Name of the table the embedded store keeps small blobs in, beside the records. */
export const BLOBS_TABLE = 'blobs';

const isSqlite = (knex: Knex) => knex.client.config.client === 'sqlite3';

/**
 * SQLite: a `blobs` table in the records database, so a batch's small blobs commit in
 * the same transaction (one fsync) as the records that reference them (docs/design.md,
 * "What happens to a message"). IF NOT EXISTS: the SQLite blob store pointed at this
 * file may have created it first, with the same columns.
 * Postgres: nothing; its blobs live in a blob store of their own (S3, files).
 */
export async function up(knex: Knex): Promise<void> {
    if (!isSqlite(knex)) {
        return;
    }

    await knex.raw(`CREATE TABLE IF NOT EXISTS ${BLOBS_TABLE} (
    key TEXT PRIMARY KEY NOT NULL,
    content BLOB NOT NULL,
    size INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    modified_at INTEGER NOT NULL
)`);
}

/** Drops the table (and the small blobs in it). */
export async function down(knex: Knex): Promise<void> {
    if (isSqlite(knex)) {
        await knex.raw(`DROP TABLE IF EXISTS ${BLOBS_TABLE}`);
    }
}
