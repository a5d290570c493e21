/**
 * The SQL texts of the embedded store's save (sqlite-batch-writer.ts): the statements it
 * prepares once, taking their rows from one JSON list, and the write tail of a small batch,
 * its values written in as literals (sql-literals.ts) so that BEGIN, the writes and the
 * COMMIT go as one exec (docs/design.md, "SQLite connections").
 */

import type { StagedBlob } from '../../blob-store/blob-store';
import { BLOBS_TABLE, DELIVERIES_TABLE, EMAIL_BLOBS_TABLE, EMAIL_COLUMNS, EMAILS_TABLE } from '../sql/schema';
import { SEARCH_INDEX_TABLE, SQLITE_DOCUMENT_SQL } from '../sql/search-index';
import { MAX_TAIL_CHARS, sqlJson } from './sql-literals';

/** The columns an insert writes (toInsertRow()'s keys). */
export const INSERT_COLUMNS = [
    'message_id', 'message_id_hash', 'source_id', 'source_id_hash', 'inbox', 'sender', 'recipient', 'subject',
    'sender_folded', 'subject_folded', 'body', 'html_body', 'received_at', 'raw_key', 'raw_size', 'raw_sha256', 'has_attachments', 'attachments',
    'links', 'codes', 'tags', 'sender_name', 'recipient_folded', 'filenames_folded', 'body_folded', 'sender_name_folded',
    'client_address', 'client_helo', 'mail_from'
];


// The writes that take their rows from one JSON list (json_each over `list`): `?` to
// prepare, or the list as a literal in a small batch's write tail (whose emails insert
// writes its rows as VALUES instead: insertValuesSql()).
export const insertEmailsSql = (list: string) => `INSERT INTO ${EMAILS_TABLE} (${INSERT_COLUMNS.join(', ')})
    SELECT ${INSERT_COLUMNS.map((_, i) => `value ->> ${i}`).join(', ')} FROM json_each(${list})`;
// By the id digests, so the insert needs no RETURNING read back into JS; the keys are
// read from the rows just written, so 100 copies of a message with 990 attachments
// do not build 99,100 pairs on the event loop. UNION: a key counts once per email.
export const insertLinksSql = (hashes: string) => `INSERT INTO ${EMAIL_BLOBS_TABLE} (email_seq, blob_key)
    SELECT e.seq, e.raw_key FROM ${EMAILS_TABLE} AS e WHERE e.message_id_hash IN (SELECT value FROM json_each(${hashes}))
    UNION SELECT e.seq, attachment.value ->> 'blobKey' FROM ${EMAILS_TABLE} AS e, json_each(e.attachments) AS attachment
    WHERE e.message_id_hash IN (SELECT value FROM json_each(${hashes}))`;
// The outbox rows of the stored emails (delivery-outbox.ts), due at once.
export const insertDeliveriesSql = (list: string) => `INSERT INTO ${DELIVERIES_TABLE} (id, kind, message_id, url, attempts, created_at, next_attempt_at)
    SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, 0, value ->> 4, value ->> 4 FROM json_each(${list})`;
/**
 * The search index's documents of the rows just written (search-index.ts), once their texts
 * are whole, in rowid order: FTS5 writes its pending terms out as a segment of their own
 * whenever a rowid comes below the last, and the digests' index gives the rows in random order.
 */
export const indexDocumentsSql = (hashes: string) => `INSERT INTO ${SEARCH_INDEX_TABLE} (rowid, document) SELECT seq, ${SQLITE_DOCUMENT_SQL} FROM ${EMAILS_TABLE}
    WHERE message_id_hash IN (SELECT value FROM json_each(${hashes})) ORDER BY seq`;

// The rows of an (inbox, Message-ID) `sources` pair: a copy stored under its Message-ID has
// that id's digest (the id's index finds it); any other is in the derived copies' partial
// index, whose WHERE the query repeats so that SQLite may use it (docs/design.md, "Identity and inboxes").
const heldIds = (hashes: string, sources: string) => `message_id_hash IN (SELECT value FROM json_each(${hashes}) UNION ALL SELECT value ->> 1 FROM json_each(${sources}))`;
const derivedCopies = (sources: string) => `(inbox, source_id_hash) IN (SELECT value ->> 0, value ->> 1 FROM json_each(${sources})) AND message_id_hash <> source_id_hash`;

/** Index lookups: the holders of the drafts' first-choice ids (`hashes`, a JSON list), and the stored copies of each (inbox, source) of `sources`. */
export const lookupSql = (hashes: string, sources: string) => `SELECT ${EMAIL_COLUMNS.join(', ')}, message_id_hash, source_id_hash FROM ${EMAILS_TABLE}
    WHERE ${heldIds(hashes, sources)}
    UNION SELECT ${EMAIL_COLUMNS.join(', ')}, message_id_hash, source_id_hash FROM ${EMAILS_TABLE}
    WHERE ${derivedCopies(sources)}`;

