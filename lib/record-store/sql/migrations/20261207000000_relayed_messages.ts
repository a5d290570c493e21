import type { Knex } from 'knex';

/** What auto-relay has sent (docs/api.md, "Auto-relay"). */
export const RELAYED_MESSAGES_TABLE = 'relayed_messages';

/**
 * One row per (message, recipient) auto-relay sent, or is sending: `relay_key` is a digest
 * of the message's identity and the recipient, and the delivery that holds it. A copy of
 * the same message that comes back (a relay routing it to us again) finds its key taken
 * and is not sent again. Rows older than a month are dropped as new ones come.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable(RELAYED_MESSAGES_TABLE, (t) => {
        t.string('relay_key', 64).primary();
        t.string('delivery_id', 64).notNullable();
        t.bigInteger('created_at').notNullable().index('relayed_messages_created_at');
    });
}

/** Drops the table (auto-relay then forgets what it sent). */
export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTableIfExists(RELAYED_MESSAGES_TABLE);
}
