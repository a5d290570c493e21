/**
 * The one-call save of a small batch of new mail as a prepared statement: an INSERT of
 * the batch's rows into a view of the writer's connection, whose triggers write them
 * where they go. The statement is compiled once for each number of rows and its values
 * are bound, where an SQL text with the values written in was compiled again for each
 * batch, a sixth of SQLite's work for a small message (docs/design.md, "SQLite connections").
 */

import type { StagedBlob } from '../../blob-store/blob-store';
import type { StoredAttachment } from '../../types';
import { toInsertRow } from '../sql/rows';
import type { PlannedInsert } from '../sql/save-plan';
import { BLOBS_TABLE, DELIVERIES_TABLE, EMAIL_BLOBS_TABLE, EMAILS_TABLE } from '../sql/schema';
import { SEARCH_INDEX_TABLE, SQLITE_DOCUMENT_SQL } from '../sql/search-index';
import { INSERT_COLUMNS, insertValues } from './batch-sql';
import { MAX_TAIL_CHARS } from './sql-literals';

/** The view a batch's rows are inserted into: TEMP, so it lives on the writer's connection only. */
export const SAVE_ROWS_VIEW = 'save_rows';

/** What a row of the view holds, its first column. */
const enum RowKind {
    /**
     * An email row: its columns in INSERT_COLUMNS' order, then its raw message's content
     * and content type when the row brings that blob (the first copy of a delivery), then,
     * on the batch's first row only, the guard's id digests and (inbox, source) pairs as JSON.
     */
    Email = 1,
    /** An outbox row: id, kind, message_id, url, created_at. */
    Outbox = 2,
    /** A staged blob no email row brings (an attachment): key, content, size, content_type. */
    Blob = 3
}

/** Values a row carries after its kind: an email row's, the most. */
export const ROW_VALUES = INSERT_COLUMNS.length + 4;

const RAW_CONTENT = INSERT_COLUMNS.length;
const GUARD = INSERT_COLUMNS.length + 2;
const RAW_KEY = INSERT_COLUMNS.indexOf('raw_key');

/** The message the guard fails with when a stored row matches (the batch then takes the careful way). */
export const ROWS_GUARD_MESSAGE = 'a stored row matches the batch';

/** Most rows one prepared insert takes (each binds ROW_VALUES + 1 values); a larger batch writes SQL text instead. */
export const MAX_SAVE_ROWS = 64;

const column = (i: number) => `c${i}`;
const values = (count: number) => Array.from({ length: count }, (_, i) => `new.${column(i)}`).join(', ');

// The newest email is the one the trigger just inserted: seq is AUTOINCREMENT, and the
// save holds the write lock. max(seq) is a seek to the rowid b-tree's last entry.
const NEWEST = `(SELECT max(seq) FROM ${EMAILS_TABLE})`;

/**
 * The view and its triggers, one per kind of row, in the order save-plan.ts's writes go:
 * the guard, then each email with its links and its search document (rows in rowid order,
 * as FTS5 writes best), the outbox, the blobs. `indexed`: whether the database has the
 * search index. Run once when the writer's connection opens.
 */
export function saveRowsSchemaSql(indexed: boolean): string {
    const columns = Array.from({ length: ROW_VALUES }, (_, i) => column(i));
    const nulls = columns.map(() => 'NULL').join(', ');
    const trigger = (name: string, kind: RowKind, body: string) => `CREATE TEMP TRIGGER ${SAVE_ROWS_VIEW}_${name} INSTEAD OF INSERT ON ${SAVE_ROWS_VIEW} WHEN new.kind = ${kind} BEGIN
${body}
END`;
    return [
        `CREATE TEMP VIEW ${SAVE_ROWS_VIEW} (kind, ${columns.join(', ')}) AS SELECT NULL, ${nulls} WHERE 0`,
        trigger('email', RowKind.Email, [
            // The lookup's own two probes (batch-sql.ts, noneStoredSql), on the first row, before any email is written.
            `SELECT RAISE(ABORT, '${ROWS_GUARD_MESSAGE}') WHERE new.${column(GUARD)} IS NOT NULL AND (EXISTS (SELECT 1 FROM ${EMAILS_TABLE}
    WHERE message_id_hash IN (SELECT value FROM json_each(new.${column(GUARD)}) UNION ALL SELECT value ->> 1 FROM json_each(new.${column(GUARD + 1)})))
    OR EXISTS (SELECT 1 FROM ${EMAILS_TABLE} WHERE (inbox, source_id_hash) IN (SELECT value ->> 0, value ->> 1 FROM json_each(new.${column(GUARD + 1)}))
    AND message_id_hash <> source_id_hash));`,
            `INSERT INTO ${EMAILS_TABLE} (${INSERT_COLUMNS.join(', ')}) VALUES (${values(INSERT_COLUMNS.length)});`,
            upsertBlobSql(`new.${column(RAW_KEY)}`, `new.${column(RAW_CONTENT)}`, `length(new.${column(RAW_CONTENT)})`, `new.${column(RAW_CONTENT + 1)}`, `WHERE new.${column(RAW_CONTENT)} IS NOT NULL`),
            // UNION: a key counts once per email, as in the table's key.
            `INSERT INTO ${EMAIL_BLOBS_TABLE} (email_seq, blob_key) SELECT seq, raw_key FROM ${EMAILS_TABLE} WHERE seq = ${NEWEST}
    UNION SELECT e.seq, attachment.value ->> 'blobKey' FROM ${EMAILS_TABLE} AS e, json_each(e.attachments) AS attachment WHERE e.seq = ${NEWEST};`,
            ...(indexed ? [`INSERT INTO ${SEARCH_INDEX_TABLE} (rowid, document) SELECT seq, ${SQLITE_DOCUMENT_SQL} FROM ${EMAILS_TABLE} WHERE seq = ${NEWEST};`] : [])
        ].join('\n')),
        trigger('outbox', RowKind.Outbox, `INSERT INTO ${DELIVERIES_TABLE} (id, kind, message_id, url, attempts, created_at, next_attempt_at)
    VALUES (new.c0, new.c1, new.c2, new.c3, 0, new.c4, new.c4);`),
        trigger('blob', RowKind.Blob, upsertBlobSql('new.c0', 'new.c1', 'new.c2', 'new.c3', 'WHERE true'))
    ].join(';\n');
}