/**
 * Fails (with GUARD_ERROR) when the lookup of `hashes` and `sources` would find a stored
 * row (its two index probes, no columns read): then the batch was planned on a guess that
 * does not hold. CASE evaluates only the branch taken.
 */
export const noneStoredSql = (hashes: string, sources: string) => `SELECT CASE
    WHEN EXISTS (SELECT 1 FROM ${EMAILS_TABLE} WHERE ${heldIds(hashes, sources)})
    OR EXISTS (SELECT 1 FROM ${EMAILS_TABLE} WHERE ${derivedCopies(sources)})
    THEN json('a stored row matches') ELSE 1 END`;
/** What SQLite says when that check fails (json() of a text that is not JSON). */
export const GUARD_ERROR = 'malformed JSON';

/**
 * Staged blobs per upsert statement (5 values each); a statement is prepared once
 * for each row count used, so at most this many are kept.
 */
export const BLOB_ROWS_PER_STATEMENT = 32;

// The upsert of one row per tuple: `(?, ?, ?, ?, ?)` to prepare, or the values as literals.
export function upsertBlobsSql(tuples: string[]): string {
    return `INSERT INTO ${BLOBS_TABLE} (key, content, size, content_type, modified_at) VALUES ${rope(tuples, ', ')}
        ON CONFLICT (key) DO UPDATE SET content = excluded.content, size = excluded.size,
        content_type = excluded.content_type, modified_at = excluded.modified_at`;
}

/** An insert row's values in INSERT_COLUMNS' order (SQLite has no booleans). */
export function insertValues(row: Record<string, unknown>): unknown[] {
    return INSERT_COLUMNS.map((column) => (typeof row[column] === 'boolean' ? Number(row[column]) : row[column]));
}

/**
 * The writes of a batch that only adds rows, as one SQL text with its values as
 * literals (sql-literals.ts, row-literals.ts), in the order the prepared path runs
 * them; undefined when the batch is too large for that, or holds a value a literal
 * cannot carry (an undefined tuple).
 */
export function writeTail(inserts: Array<{ messageHash: string; tuple: string | undefined }>, outbox: unknown[][], blobs: StagedBlob[], blobTuple: (blob: StagedBlob) => string | undefined, indexed: boolean): string | undefined {
    const statements: string[] = [];
    let chars = 0;
    const add = (sql: string) => {
        chars += sql.length;
        statements.push(sql);
        return chars <= MAX_TAIL_CHARS;
    };
    if (inserts.length > 0) {
        const hashes = sqlJson(inserts.map(({ messageHash }) => messageHash));
        const tuples: string[] = [];
        for (const { tuple } of inserts) {
            if (tuple === undefined) {
                return undefined;
            }

            tuples.push(tuple);
        }

        // No JSON text for json_each to parse, and no JSON.stringify of long bodies (costly for
        // a text with one character beyond Latin-1, which V8 keeps at two bytes a character:
        // bench/README.md, "where main stands after a parse without streams").
        const values = `INSERT INTO ${EMAILS_TABLE} (${INSERT_COLUMNS.join(', ')}) VALUES ${rope(tuples, ', ')}`;
        if (!add(values) || !add(insertLinksSql(hashes)) || (indexed && !add(indexDocumentsSql(hashes)))) {
            return undefined;
        }
    }

    if (outbox.length > 0 && !add(insertDeliveriesSql(sqlJson(outbox)))) {
        return undefined;
    }

    for (let i = 0; i < blobs.length; i += BLOB_ROWS_PER_STATEMENT) {
        const tuples: string[] = [];
        for (const blob of blobs.slice(i, i + BLOB_ROWS_PER_STATEMENT)) {
            // At least a character a byte: a batch past the bound writes out no more blobs.
            chars += blob.content.length;
            const tuple = chars > MAX_TAIL_CHARS ? undefined : blobTuple(blob);
            if (tuple === undefined) {
                return undefined;
            }

            tuples.push(tuple);
        }

        if (!add(upsertBlobsSql(tuples))) {
            return undefined;
        }
    }

    return statements.length === 0 ? undefined : rope(statements, ';\n');
}

/**
 * `parts` joined by `separator` with `+`, which V8 keeps as a rope of the parts, where
 * join() copies them all into a new string: a write tail's text is copied once, when
 * node-sqlite3 reads it, not once per statement it is built into.
 */
function rope(parts: string[], separator: string): string {
    let text = parts[0] ?? '';
    for (let i = 1; i < parts.length; i++) {
        text = text + separator + parts[i];
    }

    return text;
}
