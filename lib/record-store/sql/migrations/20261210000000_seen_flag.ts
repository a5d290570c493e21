import type { Knex } from 'knex';

/**
 * Whether someone has opened a copy (docs/api.md, "Read and unread"): `seen`, false in
 * every row stored before, as in every copy stored from now on until it is marked.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('emails', (t) => {
        t.boolean('seen').notNullable().defaultTo(false);
    });
}

/** Drops the column: every copy forgets whether it was read. */
export async function down(knex: Knex): Promise<void> {
    await knex.schema.alterTable('emails', (t) => {
        t.dropColumn('seen');
    });
}
