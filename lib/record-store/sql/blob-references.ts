/**
 * Which blobs records reference, asked of `email_blobs` (one row per record and key,
 * indexed by key). The copies of one delivery share its blobs, so a key may have up
 * to 100 rows: both questions stop at the first one.
 */

import type { Knex } from 'knex';
import { BLOBS_TABLE, EMAIL_BLOBS_TABLE } from './schema';

/** Keys per statement: under SQLite's bound-parameter limit (999 before 3.32), and short Postgres statements. */
const KEYS_PER_STATEMENT = 500;

/**
 * SQL of the keys among `count` bound parameters that some record references. VALUES
 * names its column `column1` on SQLite and Postgres alike; CAST gives Postgres its type.
 */
export function referencedKeysSql(count: number): string {
    const values = Array.from({ length: count }, () => '(CAST(? AS TEXT))').join(', ');
    return `SELECT k.column1 AS blob_key FROM (VALUES ${values}) AS k
        WHERE EXISTS (SELECT 1 FROM ${EMAIL_BLOBS_TABLE} WHERE ${EMAIL_BLOBS_TABLE}.blob_key = k.column1)`;
}

/** Of `keys`, those some record references: one index probe per key, whatever the number of copies. */
export async function referencedBlobKeys(knex: Knex, keys: string[]): Promise<Set<string>> {
    const referenced = new Set<string>();
    const unique = [...new Set(keys)];
    for (let i = 0; i < unique.length; i += KEYS_PER_STATEMENT) {
        const chunk = unique.slice(i, i + KEYS_PER_STATEMENT);
        const result = await knex.raw(referencedKeysSql(chunk.length), chunk) as { rows: { blob_key: string }[] } | { blob_key: string }[];
        // node-postgres answers a result object, node-sqlite3 the rows.
        for (const row of Array.isArray(result) ? result : result.rows) {
            referenced.add(row.blob_key);
        }
    }

    return referenced;
}

/**
 * SQL that deletes the rows of the SQLite `blobs` table whose keys are in `keysIn` (an
 * SQL list or subquery) and that no record references, answering their keys. Run in
 * the transaction that replaced copies, after its links are written: a blob another
 * copy (stored earlier, or in the same batch) still uses stays.
 */
export function removeUnreferencedStagedBlobsSql(keysIn: string): string {
    return `DELETE FROM ${BLOBS_TABLE} WHERE key IN ${keysIn}
        AND NOT EXISTS (SELECT 1 FROM ${EMAIL_BLOBS_TABLE} WHERE ${EMAIL_BLOBS_TABLE}.blob_key = ${BLOBS_TABLE}.key) RETURNING key`;
}
