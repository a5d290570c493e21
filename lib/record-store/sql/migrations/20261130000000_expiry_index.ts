import type { Knex } from 'knex';

// Copied, not imported: a migration keeps doing what it did whatever runtime code becomes
// (docs/design.md, "Migrations are history").
const isPostgres = (knex: Knex) => ['pg', 'postgres', 'postgresql'].includes(knex.client.config.client as string);

/** The index 20261128000000_retention_index created, which this one replaces on Postgres. */
const RECEIVED_AT_INDEX = 'emails_received_at';

/** Postgres' index for the retention sweep, on an expression no list query orders by. */
export const EXPIRY_INDEX = 'emails_expiry';

/** The indexed expression; the sweep's query must spell it the same to use the index. */
export const EXPIRY_KEY_SQL = '(received_at + 0)';

/**
 * Postgres: the retention sweep's index moves from `received_at` to `received_at + 0`.
 * The planner took the plain one for list pages too: it reads all inboxes' mail newest
 * first and filters by inbox, which it expects to be cheap for a busy inbox, and which
 * reads every newer email of every other inbox when that inbox's mail is old. An index
 * on the expression serves only a query that names it. SQLite's planner keeps to the
 * inbox's index, and keeps its plain one.
 */
export async function up(knex: Knex): Promise<void> {
    if (!isPostgres(knex)) {
        return;
    }

    await knex.raw(`DROP INDEX IF EXISTS ${RECEIVED_AT_INDEX}`);
    await knex.raw(`CREATE INDEX ${EXPIRY_INDEX} ON emails (${EXPIRY_KEY_SQL})`);
}

/** Puts the plain index back. */
export async function down(knex: Knex): Promise<void> {
    if (!isPostgres(knex)) {
        return;
    }

    await knex.raw(`DROP INDEX IF EXISTS ${EXPIRY_INDEX}`);
    await knex.raw(`CREATE INDEX ${RECEIVED_AT_INDEX} ON emails (received_at)`);
}
