/**
 * The embedded store's save transaction on a connection of its own, its statements
 * prepared once: a batch of deliveries costs a fixed handful of statements (one
 * lookup, one multi-row insert per table, one upsert per staged blob), none of them
 * built per message, and no savepoint. knex keeps migrations, deletes and keys.
 */

import * as Sqlite3 from 'sqlite3';
import type { StagedBlob } from '../blob-store/blob-store';
import { closeDatabase, execSql, openDatabase, prepareStatement } from '../sqlite/connection';
import { SQLITE_CONNECTION_PRAGMAS } from '../sqlite/knex';
import type { EmailDraft } from '../types';
import { BLOBS_TABLE } from './migrations/20261124000000_small_blobs';
import type { SaveResult } from './record-store';
import { EMAIL_COLUMNS, toInsertRow, toRecord, type EmailRow } from './rows';
import { planSave, prepareDeliveries, type StoredRow } from './save-plan';

/** The columns an insert writes (toInsertRow()'s keys). */
const INSERT_COLUMNS = [
    'message_id', 'message_id_hash', 'source_id', 'source_id_hash', 'inbox', 'sender', 'recipient', 'subject',
    'sender_folded', 'subject_folded', 'body', 'html_body', 'received_at', 'raw_key', 'raw_size', 'has_attachments', 'attachments'
];

// Lists travel as one JSON parameter (json_each), so each statement is prepared once
// whatever the batch's size, and stays under every bound-parameter limit.
const SQL = {
    // Two index lookups: the holders of the drafts' first-choice ids, and the stored copy of each (inbox, source).
    lookup: `SELECT ${EMAIL_COLUMNS.join(', ')}, message_id_hash, source_id_hash FROM emails
        WHERE message_id_hash IN (SELECT value FROM json_each(?1))
        UNION SELECT ${EMAIL_COLUMNS.join(', ')}, message_id_hash, source_id_hash FROM emails
        WHERE (inbox, source_id_hash) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?2))`,
    holder: 'SELECT seq FROM emails WHERE message_id_hash = ?',
    removeLinks: 'DELETE FROM email_blobs WHERE email_seq IN (SELECT value FROM json_each(?))',
    removeEmails: 'DELETE FROM emails WHERE seq IN (SELECT value FROM json_each(?))',
    insertEmails: `INSERT INTO emails (${INSERT_COLUMNS.join(', ')})
        SELECT ${INSERT_COLUMNS.map((_, i) => `value ->> ${i}`).join(', ')} FROM json_each(?)
        RETURNING seq, message_id_hash`,
    insertLinks: 'INSERT INTO email_blobs (email_seq, blob_key) SELECT value ->> 0, value ->> 1 FROM json_each(?)',
    upsertBlob: `INSERT INTO ${BLOBS_TABLE} (key, content, size, content_type, modified_at) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (key) DO UPDATE SET content = excluded.content, size = excluded.size,
        content_type = excluded.content_type, modified_at = excluded.modified_at`
};

type Statements = Record<keyof typeof SQL, Sqlite3.Statement>;

/** Told of what happens on the batch writer's connection (which Knex's query events do not see). */
export interface BatchWriterObserver {
    /** A save transaction committed, with this many deliveries. */
    commit?(deliveries: number): void;
    /** A statement of a save transaction failed (the transaction was rolled back). */
    error?(err: unknown): void;
}

/** The save transaction of the embedded record store. */
export interface SqliteBatchWriter {
    /**
     * Stores deliveries in order (each as if it ran alone after the one before) and the
     * staged blobs, in one transaction: all of it, or nothing (then it throws). The
     * caller keeps the writers of this file in one line (sqliteWriteTurns()).
     */
    save(deliveries: EmailDraft[][], blobs: StagedBlob[]): Promise<SaveResult[]>;
    /** Closes the connection (waits for the transaction in flight). */
    close(): Promise<void>;
}

