import type { Knex } from 'knex';

// Copied, not imported: a migration keeps doing what it did whatever runtime code becomes
// (docs/design.md, "Migrations are history").
const isPostgres = (knex: Knex) => ['pg', 'postgres', 'postgresql'].includes(knex.client.config.client as string);

/** SQLite: the search index of 20261201000000_search, one document per email (rowid = seq). */
const SQLITE_INDEX_TABLE = 'email_search';
/** Postgres: the trigram index of the folded display name. */
const POSTGRES_INDEX = 'emails_sender_name_trgm';
/** Rows read per statement while folding names that are not plain ASCII in JS. */
const BATCH_ROWS = 500;

/** An email's SQLite document from now on: the display name joins the texts, after the others. */
const DOCUMENT_SQL = "char(1) || inbox || char(2) || sender_folded || char(3) || subject_folded || char(3) || coalesce(recipient_folded, '') || char(3) || coalesce(filenames_folded, '') || char(3) || coalesce(body_folded, '') || char(3) || sender_name_folded";

// foldForSearch() as it was: toLowerCase(), and the index's three marks as U+FFFD.
const fold = (text: string): string => text.toLowerCase().replace(/[\u0001-\u0003]/g, '\uFFFD');

/**
 * Search by the sender's display name (docs/api.md, "Search"): `sender_name_folded`,
 * the display name folded as every searched text is (toLowerCase(): SQLite's lower() folds
 * ASCII only, Postgres' follows the collation). Rows stored before get it here; only those
 * with a display name need a write. Then the index:
 * - SQLite: those rows' documents are written again with the name. No index (an SQLite
 *   without FTS5 trigram): nothing to do.
 * - Postgres: a GIN trigram index on the column, as sender and subject have; without
 *   pg_trgm, none (the searches stay right, unindexed).
 */
export async function up(knex: Knex): Promise<void> {
    const pg = isPostgres(knex);
    await knex.schema.alterTable('emails', (t) => {
        t.text('sender_name_folded').notNullable().defaultTo('');
    });

    // A name of printable ASCII only: lower() folds it exactly as toLowerCase() does (on
    // Postgres in the C collation, whatever the database's), in one statement.
    const nonAscii = pg ? "sender_name ~ '[^ -~]'" : "sender_name GLOB '*[^ -~]*'";
    await knex.raw(`UPDATE emails SET sender_name_folded = lower(sender_name${pg ? ' COLLATE "C"' : ''}) WHERE sender_name <> '' AND NOT (${nonAscii})`);
    // The others in JS, a batch at a time.
    let after = -1;
    for (;;) {
        const rows = await knex('emails').select('seq', 'sender_name').where('seq', '>', after).andWhere('sender_name', '<>', '').andWhereRaw(nonAscii)
            .orderBy('seq').limit(BATCH_ROWS) as Array<{ seq: number | string; sender_name: string }>;
        if (rows.length === 0) {
            break;
        }

        for (const row of rows) {
            await knex('emails').where('seq', row.seq).update({ sender_name_folded: fold(row.sender_name) });
        }

        after = Number(rows[rows.length - 1]!.seq);
    }

    if (!pg) {
        const sqliteIndex = await knex('sqlite_master').select('name').where({ type: 'table', name: SQLITE_INDEX_TABLE }).first() !== undefined;
        if (sqliteIndex) {
            // The documents of the named rows again, with the name; a row the search back-fill
            // has yet to fill (body_folded NULL) is not in the index: the back-fill adds it.
            const named = "SELECT seq FROM emails WHERE sender_name <> '' AND body_folded IS NOT NULL";
            await knex.raw(`DELETE FROM ${SQLITE_INDEX_TABLE} WHERE rowid IN (${named})`);
            await knex.raw(`INSERT INTO ${SQLITE_INDEX_TABLE} (rowid, document) SELECT seq, ${DOCUMENT_SQL} FROM emails WHERE sender_name <> '' AND body_folded IS NOT NULL`);
        }

        return;
    }

    try {
        // A savepoint: a refused CREATE must not abort the migration's transaction.
        await knex.transaction(async (trx) => {
            await trx.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
            await trx.raw(`CREATE INDEX ${POSTGRES_INDEX} ON emails USING gin (sender_name_folded gin_trgm_ops)`);
        });
    }
    catch {
        // Documented fallback (docs/operations.md, "Search"): unindexed search.
    }
}

/** Drops the index and the column; SQLite's documents keep the name, which only makes more candidates (each is checked). */
export async function down(knex: Knex): Promise<void> {
    if (isPostgres(knex)) {
        await knex.raw(`DROP INDEX IF EXISTS ${POSTGRES_INDEX}`);
    }

    await knex.schema.alterTable('emails', (t) => {
        t.dropColumn('sender_name_folded');
    });
}
