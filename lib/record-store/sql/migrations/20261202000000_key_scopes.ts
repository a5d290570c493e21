import type { Knex } from 'knex';

// Self-contained: a migration keeps doing what it did whatever the runtime code becomes.

/**
 * Keys with a scope (docs/api.md, "Keys with a scope"): `inbox_prefix` limits a key to
 * the inboxes whose name starts with it (NULL: every inbox), `read_only` refuses every
 * change. Existing keys get NULL and false, so they keep full access.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('api_keys', (t) => {
        t.text('inbox_prefix').nullable();
        t.boolean('read_only').notNullable().defaultTo(false);
    });
}

/** Drops the two columns: every key has full access again. */
export async function down(knex: Knex): Promise<void> {
    await knex.schema.alterTable('api_keys', (t) => {
        t.dropColumn('read_only');
        t.dropColumn('inbox_prefix');
    });
}
