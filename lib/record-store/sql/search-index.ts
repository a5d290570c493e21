/**
 * The trigram indexes of the searched texts, as runtime code uses them (the migration that
 * made them, 20261201000000_search, keeps its own copies of these names): what one email's
 * SQLite document holds, how a search asks SQLite's index for candidates, which its exact
 * conditions (search-sql.ts) then check, and which needles Postgres' indexes can read
 * (docs/design.md, "Search").
 */

import type { Knex } from 'knex';
import { EMAILS_TABLE, SEARCH_INDEX_TABLE, SQLITE_DOCUMENT_SQL } from './schema';

export { SEARCH_INDEX_TABLE, SQLITE_DOCUMENT_SQL };

/**
 * Trigrams of one needle (or of the inbox) a candidate query asks for at most: past a
 * few, each one more narrows the candidates little and costs the read of its list.
 */
export const MAX_TRIGRAMS = 8;

// The marks of a document; a needle that holds one asks the index nothing (search-text.ts).
const MARKS = /[\u0001-\u0003]/;

/**
 * The FTS5 query of the candidates for `needles` (lowercased) in `inbox`: every trigram is
 * a phrase of its own (detail=none has no longer ones), all ANDed; null when no needle has
 * three characters (or every one holds a mark): then the index cannot help.
 */
export function ftsCandidateQuery(inbox: string, needles: string[]): string | null {
    const trigrams = needles.flatMap((needle) => MARKS.test(needle) ? [] : spreadTrigrams([...needle]));
    if (trigrams.length === 0) {
        return null;
    }

    const marked = [...`\u0001${inbox}\u0002`];
    // The first and last trigrams of the inbox are the ones no other inbox's name shares.
    const inboxTrigrams = spreadTrigrams(marked);
    return [...new Set([...inboxTrigrams, ...trigrams])].map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND ');
}

/** Whether Postgres' trigram index can answer for `needle` (lowercased): pg_trgm reads runs of three or more letters or digits. */
export function postgresIndexable(needle: string): boolean {
    return !MARKS.test(needle) && /[a-z0-9]{3}/.test(needle);
}

/** A LIKE pattern (ESCAPE '\') that matches `text` anywhere, `%`, `_` and `\` literal. */
export function likeContains(text: string): string {
    return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * SQLite: adds the documents of the emails whose message_id_hash is in `hashes` to the
 * index, in the caller's transaction. A save runs it once its rows are whole (a long text
 * is appended in pieces after the insert), so the index never holds part of a text. In
 * rowid order: FTS5 writes its pending terms out as a segment of their own whenever a
 * rowid comes below the last one it took, and the digests' index gives rows in random order.
 */
export async function indexSearchDocuments(trx: Knex.Transaction | Knex, hashes: string[]): Promise<void> {
    if (hashes.length > 0) {
        await trx.raw(`INSERT INTO ${SEARCH_INDEX_TABLE} (rowid, document) SELECT seq, ${SQLITE_DOCUMENT_SQL} FROM ${EMAILS_TABLE}
    WHERE message_id_hash IN (SELECT value FROM json_each(?)) ORDER BY seq`, [JSON.stringify(hashes)]);
    }
}

/** SQLite: adds the documents of the emails with these seqs (the back-fill's rows). */
export async function indexSearchDocumentsBySeq(trx: Knex.Transaction | Knex, seqs: Array<number | string>): Promise<void> {
    if (seqs.length > 0) {
        await trx.raw(`INSERT INTO ${SEARCH_INDEX_TABLE} (rowid, document) SELECT seq, ${SQLITE_DOCUMENT_SQL} FROM ${EMAILS_TABLE}
    WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq`, [JSON.stringify(seqs.map(Number))]);
    }
}

/** SQLite: whether this database has the index (an SQLite without FTS5 trigram left it out). */
export async function hasSqliteSearchIndex(knex: Knex): Promise<boolean> {
    const row = await knex('sqlite_master').select('name').where({ type: 'table', name: SEARCH_INDEX_TABLE }).first() as unknown;
    return row !== undefined;
}

// Every trigram of `chars`, or MAX_TRIGRAMS of them spread evenly (the first and the last
// included). Overlapping ones: with detail=none the index says which documents hold a
// trigram, not where, so each one more narrows the candidates further.
function spreadTrigrams(chars: string[]): string[] {
    const count = chars.length - 2;
    if (count < 1) {
        return [];
    }

    const starts = count <= MAX_TRIGRAMS
        ? Array.from({ length: count }, (_, i) => i)
        : Array.from({ length: MAX_TRIGRAMS }, (_, k) => Math.round(k * (count - 1) / (MAX_TRIGRAMS - 1)));
    return starts.map((i) => chars.slice(i, i + 3).join(''));
}