// A staged blob's upsert, as batch-sql.ts's upsertBlobsSql (`WHERE` after a SELECT is what
// lets SQLite tell the upsert's ON from a join's). modified_at: when the statement runs.
function upsertBlobSql(key: string, content: string, size: string, contentType: string, where: string): string {
    return `INSERT INTO ${BLOBS_TABLE} (key, content, size, content_type, modified_at)
    SELECT ${key}, ${content}, ${size}, ${contentType}, CAST(unixepoch('subsec') * 1000 AS INTEGER) ${where}
    ON CONFLICT (key) DO UPDATE SET content = excluded.content, size = excluded.size,
    content_type = excluded.content_type, modified_at = excluded.modified_at;`;
}

/** The insert of `rows` rows into the view, each a kind and ROW_VALUES values, all bound. */
export function insertRowsSql(rows: number): string {
    const tuple = `(${Array.from({ length: ROW_VALUES + 1 }, () => '?').join(', ')})`;
    return `INSERT INTO ${SAVE_ROWS_VIEW} VALUES ${Array.from({ length: rows }, () => tuple).join(', ')}`;
}

/**
 * Appends one row's parameters to `params`: its kind, its values, NULL for the columns it
 * does not use. An email row's values are its INSERT_COLUMNS' and, optionally, its raw
 * message's content and content type, then the guard's two JSON lists.
 */
function pushRow(params: unknown[], kind: RowKind, rowValues: readonly unknown[]): void {
    params.push(kind);
    for (let i = 0; i < ROW_VALUES; i++) {
        params.push(i < rowValues.length ? rowValues[i] : null);
    }
}

/**
 * The bound values of a batch that only adds rows, as the view takes them: the emails (the
 * first copy of a delivery with its raw message, the batch's first row with the guard's
 * lists: the drafts' first-choice id digests, `hashes`, and their (inbox, source digest)
 * pairs, `sources`), then the outbox rows and the other blobs. Undefined when the batch is
 * too large for one statement: it then writes SQL text, or binds in several calls.
 */
export function rowParams(inserts: PlannedInsert[], outbox: unknown[][], blobs: StagedBlob[], hashes: string[], sources: unknown[][]): unknown[] | undefined {
    let chars = 0;
    for (const { draft } of inserts) {
        chars += draft.body.length + draft.htmlBody.length + draft.searchText.length;
    }

    const raws = new Map<string, StagedBlob>();
    for (const blob of blobs) {
        chars += blob.content.length;
        raws.set(blob.key, blob);
    }

    if (inserts.length === 0 || chars > MAX_TAIL_CHARS) {
        return undefined;
    }

    const params: unknown[] = [];
    const json = new Map<StoredAttachment[], string>();
    for (const [i, insert] of inserts.entries()) {
        const values = insertValues(toInsertRow(insert, json));
        const raw = raws.get(insert.record.rawKey);
        // Copies share their delivery's raw message: the first brings it.
        raws.delete(insert.record.rawKey);
        if (raw !== undefined || i === 0) {
            values.push(raw?.content ?? null, raw?.contentType ?? null);
        }

        if (i === 0) {
            values.push(JSON.stringify(hashes), JSON.stringify(sources));
        }

        pushRow(params, RowKind.Email, values);
    }

    for (const row of outbox) {
        pushRow(params, RowKind.Outbox, row);
    }

    for (const blob of raws.values()) {
        pushRow(params, RowKind.Blob, [blob.key, blob.content, blob.content.length, blob.contentType]);
    }

    return params.length / (1 + ROW_VALUES) > MAX_SAVE_ROWS ? undefined : params;
}
