import type { Knex } from 'knex';

// Copied, not imported: a migration keeps doing what it did whatever runtime code becomes
// (docs/design.md, "Migrations are history").
const isPostgres = (knex: Knex) => ['pg', 'postgres', 'postgresql'].includes(knex.client.config.client as string);

/** Partial index of the rows the search back-fill has yet to fill (body_folded NULL): empty once it is done. */
const PENDING_INDEX = 'emails_search_pending';
/** SQLite: the trigram index of every searched text, one document per email (rowid = seq). */
const SQLITE_INDEX_TABLE = 'email_search';
const SQLITE_DELETE_TRIGGER = 'email_search_on_delete';
/** Postgres: the trigram index of the folded body, inbox first (btree_gin) when it can be. */
const POSTGRES_INDEX = 'emails_search_trgm';

/**
 * Search and tags (docs/api.md, "Search"). New columns: `tags` (JSON text), `sender_name`,
 * and the folded texts a search compares, `recipient_folded`, `filenames_folded` and
 * `body_folded` (the text body and the HTML's text). The folded ones are NULL in rows
 * stored before, until the back-fill of migrate() fills them (backfill-search.ts): it
 * works out the HTML's text in JS, which no SQL can. Then the index:
 * - SQLite: an FTS5 table, trigram tokenizer (case-sensitive: the texts are folded
 *   already, so it compares exactly what the filters compare), contentless (the texts are
 *   in `emails`), detail=none (candidates only: a query rechecks each on `emails`, and the
 *   index is a sixth of a full one). Saves add each email's document; a trigger drops it
 *   with its row, whatever deletes the row. Where this SQLite lacks FTS5, trigram (3.34)
 *   or contentless_delete (3.43), no index: searches read the inbox's mail instead.
 * - Postgres: a GIN index on (inbox, body_folded) with pg_trgm (and btree_gin for the
 *   inbox); without btree_gin the body alone; without pg_trgm, none. Sender and subject
 *   have theirs (20261121120000_search_trigrams). A search's terms are then LIKEs on those
 *   columns, which the index checks on the one column it needs (one read of a long body).
 */
export async function up(knex: Knex): Promise<void> {
    const pg = isPostgres(knex);
    await knex.schema.alterTable('emails', (t) => {
        t.text('tags').notNullable().defaultTo('[]');
        t.text('sender_name').notNullable().defaultTo('');
        t.text('recipient_folded').nullable();
        t.text('filenames_folded').nullable();
        t.text('body_folded').nullable();
    });
    await knex.raw(`CREATE INDEX ${PENDING_INDEX} ON emails (seq) WHERE body_folded IS NULL`);

    if (!pg) {
        try {
            // A savepoint: a refused CREATE must not abort the migration's transaction.
            await knex.transaction(async (trx) => {
                await trx.raw(`CREATE VIRTUAL TABLE ${SQLITE_INDEX_TABLE} USING fts5(document, tokenize = 'trigram case_sensitive 1', content = '', contentless_delete = 1, detail = none)`);
                // Segments merged 8 at a time, not 4: a save adds a small segment per commit,
                // and merging them more rarely costs a search a few more segments to read.
                await trx.raw(`INSERT INTO ${SQLITE_INDEX_TABLE} (${SQLITE_INDEX_TABLE}, rank) VALUES ('automerge', 8)`);
                await trx.raw(`CREATE TRIGGER ${SQLITE_DELETE_TRIGGER} AFTER DELETE ON emails BEGIN
    DELETE FROM ${SQLITE_INDEX_TABLE} WHERE rowid = OLD.seq;
END`);
            });
        }
        catch {
            // Documented fallback (docs/operations.md, "Search"): unindexed search.
        }

        return;
    }

    for (const [extension, columns] of [['btree_gin', 'inbox, body_folded gin_trgm_ops'], ['pg_trgm', 'body_folded gin_trgm_ops']]) {
        try {
            await knex.transaction(async (trx) => {
                await trx.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
                await trx.raw(`CREATE EXTENSION IF NOT EXISTS ${extension}`);
                await trx.raw(`CREATE INDEX ${POSTGRES_INDEX} ON emails USING gin (${columns})`);
            });
            return;
        }
        catch {
            // Next the index without the inbox, then none (docs/operations.md, "Search").
        }
    }
}

/** Drops the index, its trigger and the columns (the extensions stay: other schemas may use them). */
export async function down(knex: Knex): Promise<void> {
    if (isPostgres(knex)) {
        await knex.raw(`DROP INDEX IF EXISTS ${POSTGRES_INDEX}`);
    }
    else {
        await knex.raw(`DROP TRIGGER IF EXISTS ${SQLITE_DELETE_TRIGGER}`);
        await knex.raw(`DROP TABLE IF EXISTS ${SQLITE_INDEX_TABLE}`);
    }

    await knex.raw(`DROP INDEX IF EXISTS ${PENDING_INDEX}`);
    await knex.schema.alterTable('emails', (t) => {
        t.dropColumn('tags');
        t.dropColumn('sender_name');
        t.dropColumn('recipient_folded');
        t.dropColumn('filenames_folded');
        t.dropColumn('body_folded');
    });
}
