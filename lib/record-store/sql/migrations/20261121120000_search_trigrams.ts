import type { Knex } from 'knex';

// Copied, not imported: a migration keeps doing what it did whatever runtime code becomes
// (docs/design.md, "Migrations are history").
const isPostgres = (knex: Knex) => ['pg', 'postgres', 'postgresql'].includes(knex.client.config.client as string);

/** The trigram indexes this migration creates, by the column they serve. */
export const TRIGRAM_INDEXES = {
    sender_folded: 'emails_sender_trgm',
    subject_folded: 'emails_subject_trgm'
} as const;

/**
 * Postgres: trigram GIN indexes for the `sender` and `subject` filters (`LIKE
 * '%text%'`). Without them, a search that matches nothing in a large inbox makes the
 * planner pick a parallel scan of the whole table (seconds at ten million rows);
 * with them it is an index probe. pg_trgm ships with PostgreSQL and is a trusted
 * extension (13+), so a database owner may create it. Where it cannot be created
 * (no contrib files, no CREATE privilege) the searches keep working unindexed,
 * bounded by the table's size; nothing else depends on these indexes.
 * SQLite: nothing; its searches walk the inbox's own index (bounded by the inbox).
 */
export async function up(knex: Knex): Promise<void> {
    if (!isPostgres(knex)) {
        return;
    }

    try {
        // A savepoint: a refused CREATE EXTENSION must not abort the migration's transaction.
        await knex.transaction(async (trx) => {
            await trx.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
            for (const [column, index] of Object.entries(TRIGRAM_INDEXES)) {
                await trx.raw(`CREATE INDEX ${index} ON emails USING gin (${column} gin_trgm_ops)`);
            }
        });
    }
    catch {
        // Documented fallback (docs/operations.md, migrations): unindexed substring search.
    }
}

/** Drops the trigram indexes (the extension stays: other schemas may use it). */
export async function down(knex: Knex): Promise<void> {
    if (!isPostgres(knex)) {
        return;
    }

    for (const index of Object.values(TRIGRAM_INDEXES)) {
        await knex.raw(`DROP INDEX IF EXISTS ${index}`);
    }
}
