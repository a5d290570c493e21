/**
 * The embedded store's save transaction on a connection of its own, its statements
 * prepared once: a batch of deliveries costs a fixed handful of statements (one
 * lookup, one multi-row insert per table, one upsert per 32 staged blobs), none of them
 * built per message, and no savepoint. A small batch of new mail is one prepared insert
 * into a view whose triggers check that nothing stored matches it and write its rows
 * (save-rows.ts), in a transaction of its own: one call instead of seven, each a trip
 * through libuv's pool, and no SQL compiled for it (docs/design.md, "SQLite connections").
 * knex keeps migrations, deletes and keys.
 */

import * as Sqlite3 from 'sqlite3';
import { blobKeysOf } from '../../blob-store/blob-key';
import type { StagedBlob } from '../../blob-store/blob-store';
import { closeDatabase, execSql, openDatabase, prepareStatement } from '../../sqlite/connection';
import { sqliteConnectionPragmas, type SqliteConnectionOptions } from '../../sqlite/knex';
import type { EmailDraft, StoredAttachment } from '../../types';
import type { DeliveryTarget, SaveResult } from '../record-store';
import { toInsertRow, toRecord, type EmailRow } from '../sql/rows';
import { planSave, prepareDeliveries, type PlannedInsert, type StoredRow } from '../sql/save-plan';
import { removeUnreferencedStagedBlobsSql } from '../sql/blob-references';
import { withRemovedBlobKeys } from '../sql/save-statements';
import { TEXT_PIECE_CHARS, textPieces } from './text-pieces';
import { EMAIL_BLOBS_TABLE, EMAILS_TABLE } from '../sql/schema';
import { deliveryRows } from '../sql/delivery-outbox';
import { SEARCH_INDEX_TABLE } from '../sql/search-index';
import { sqlJson } from './sql-literals';
import {
    BLOB_ROWS_PER_STATEMENT, GUARD_ERROR, indexDocumentsSql, insertDeliveriesSql, insertEmailsSql, insertLinksSql, insertValues,
    lookupSql, noneStoredSql, upsertBlobsSql, writeTail
} from './batch-sql';
import { blobTuple, rowTuple } from './row-literals';
import { insertRowsSql, rowParams, ROW_VALUES, ROWS_GUARD_MESSAGE, saveRowsSchemaSql } from './save-rows';

/** The columns that may hold a text too long to bind in one go: inserted empty, then appended in pieces. */
const LONG_COLUMNS = ['body', 'html_body', 'body_folded'] as const;

// Lists travel as one JSON parameter (json_each), so each statement is prepared once
// whatever the batch's size, and stays under every bound-parameter limit.
const SQL = {
    lookup: lookupSql('?1', '?2'),
    holder: `SELECT seq FROM ${EMAILS_TABLE} WHERE message_id_hash = ?`,
    removeLinks: `DELETE FROM ${EMAIL_BLOBS_TABLE} WHERE email_seq IN (SELECT value FROM json_each(?))`,
    removeEmails: `DELETE FROM ${EMAILS_TABLE} WHERE seq IN (SELECT value FROM json_each(?))`,
    removeBlobs: removeUnreferencedStagedBlobsSql('(SELECT value FROM json_each(?))'),
    // A long text is inserted empty and appended in pieces (text-pieces.ts), in the same transaction.
    appendBody: `UPDATE ${EMAILS_TABLE} SET body = body || ?1 WHERE message_id_hash = ?2`,
    appendHtmlBody: `UPDATE ${EMAILS_TABLE} SET html_body = html_body || ?1 WHERE message_id_hash = ?2`,
    appendBodyFolded: `UPDATE ${EMAILS_TABLE} SET body_folded = body_folded || ?1 WHERE message_id_hash = ?2`,
    insertEmails: insertEmailsSql('?'),
    insertLinks: insertLinksSql('?1'),
    insertDeliveries: insertDeliveriesSql('?')
};

type Statements = Record<keyof typeof SQL, Sqlite3.Statement>;

/** Told of what happens on the batch writer's connection (which Knex's query events do not see). */
export interface BatchWriterObserver {
    /**
     * A save transaction committed, with this many deliveries; `calls`: the node-sqlite3
     * calls it made from BEGIN to COMMIT, each a trip through libuv's pool.
     */
    commit?(deliveries: number, calls?: number): void;
    /** A statement of a save transaction failed (the transaction was rolled back). */
    error?(err: unknown): void;
    /** SQL text goes to SQLite to be compiled: a statement prepared, or a text run by exec (each of its statements compiled then). */
    compile?(sql: string): void;
    /**
     * Before the BEGIN of a batch planned as new mail: what another connection commits
     * here and matches the batch makes the save look it up inside its transaction.
     */
    beforeBegin?(): void | Promise<void>;
}

