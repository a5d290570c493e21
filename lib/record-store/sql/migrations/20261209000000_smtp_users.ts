import type { Knex } from 'knex';

// Self-contained: a migration keeps doing what it did whatever the runtime code becomes.

/**
 * SMTP users kept in the store (docs/tenants.md): a name that logs in, the salted scrypt
 * hash of its password (never the password), and the inbox prefix every copy of its mail
 * is stored under. A deleted user's row goes, so its name may be given again.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('smtp_users', (t) => {
        t.increments('id').primary();
        t.text('name').notNullable();
        t.text('password_hash').notNullable();
        t.string('inbox_prefix', 32).notNullable();
        t.bigInteger('created_at').notNullable();
        t.unique(['name'], { indexName: 'smtp_users_name_unique' });
    });
}

/** Drops the table: every stored SMTP user is gone (SMTP_AUTH_USERS still log in). */
export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTableIfExists('smtp_users');
}
