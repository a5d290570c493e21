import type { Knex } from 'knex';

/** The outbox of deliveries, created for webhooks (20261129000000_webhook_deliveries). */
const DELIVERIES_TABLE = 'webhook_deliveries';

/**
 * The outbox holds deliveries of kinds (docs/api.md, "Auto-relay"): `webhook` (its `url`
 * the webhook's URL) and `relay` (its `url` the relay's name). Rows written before are
 * webhooks.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable(DELIVERIES_TABLE, (t) => {
        t.string('kind', 16).notNullable().defaultTo('webhook');
    });
}

/** Drops the column with the relay deliveries it told apart. */
export async function down(knex: Knex): Promise<void> {
    await knex(DELIVERIES_TABLE).whereNot('kind', 'webhook').delete();
    await knex.schema.alterTable(DELIVERIES_TABLE, (t) => {
        t.dropColumn('kind');
    });
}