/** The save transaction of the embedded record store. */
export interface SqliteBatchWriter {
    /**
     * Stores deliveries in order (each as if it ran alone after the one before) and the
     * staged blobs, in one transaction: all of it, or nothing (then it throws). The
     * caller keeps the writers of this file in one line (sqliteWriteTurns()). `targets[i]`
     * are the outbox targets of delivery i's drafts: their outbox rows commit with them.
     */
    save(deliveries: EmailDraft[][], blobs: StagedBlob[], targets?: (DeliveryTarget[][] | undefined)[]): Promise<SaveResult[]>;
    /** Closes the connection (waits for the transaction in flight). */
    close(): Promise<void>;
}

/** The open connection: its fixed statements and the blob upserts by row count. */
interface Connection {
    db: Sqlite3.Database;
    statements: Statements;
    /** Adds documents to the search index; absent when the database has none (an SQLite without FTS5 trigram). */
    indexDocuments: Sqlite3.Statement | undefined;
    /** Promised, so that chunks of one size asking at once share one statement. */
    upserts: Map<number, Promise<Sqlite3.Statement>>;
    /** The inserts into the save's view (save-rows.ts), by row count. */
    rowInserts: Map<number, Promise<Sqlite3.Statement>>;
    /** Runs SQL text on the connection (execSql()), telling the observer. */
    exec(sql: string): Promise<void>;
    /** Prepares a statement on the connection (prepareStatement()), telling the observer. */
    prepare(sql: string): Promise<Sqlite3.Statement>;
}

