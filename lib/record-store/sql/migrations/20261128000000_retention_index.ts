import type { Knex } from 'knex';

/** The index the retention sweep finds expired emails by (lib/record-store/knex/batch-deletes.ts). */
export const RECEIVED_AT_INDEX = 'emails_received_at';

/**
 * An index on `received_at` alone: every other index of `emails` leads with the inbox,
 * so "received before T, oldest first" across all inboxes would otherwise read the
 * whole table on every sweep.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.raw(`CREATE INDEX ${RECEIVED_AT_INDEX} ON emails (received_at)`);
}

/** Drops the index. */
export async function down(knex: Knex): Promise<void> {
    await knex.raw(`DROP INDEX IF EXISTS ${RECEIVED_AT_INDEX}`);
}
