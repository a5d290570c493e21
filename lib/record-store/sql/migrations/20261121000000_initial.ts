import type { Knex } from 'knex';

// Copied, not imported: a migration keeps doing what it did whatever runtime code becomes
// (docs/design.md, "Migrations are history").
const isPostgres = (knex: Knex) => ['pg', 'postgres', 'postgresql'].includes(knex.client.config.client as string);

/**
 * Characters of `message_id` that the Postgres list index holds (up to 4 bytes
 * each in UTF-8, so at most 1 KiB: well under the ~2.7 kB a btree entry may take,
 * while Message-IDs may be 10,000 characters). Real ids are far shorter than
 * this, so rows that tie on the prefix, and need the final sort step, are rare.
 * The list query must use exactly this expression to match the index.
 */
export const ORDER_PREFIX_CHARS = 256;

/** Creates the email, blob reference and API key tables. */
export async function up(knex: Knex): Promise<void> {
    const pg = isPostgres(knex);

    await knex.schema.createTable('emails', (t) => {
        // SQLite: INTEGER PRIMARY KEY AUTOINCREMENT, so a seq is never reused even
        // after the newest row is deleted; Postgres: bigserial. inboxVersion()
        // is max(seq) of an inbox and must only grow when mail is stored.
        t.bigIncrements('seq').primary();
        // Byte order everywhere: SQLite's default BINARY collation compares UTF-8
        // bytes; on Postgres the column is C-collated, whatever the database's
        // default, so ties on received_at sort the same on both backends.
        if (pg) {
            t.specificType('message_id', 'text COLLATE "C"').notNullable();
        }
        else {
            t.text('message_id').notNullable();
        }

        // Lookups by id go through SHA-256 hex digests: a btree entry holding a
        // 10,000-character id would exceed Postgres' limit.
        t.string('message_id_hash', 64).notNullable();
        t.text('source_id').notNullable();
        t.string('source_id_hash', 64).notNullable();
        t.text('inbox').notNullable();
        t.text('sender').notNullable();
        t.text('recipient').notNullable();
        t.text('subject').notNullable();
        // Lowercased in JS at write time so that case-insensitive filters fold
        // Unicode identically on both backends (SQLite's LIKE and lower() fold ASCII
        // only; Postgres' lower() depends on the database collation).
        t.text('sender_folded').notNullable();
        t.text('subject_folded').notNullable();
        t.text('body').notNullable();
        t.text('html_body').notNullable();
        t.bigInteger('received_at').notNullable();
        t.text('raw_key').notNullable();
        t.bigInteger('raw_size').notNullable();
        t.boolean('has_attachments').notNullable();
        // JSON text of StoredAttachment[]; blob keys are also in email_blobs.
        t.text('attachments').notNullable();

        t.unique(['message_id_hash'], { indexName: 'emails_message_id_hash_unique' });
        t.unique(['inbox', 'source_id_hash'], { indexName: 'emails_inbox_source_unique' });
        // inboxVersion() (max(seq) of an inbox) and deleteInboxBatch() (oldest first).
        t.index(['inbox', 'seq'], 'emails_inbox_seq');
    });

    // Keyset listing: ORDER BY received_at DESC, message_id DESC inside one inbox,
    // read backwards from the index so page 1,000 costs what page 1 costs.
    if (pg) {
        // A C-collated prefix of the id keeps every entry bounded; the list query
        // orders by (received_at, prefix, message_id), so Postgres reads the index in
        // order and only sorts rows that share received_at and the whole prefix
        // (an Incremental Sort over groups of, in practice, one row).
        await knex.raw(`CREATE INDEX emails_inbox_order ON emails (inbox, received_at, left(message_id, ${ORDER_PREFIX_CHARS}))`);
    }
    else {
        // SQLite has no entry size limit: the whole id is in the index and no sort
        // step remains.
        await knex.raw('CREATE INDEX emails_inbox_order ON emails (inbox, received_at, message_id)');
    }

    // One row per blob a record references (raw message and attachments). The
    // orphan sweep asks "which of these keys are referenced" for batches of keys:
    // an indexed lookup here instead of parsing every record's attachment JSON.
    await knex.schema.createTable('email_blobs', (t) => {
        t.bigInteger('email_seq').notNullable().references('seq').inTable('emails').onDelete('CASCADE');
        t.text('blob_key').notNullable();
        t.primary(['email_seq', 'blob_key']);
        t.index(['blob_key'], 'email_blobs_blob_key');
    });

    await knex.schema.createTable('api_keys', (t) => {
        t.increments('id').primary();
        t.text('name').notNullable();
        t.string('key_hash', 64).notNullable();
        t.bigInteger('created_at').notNullable();
        t.bigInteger('revoked_at').nullable();
        t.unique(['name'], { indexName: 'api_keys_name_unique' });
        t.unique(['key_hash'], { indexName: 'api_keys_key_hash_unique' });
    });
}

/** Drops everything `up` created. */
export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTableIfExists('api_keys');
    await knex.schema.dropTableIfExists('email_blobs');
    await knex.schema.dropTableIfExists('emails');
}
