import type { Knex } from 'knex';

/** Partial index of the rows the back-fill has yet to fill: empty once it is done, so finding none costs nothing. */
export const PENDING_INDEX = 'emails_links_pending';

/**
 * The `links` and `codes` of each email (docs/api.md, "Links and codes"), as JSON text.
 * Nullable: rows stored before this migration hold NULL until migrate() fills them in
 * batches, right after the migrations (backfill-links-codes.ts: it runs ingest's
 * extractor, which a migration may not import). Filling them here would rewrite every
 * row in one transaction.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('emails', (t) => {
        t.text('links').nullable();
        t.text('codes').nullable();
    });
    await knex.raw(`CREATE INDEX ${PENDING_INDEX} ON emails (seq) WHERE links IS NULL`);
}

/** Drops the columns and the index. */
export async function down(knex: Knex): Promise<void> {
    await knex.raw(`DROP INDEX IF EXISTS ${PENDING_INDEX}`);
    await knex.schema.alterTable('emails', (t) => {
        t.dropColumn('links');
        t.dropColumn('codes');
    });
}