/** A batch writer on the migrated SQLite file `filename`, opened on first use. */
export function openSqliteBatchWriter(filename: string, observer?: BatchWriterObserver, connection: SqliteConnectionOptions = {}): SqliteBatchWriter {
    const pragmas = sqliteConnectionPragmas(connection);
    let opened: Promise<Connection> | undefined;
    let inFlight: Promise<unknown> = Promise.resolve();

    const open = () => opened ??= (async () => {
        const db = await openDatabase(filename, Sqlite3.OPEN_READWRITE, pragmas);
        const exec = (sql: string) => {
            observer?.compile?.(sql);
            return execSql(db, sql);
        };
        const prepare = (sql: string) => {
            observer?.compile?.(sql);
            return prepareStatement(db, sql);
        };
        try {
            const entries = await Promise.all(Object.entries(SQL).map(async ([name, sql]) => [name, await prepare(sql)] as const));
            const indexed = await new Promise<boolean>((resolve, reject) => {
                db.get(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?`, [SEARCH_INDEX_TABLE], (err, row) => (err ? reject(err) : resolve(row !== undefined)));
            });
            const indexDocuments = indexed ? await prepare(indexDocumentsSql('?')) : undefined;
            await exec(saveRowsSchemaSql(indexed));
            return { db, statements: Object.fromEntries(entries) as Statements, indexDocuments, upserts: new Map(), rowInserts: new Map(), exec, prepare };
        }
        catch (err) {
            db.close();
            throw err;
        }
    })().catch((err: unknown) => {
        opened = undefined;
        throw err;
    });

    const save = async (deliveries: EmailDraft[][], blobs: StagedBlob[], targets: (DeliveryTarget[][] | undefined)[]): Promise<SaveResult[]> => {
        const connection = await open();
        const calls = { count: 0 };
        try {
            const { results, tail, committed } = await storeBatch(connection, calls, deliveries, blobs, targets, observer);
            if (!committed) {
                calls.count++;
                await connection.exec(tail === undefined ? 'COMMIT' : `${tail};\nCOMMIT`);
            }

            observer?.commit?.(deliveries.length, calls.count);
            return results;
        }
        catch (err) {
            observer?.error?.(err);
            // A failed COMMIT may have rolled back already; either way nothing of the batch stands.
            await connection.exec('ROLLBACK').catch(() => undefined);
            throw err;
        }
    };

    return {
        save(deliveries, blobs, targets = []) {
            const saving = save(deliveries, blobs, targets);
            inFlight = saving.catch(() => undefined);
            return saving;
        },

        async close() {
            await inFlight;
            const current = await opened?.catch(() => undefined);
            opened = undefined;
            if (current) {
                const upserts = await Promise.all([...current.upserts.values(), ...current.rowInserts.values()].map((p) => p.catch(() => undefined)));
                const statements = [...Object.values(current.statements), ...(current.indexDocuments ? [current.indexDocuments] : [])];
                await closeDatabase(current.db, [...statements, ...upserts.filter((u) => u !== undefined)]);
            }
        }
    };
}

type LookedUp = EmailRow & { message_id_hash: string; source_id_hash: string };

// One batch: first the guess that nothing stored matches it (new mail, the usual batch),
// then, when that does not hold, the careful way. The guess plans without a lookup and,
// when the batch only adds rows, runs the check that no stored row matches (the lookup's
// own query, failing when it finds a row) and the writes as one statement of its own
// transaction, the save's prepared insert (save-rows.ts), or, for a batch too large for
// that, as one SQL text from BEGIN to COMMIT (`committed` either way). The careful way looks the batch up
// inside its transaction and plans (save-plan.ts) from what it found. node-sqlite3 starts
// calls on different statements at once (the connection runs them in any order), so
// writes that depend on each other are chained and the rest run alongside; every one is
// awaited before the caller's COMMIT. A small batch that only adds rows leaves its writes
// to the caller as one SQL text (`tail`), run with the COMMIT in the same call.
async function storeBatch(connection: Connection, calls: { count: number }, deliveries: EmailDraft[][], blobs: StagedBlob[], targets: (DeliveryTarget[][] | undefined)[], observer?: BatchWriterObserver): Promise<{ results: SaveResult[]; tail?: string; committed?: boolean }> {
    const { statements: s } = connection;
    const all = <T = unknown>(statement: Sqlite3.Statement, params: unknown[]): Promise<T[]> => {
        calls.count++;
        return allRows<T>(statement, params);
    };
    const planned = prepareDeliveries(deliveries);
    const drafts = planned.flat();
    const hashes = drafts.map((d) => d.candidateHash);
    const sources = drafts.map((d) => [d.draft.inbox, d.sourceHash]);

    const guess = planSave(planned, [], new Map());
    // Only a batch that adds rows and supersedes none of its own (whose blobs would go) fits in one text.
    if (!('lookUp' in guess) && guess.plan.removed.length === 0 && guess.plan.results.every((r) => r.replaced.length === 0)) {
        const { plan } = guess;
        const outbox = outboxRows(plan.results, targets);
        const params = rowParams(plan.inserts, outbox, blobs, hashes, sources);
        if (params !== undefined) {
            await observer?.beforeBegin?.();
            calls.count++;
            try {
                // One statement, so its own transaction: it takes the write lock first, as BEGIN IMMEDIATE would.
                await runStatement(await rowInsert(connection, params.length / (1 + ROW_VALUES)), params);
                return { results: plan.results, committed: true };
            }
            catch (err) {
                if (!String((err as Error).message).includes(ROWS_GUARD_MESSAGE)) {
                    throw err;
                }
            }
        }

        const tail = params === undefined ? tailOf(connection, plan.inserts, outbox, blobs, new Map(), Date.now()) : undefined;
        if (tail !== undefined) {
            await observer?.beforeBegin?.();
            calls.count++;
            try {
                // IMMEDIATE: the write lock now (another process waits busy_timeout for it), not at the first insert.
                await connection.exec(`BEGIN IMMEDIATE;\n${noneStoredSql(sqlJson(hashes), sqlJson(sources))};\n${tail};\nCOMMIT`);
                return { results: plan.results, committed: true };
            }
            catch (err) {
                await connection.exec('ROLLBACK').catch(() => undefined);
                if (!String((err as Error).message).includes(GUARD_ERROR)) {
                    throw err;
                }
            }
        }
    }

    calls.count++;
    await connection.exec('BEGIN IMMEDIATE');
    const found = await all<LookedUp>(s.lookup, [JSON.stringify(hashes), JSON.stringify(sources)]);
    const rows: StoredRow[] = found.map((row) => ({ seq: row.seq, record: toRecord(row), messageHash: row.message_id_hash, sourceHash: row.source_id_hash }));

    const checked = new Map<string, boolean>();
    for (;;) {
        const outcome = planSave(planned, rows, checked);
        if ('lookUp' in outcome) {
            checked.set(outcome.lookUp, (await all(s.holder, [outcome.lookUp])).length > 0);
            continue;
        }

        const { plan } = outcome;
        const json = new Map<StoredAttachment[], string>();
        const outbox = outboxRows(plan.results, targets);
        const modifiedAt = Date.now();
        // The replaced copies' small blobs go in the same commit (a kill after it leaves no
        // orphan), once every link and blob of the batch is written: a blob another copy
        // still references (they share their delivery's blobs) stays.
        const replacedKeys = [...new Set(plan.results.flatMap((r) => blobKeysOf(r.replaced)))];
        if (plan.removed.length === 0 && replacedKeys.length === 0) {
            const tail = tailOf(connection, plan.inserts, outbox, blobs, json, modifiedAt);
            if (tail !== undefined) {
                return { results: plan.results, tail };
            }
        }

        const insertRows = plan.inserts.map((insert) => ({ messageHash: insert.messageHash, row: toInsertRow(insert, json) }));
        // Removed copies first (a replacement may take the same id), then the rows, then their links.
        const records = (async () => {
            if (plan.removed.length > 0) {
                const seqs = JSON.stringify(plan.removed.map(Number));
                await all(s.removeLinks, [seqs]);
                await all(s.removeEmails, [seqs]);
            }

            if (insertRows.length > 0) {
                const long: Array<{ statement: Sqlite3.Statement; text: string; messageHash: string }> = [];
                const append = { body: s.appendBody, html_body: s.appendHtmlBody, body_folded: s.appendBodyFolded };
                await all(s.insertEmails, [JSON.stringify(insertRows.map(({ row, messageHash }) => {
                    for (const column of LONG_COLUMNS) {
                        const statement = append[column];
                        const text = row[column] as string;
                        if (text.length > TEXT_PIECE_CHARS) {
                            long.push({ statement, text, messageHash });
                            row[column] = '';
                        }
                    }

                    return insertValues(row);
                }))]);
                // One piece at a time: the event loop runs between the binds.
                for (const { statement, text, messageHash } of long) {
                    for (const piece of textPieces(text)) {
                        await all(statement, [piece, messageHash]);
                    }
                }

                const hashes = JSON.stringify(insertRows.map(({ messageHash }) => messageHash));
                await all(s.insertLinks, [hashes]);
                if (connection.indexDocuments) {
                    await all(connection.indexDocuments, [hashes]);
                }
            }
        })();
        const writes: Promise<unknown>[] = [records];
        if (outbox.length > 0) {
            writes.push(all(s.insertDeliveries, [JSON.stringify(outbox)]));
        }

        for (let i = 0; i < blobs.length; i += BLOB_ROWS_PER_STATEMENT) {
            const chunk = blobs.slice(i, i + BLOB_ROWS_PER_STATEMENT);
            writes.push(upsertStatement(connection, chunk.length).then((statement) =>
                all(statement, chunk.flatMap((b) => [b.key, b.content, b.content.length, b.contentType, modifiedAt]))));
        }

        // allSettled: a failed write must not let the caller's COMMIT overtake the writes still queued.
        const settled = await Promise.allSettled(writes);
        const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) {
            throw failed.reason;
        }

        const removed = replacedKeys.length === 0 ? [] : await all<{ key: string }>(s.removeBlobs, [JSON.stringify(replacedKeys)]);
        return { results: withRemovedBlobKeys(plan.results, new Set(removed.map(({ key }) => key))) };
    }
}

/** The outbox rows of a plan's results (delivery-outbox.ts), due now, as the insert's JSON list takes them. */
function outboxRows(results: SaveResult[], targets: (DeliveryTarget[][] | undefined)[]): unknown[][] {
    return deliveryRows(results, targets, Date.now()).map((row) => [row.id, row.kind, row.message_id, row.url, row.created_at]);
}

// A plan that only adds rows as one SQL text (writeTail()), its values as literals
// (row-literals.ts); undefined when it does not fit one.
function tailOf(connection: Connection, inserts: PlannedInsert[], outbox: unknown[][], blobs: StagedBlob[], json: Map<StoredAttachment[], string>, modifiedAt: number): string | undefined {
    return writeTail(inserts.map((insert) => ({ messageHash: insert.messageHash, tuple: rowTuple(insert, json) })),
        outbox, blobs, (blob) => blobTuple(blob, modifiedAt), connection.indexDocuments !== undefined);
}

// The upsert of `rows` staged blobs, prepared on first use.
function upsertStatement(connection: Connection, rows: number): Promise<Sqlite3.Statement> {
    let statement = connection.upserts.get(rows);
    if (!statement) {
        statement = connection.prepare(upsertBlobsSql(Array.from({ length: rows }, () => '(?, ?, ?, ?, ?)')));
        connection.upserts.set(rows, statement);
        // A failed prepare is asked for again next time.
        statement.catch(() => connection.upserts.delete(rows));
    }

    return statement;
}

// The insert of `rows` rows into the save's view, prepared on first use.
function rowInsert(connection: Connection, rows: number): Promise<Sqlite3.Statement> {
    let statement = connection.rowInserts.get(rows);
    if (!statement) {
        statement = connection.prepare(insertRowsSql(rows));
        connection.rowInserts.set(rows, statement);
        statement.catch(() => connection.rowInserts.delete(rows));
    }

    return statement;
}

function runStatement(statement: Sqlite3.Statement, params: unknown[]): Promise<void> {
    return new Promise((resolve, reject) => {
        statement.run(params, (err) => (err ? reject(err) : resolve()));
    });
}

function allRows<T = unknown>(statement: Sqlite3.Statement, params: unknown[]): Promise<T[]> {
    return new Promise((resolve, reject) => {
        statement.all<T>(params, (err, rows) => (err ? reject(err) : resolve(rows)));
    });
}
