import type { Knex } from 'knex';

/**
 * What the authentication check needs and keeps (docs/api.md, "Authentication check"):
 * the SMTP client's address, its HELO name and the envelope sender of each stored copy
 * (NULL when the ingest was not told them, and in every row stored before), and the
 * check's answer once worked out (JSON text, NULL until the first request).
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('emails', (t) => {
        t.string('client_address', 64).nullable();
        t.string('client_helo', 255).nullable();
        t.text('mail_from').nullable();
        t.text('auth_check').nullable();
    });
}

/** Drops the four columns: the kept checks and the SMTP sessions' details are lost. */
export async function down(knex: Knex): Promise<void> {
    await knex.schema.alterTable('emails', (t) => {
        t.dropColumn('auth_check');
        t.dropColumn('mail_from');
        t.dropColumn('client_helo');
        t.dropColumn('client_address');
    });
}