/** A batch writer on the migrated SQLite file `filename`, opened on first use. */
export function openSqliteBatchWriter(filename: string, observer?: BatchWriterObserver): SqliteBatchWriter {
    let opened: Promise<{ db: Sqlite3.Database; statements: Statements }> | undefined;
    let inFlight: Promise<unknown> = Promise.resolve();

    const open = () => opened ??= (async () => {
        const db = await openDatabase(filename, Sqlite3.OPEN_READWRITE, SQLITE_CONNECTION_PRAGMAS);
        try {
            const entries = await Promise.all(Object.entries(SQL).map(async ([name, sql]) => [name, await prepareStatement(db, sql)] as const));
            return { db, statements: Object.fromEntries(entries) as Statements };
        }
        catch (err) {
            db.close();
            throw err;
        }
    })().catch((err: unknown) => {
        opened = undefined;
        throw err;
    });

    const save = async (deliveries: EmailDraft[][], blobs: StagedBlob[]): Promise<SaveResult[]> => {
        const { db, statements: s } = await open();
        // IMMEDIATE: the write lock now (another process waits busy_timeout for it), not at the first insert.
        await execSql(db, 'BEGIN IMMEDIATE');
        try {
            const results = await storeBatch(s, deliveries, blobs);
            await execSql(db, 'COMMIT');
            observer?.commit?.(deliveries.length);
            return results;
        }
        catch (err) {
            observer?.error?.(err);
            // A failed COMMIT may have rolled back already; either way nothing of the batch stands.
            await execSql(db, 'ROLLBACK').catch(() => undefined);
            throw err;
        }
    };

    return {
        save(deliveries, blobs) {
            const saving = save(deliveries, blobs);
            inFlight = saving.catch(() => undefined);
            return saving;
        },

        async close() {
            await inFlight;
            const current = await opened?.catch(() => undefined);
            opened = undefined;
            if (current) {
                await closeDatabase(current.db, Object.values(current.statements));
            }
        }
    };
}

// The statements of one batch, inside its transaction: the plan (save-plan.ts) from
// one lookup, then the deletes, the inserts and the blobs.
async function storeBatch(s: Statements, deliveries: EmailDraft[][], blobs: StagedBlob[]): Promise<SaveResult[]> {
    const planned = prepareDeliveries(deliveries);
    const drafts = planned.flat();
    const found = await all<EmailRow & { message_id_hash: string; source_id_hash: string }>(s.lookup, [
        JSON.stringify(drafts.map((d) => d.candidateHash)),
        JSON.stringify(drafts.map((d) => [d.draft.inbox, d.sourceHash]))
    ]);
    const rows: StoredRow[] = found.map((row) => ({ seq: row.seq, record: toRecord(row), messageHash: row.message_id_hash, sourceHash: row.source_id_hash }));

    const checked = new Map<string, boolean>();
    for (;;) {
        const outcome = planSave(planned, rows, checked);
        if ('lookUp' in outcome) {
            checked.set(outcome.lookUp, (await all(s.holder, [outcome.lookUp])).length > 0);
            continue;
        }

        const { plan } = outcome;
        if (plan.removed.length > 0) {
            const seqs = JSON.stringify(plan.removed.map(Number));
            await all(s.removeLinks, [seqs]);
            await all(s.removeEmails, [seqs]);
        }

        if (plan.inserts.length > 0) {
            const inserted = await all<{ seq: number; message_id_hash: string }>(s.insertEmails, [
                JSON.stringify(plan.inserts.map((insert) => {
                    const row = toInsertRow(insert);
                    return INSERT_COLUMNS.map((column) => (typeof row[column] === 'boolean' ? Number(row[column]) : row[column]));
                }))
            ]);
            const seqs = new Map(inserted.map((row) => [row.message_id_hash, row.seq]));
            const links = plan.inserts.flatMap(({ record, messageHash }) => {
                const seq = seqs.get(messageHash);
                if (seq === undefined) {
                    throw new Error('Insert into emails returned no seq');
                }

                return [...new Set([record.rawKey, ...record.attachments.map((a) => a.blobKey)])].map((key) => [seq, key]);
            });
            await all(s.insertLinks, [JSON.stringify(links)]);
        }

        const modifiedAt = Date.now();
        // Queued at once: node-sqlite3 runs the calls of one statement in order, with no turn of our event loop between.
        await Promise.all(blobs.map((b) => all(s.upsertBlob, [b.key, b.content, b.content.length, b.contentType, modifiedAt])));
        return plan.results;
    }
}

function all<T = unknown>(statement: Sqlite3.Statement, params: unknown[]): Promise<T[]> {
    return new Promise((resolve, reject) => {
        statement.all<T>(params, (err, rows) => (err ? reject(err) : resolve(rows)));
    });
}
