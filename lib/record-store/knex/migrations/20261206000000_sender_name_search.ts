import type { Knex } from 'knex';

// Copied, not imported: a migration keeps doing what it did whatever runtime code becomes
// (docs/design.md, "Migrations are history").
const isPostgres = (knex: Knex) => ['pg', 'postgres', 'postgresql'].includes(knex.client.config.client as string);

/** SQLite: the search index of 20261201000000_search, one document per email (rowid = seq). */
const SQLITE_INDEX_TABLE = 'email_search';
/** Postgres: the trigram index of the folded display name. */
const POSTGRES_INDEX = 'emails_sender_name_trgm';
/** Rows read and rewritten per statement while filling the new column. */
const BATCH_ROWS = 500;

/** An email's SQLite document from now on: the display name joins the texts, after the others. */
const DOCUMENT_SQL = "char(1) || inbox || char(2) || sender_folded || char(3) || subject_folded || char(3) || coalesce(recipient_folded, '') || char(3) || coalesce(filenames_folded, '') || char(3) || coalesce(body_folded, '') || char(3) || sender_name_folded";

// foldForSearch() as it was: toLowerCase(), and the index's three marks as U+FFFD.
const fold = (text: string): string => text.toLowerCase().replace(/[\u0001-\u0003]/g, '\uFFFD');

/**
 * Search by the sender's display name (docs/api.md, "Search"): `sender_name_folded`,
 * the display name folded as every searched text is (in JS: SQLite's lower() folds ASCII
 * only). Rows stored before get it here; only those with a display name need a write.
 * Then the index:
 * - SQLite: those rows' documents are written again with the name (a row the search
 *   back-fill has yet to fill, body_folded NULL, is not in the index yet; the back-fill
 *   adds it with the name). No index (an SQLite without FTS5 trigram): nothing to do.
 * - Postgres: a GIN trigram index on the column, as sender and subject have; without
 *   pg_trgm, none (the searches stay right, unindexed).
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('emails', (t) => {
        t.text('sender_name_folded').notNullable().defaultTo('');
    });

    const sqliteIndex = !isPostgres(knex)
        && await knex('sqlite_master').select('name').where({ type: 'table', name: SQLITE_INDEX_TABLE }).first() !== undefined;
    let after = -1;
    for (;;) {
        const rows = await knex('emails').select('seq', 'sender_name', 'body_folded').where('seq', '>', after).andWhere('sender_name', '<>', '')
            .orderBy('seq').limit(BATCH_ROWS) as Array<{ seq: number | string; sender_name: string; body_folded: string | null }>;
        if (rows.length === 0) {
            break;
        }

        for (const row of rows) {
            await knex('emails').where('seq', row.seq).update({ sender_name_folded: fold(row.sender_name) });
            if (sqliteIndex && row.body_folded !== null) {
                await knex.raw(`DELETE FROM ${SQLITE_INDEX_TABLE} WHERE rowid = ?`, [row.seq]);
                await knex.raw(`INSERT INTO ${SQLITE_INDEX_TABLE} (rowid, document) SELECT seq, ${DOCUMENT_SQL} FROM emails WHERE seq = ?`, [row.seq]);
            }
        }

        after = Number(rows[rows.length - 1]!.seq);
    }

    if (isPostgres(knex)) {
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
