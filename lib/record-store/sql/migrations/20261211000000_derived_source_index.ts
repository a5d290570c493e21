import type { Knex } from 'knex';

// Copied, not imported: a migration keeps doing what it did whatever runtime code becomes
// (docs/design.md, "Migrations are history").
const isPostgres = (knex: Knex) => ['pg', 'postgres', 'postgresql'].includes(knex.client.config.client as string);

/** One copy per (inbox, Message-ID, raw bytes), every row (20261205000000_raw_digest). */
const FULL_INDEX = 'emails_inbox_source_raw_unique';
/** The same, over the rows whose id is not their Message-ID. */
const DERIVED_INDEX = 'emails_inbox_source_derived';

/**
 * SQLite: the index of (inbox, Message-ID digest, raw digest) holds only the copies stored
 * under an id other than their Message-ID (another inbox's copy, other bytes, an overlong
 * or absent id). A copy stored under its Message-ID is found by the id's own index (its
 * digest is the Message-ID's), so the save's lookup of an (inbox, Message-ID) reads both
 * (docs/design.md, "Identity and inboxes"). Most mail is such a copy, and a digest is a
 * random key: the full index wrote a page of its own to the WAL for almost every message.
 * Postgres keeps the full index.
 */
export async function up(knex: Knex): Promise<void> {
    if (isPostgres(knex)) {
        return;
    }

    await knex.raw(`CREATE UNIQUE INDEX ${DERIVED_INDEX} ON emails (inbox, source_id_hash, raw_sha256) WHERE message_id_hash <> source_id_hash`);
    await knex.raw(`DROP INDEX ${FULL_INDEX}`);
}

/** The full index again. */
export async function down(knex: Knex): Promise<void> {
    if (isPostgres(knex)) {
        return;
    }

    await knex.raw(`CREATE UNIQUE INDEX ${FULL_INDEX} ON emails (inbox, source_id_hash, raw_sha256)`);
    await knex.raw(`DROP INDEX ${DERIVED_INDEX}`);
}
