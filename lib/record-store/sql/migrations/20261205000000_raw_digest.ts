import type { Knex } from 'knex';

// Copied, not imported: a migration keeps doing what it did whatever runtime code becomes
// (docs/design.md, "Migrations are history").
const isPostgres = (knex: Knex) => ['pg', 'postgres', 'postgresql'].includes(knex.client.config.client as string);

/** The unique index of 20261121000000_initial this one replaces: one copy per (inbox, Message-ID). */
const OLD_UNIQUE = 'emails_inbox_source_unique';

/** One copy per (inbox, Message-ID, raw bytes). */
export const NEW_UNIQUE = 'emails_inbox_source_raw_unique';

/**
 * `raw_sha256`, the SHA-256 hex of the raw message, and one copy per (inbox, Message-ID,
 * raw digest) instead of one per (inbox, Message-ID): the same Message-ID with other bytes
 * is another email, and only identical bytes replace a stored copy (docs/design.md,
 * "Identity and inboxes"). Rows stored before have no digest (NULL, never equal to
 * another), so a message stored before this migration is never replaced by a resend.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('emails', (t) => {
        t.string('raw_sha256', 64).nullable();
    });

    // knex made the old one a constraint on Postgres and a unique index on SQLite.
    await knex.raw(isPostgres(knex) ? `ALTER TABLE emails DROP CONSTRAINT ${OLD_UNIQUE}` : `DROP INDEX ${OLD_UNIQUE}`);
    // Also the index of the save's lookup by (inbox, source_id_hash): its first two columns.
    await knex.raw(`CREATE UNIQUE INDEX ${NEW_UNIQUE} ON emails (inbox, source_id_hash, raw_sha256)`);
}

/** Back to one copy per (inbox, Message-ID): fails while an inbox holds two copies of one Message-ID. */
export async function down(knex: Knex): Promise<void> {
    await knex.raw(`DROP INDEX ${NEW_UNIQUE}`);
    await knex.raw(isPostgres(knex) ?
        `ALTER TABLE emails ADD CONSTRAINT ${OLD_UNIQUE} UNIQUE (inbox, source_id_hash)` :
        `CREATE UNIQUE INDEX ${OLD_UNIQUE} ON emails (inbox, source_id_hash)`);
    await knex.schema.alterTable('emails', (t) => {
        t.dropColumn('raw_sha256');
    });
}
