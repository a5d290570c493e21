import type { Knex } from 'knex';

/** The outbox of webhook deliveries (docs/api.md, "Webhooks"). */
export const WEBHOOK_DELIVERIES_TABLE = 'webhook_deliveries';

/**
 * One row per pending delivery of a stored email to a configured webhook URL, written
 * in the transaction that stores the email, deleted once delivered or given up. No
 * foreign key to `emails`: an email deleted first leaves its row, which the dispatcher
 * then drops. Secrets are never stored: they come from the configuration of the process
 * that sends.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable(WEBHOOK_DELIVERIES_TABLE, (t) => {
        // The X-Inbox-Capture-Delivery id, the same on every attempt.
        t.string('id', 64).primary();
        t.text('message_id').notNullable();
        t.text('url').notNullable();
        t.integer('attempts').notNullable().defaultTo(0);
        t.bigInteger('created_at').notNullable();
        // Due when <= now; a claim moves it past the claimer's lease, so a claimer that dies
        // leaves the row due again once the lease is over.
        t.bigInteger('next_attempt_at').notNullable();
        // The token of the latest claim: only its holder records the outcome.
        t.string('claim', 64).nullable();
        t.text('last_error').nullable();
        t.index(['next_attempt_at'], 'webhook_deliveries_due');
        // The drop of deliveries past the give-up age (their URL may be gone from the configuration).
        t.index(['created_at'], 'webhook_deliveries_created');
    });
}

/** Drops the table (and the pending deliveries in it). */
export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTableIfExists(WEBHOOK_DELIVERIES_TABLE);
}
