import { existsSync } from 'node:fs';
import * as Path from 'node:path';
import { Readable } from 'node:stream';
import * as Sqlite3 from 'sqlite3';
import { InboxCaptureError } from '../errors';
import { createBatcher, type Outcome } from '../util/group-commit';
import { readBounded } from '../util/read-bounded';
import { busyTimeoutPragma, closeDatabase, execSql, openDatabase, prepareStatement } from '../sqlite/connection';
import { createPrivateDatabaseFile } from '../util/private-file';
import { openSqliteReader, type SqliteReader } from '../sqlite/reader';
import { sqliteWriteTurns } from '../sqlite/write-turns';
import { isValidBlobKey } from './blob-key';
import type { LinkSigner, SelfServedBlobStore } from './blob-store';

// Part of this subpath's API since the `links` option took one.
export type { LinkSigner } from './blob-store';


/**
 * Largest blob this store takes, bytes. A put holds its blob in memory until its
 * transaction commits (a Readable is read whole first), so the bound is on memory;
 * the tiered store sends anything above its threshold (a few hundred KiB) to files.
 */
export const DEFAULT_MAX_BLOB_BYTES = 64 * 1024 * 1024;

/**
 * Most bytes one transaction writes, bytes: past this a batch is closed and the
 * next puts wait for the next transaction, so one commit never holds (and the WAL
 * never takes) more than this at once. A single larger blob gets a batch of its own.
 */
const MAX_BATCH_BYTES = 16 * 1024 * 1024;

/** What a row costs a batch besides its content, bytes: keeps deletes and empty blobs weighing something. */
const ROW_WEIGHT = 256;

/** Rows read per listBlobs() query, so the orphan sweep never loads the whole table. */
const LIST_PAGE_ROWS = 1000;

/** Keys looked up per query by existing(): under SQLite's default 999 bound parameters. */
const EXISTING_CHUNK = 500;

/** Per-connection settings of the writer after its busy timeout, which comes first so that switching to WAL waits for a lock instead of failing (journal_mode persists in the file; the rest do not). */
const WRITER_PRAGMAS = [
    // Deleted blobs give their pages back to the file system (see the vacuum in the write
    // batch): without it the file only ever grows. Takes effect only in a file with no
    // tables yet, so before the schema; a file made without it keeps reusing free pages.
    'PRAGMA auto_vacuum = INCREMENTAL',
    // Readers (get, stat, list) never wait on the writer, nor the writer on them.
    'PRAGMA journal_mode = WAL',
    // A put resolves after its commit, and a commit must survive power loss: synced every time.
    'PRAGMA synchronous = FULL'
].join(';\n');

const SCHEMA = `CREATE TABLE IF NOT EXISTS blobs (
    key TEXT PRIMARY KEY NOT NULL,
    content BLOB NOT NULL,
    size INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    modified_at INTEGER NOT NULL
)`;

const UPSERT = `INSERT INTO blobs (key, content, size, content_type, modified_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET content = excluded.content, size = excluded.size,
    content_type = excluded.content_type, modified_at = excluded.modified_at`;

/** Options of the SQLite blob store. */
export interface SqliteBlobStoreOptions {
    /**
     * The database file; created with its directory if missing. It may be the record
     * store's own (the embedded default): writes of both then take turns (one process).
     */
    filename: string;
    /**
     * Offer stage() (default false): blobs are handed to a record store writing this
     * same file, which commits them with its records. Only where that record store is
     * the one ingesting (openEmbeddedStores()): a staged blob nobody commits is never written.
     */
    staging?: boolean;
    /**
     * Create the file on the first read or delete (default true). False: until a put
     * creates it, a missing file reads as an empty store (a tier most data dirs never use).
     */
    createIfMissing?: boolean;
    /** Signs and checks its links: a file store (whose route serves any key) or createLinkSigner(); without one there are no links. */
    links?: LinkSigner;
    /** Largest blob accepted, bytes (default DEFAULT_MAX_BLOB_BYTES). */
    maxBlobBytes?: number;
    /** How long its connections wait for another process' lock before failing, ms (default BUSY_TIMEOUT_MS). */
    busyTimeoutMs?: number;
    /** Clock, Unix ms, for modified_at. */
    now?: () => number;
    /** Called after each committed transaction with the puts and deletes it held (tests count commits with it). */
    onCommit?: (items: number) => void;
}

/** Blobs as rows of a SQLite file: small puts arriving together share one transaction and one fsync. */
export interface SqliteBlobStore extends SelfServedBlobStore {
    /** Which of `keys` the store holds (the tiered store's listing skips them among the files). */
    existing(keys: string[]): Promise<Set<string>>;
    /** Waits for the writes and reads in flight, then closes both connections. */
    close(): Promise<void>;
}

type WriteItem = { kind: 'put'; key: string; content: Buffer; contentType: string } | { kind: 'delete'; keys: string[] };

/** Creates a blob store keeping every blob as a row of the SQLite file `filename` (WAL, synchronous=FULL). */
export function createSqliteBlobStore(options: SqliteBlobStoreOptions): SqliteBlobStore {
    if (typeof options?.filename !== 'string' || options.filename.length === 0 || options.filename === ':memory:') {
        throw new TypeError('createSqliteBlobStore: options.filename must be a database file path');
    }

    const filename = Path.resolve(options.filename);
    const maxBlobBytes = options.maxBlobBytes ?? DEFAULT_MAX_BLOB_BYTES;
    const now = options.now ?? Date.now;
    const { links, onCommit } = options;
    const createIfMissing = options.createIfMissing ?? true;
    const busyTimeout = busyTimeoutPragma(options.busyTimeoutMs, 'createSqliteBlobStore');

    let writer: Promise<Writer> | null = null;
    let closed = false;
    // Opened on first use: it needs the table the writer creates.
    const reader: SqliteReader = openSqliteReader(filename, { busyTimeoutMs: options.busyTimeoutMs });
    const inFlight = new Set<Promise<unknown>>();

    const openWriter = (): Promise<Writer> => writer ??= (async () => {
        const opened = openWriterConnection(filename, busyTimeout);
        opened.catch(() => {
            writer = null;
        });
        return opened;
    })();

    // The same line as a record store's writes to this file.
    const turns = sqliteWriteTurns(filename);
    const write = createBatcher<WriteItem, void>({
        turns,
        maxWeight: MAX_BATCH_BYTES,
        weight: (item) => (item.kind === 'put' ? item.content.length + ROW_WEIGHT : item.keys.length * ROW_WEIGHT),
        async run(items): Promise<Outcome<void>[]> {
            const w = await openWriter();
            const modifiedAt = Math.floor(now());
            // IMMEDIATE: take the write lock now (waiting busy_timeout for another process),
            // not at the first INSERT, where a conflict could no longer wait.
            await w.exec('BEGIN IMMEDIATE');
            try {
                let deleted = false;
                for (const item of items) {
                    if (item.kind === 'put') {
                        await w.run(w.upsert, [item.key, item.content, item.content.length, item.contentType, modifiedAt]);
                    }
                    else {
                        for (const key of item.keys) {
                            await w.run(w.remove, [key]);
                        }

                        deleted = true;
                    }
                }

                // The pages the deletes freed are cut off the end of the file in the same
                // commit (a no-op in a file made without auto_vacuum).
                if (deleted) {
                    await w.exec('PRAGMA incremental_vacuum');
                }

                await w.exec('COMMIT');
            }
            catch (err) {
                // A failed COMMIT may have rolled back already; either way nothing of the batch stands.
                await w.exec('ROLLBACK').catch(() => undefined);
                throw err;
            }

            onCommit?.(items.length);
            return items.map(() => ({ ok: true, value: undefined }));
        }
    });

    // Every write and read is tracked, so close() waits for them instead of cutting them off.
    const track = <T>(work: Promise<T>): Promise<T> => {
        const tracked = work.catch(() => undefined).finally(() => inFlight.delete(tracked));
        inFlight.add(tracked);
        return work;
    };

    const ensureOpen = () => {
        if (closed) {
            throw new Error('SQLite blob store is closed');
        }
    };

    // Nothing to read or delete in a file that was never created (and must not be now).
    const absent = () => !createIfMissing && writer === null && !existsSync(filename);

    const read = async <T>(sql: string, params: unknown[]): Promise<T[]> => {
        if (absent()) {
            return [];
        }

        // The reader's first query needs the table: the writer creates it.
        await openWriter();
        return reader.all<T>(sql, params);
    };

    const store: SqliteBlobStore = {
        ...(options.staging ? {
            stage(key: string, content: Buffer, contentType: string) {
                if (!isValidBlobKey(key)) {
                    throw new InboxCaptureError('INVALID_INPUT', `invalid blob key ${JSON.stringify(String(key).slice(0, 64))}`);
                }

                ensureOpen();
                return content.length <= maxBlobBytes ? { target: filename, key, content, contentType: String(contentType) } : null;
            }
        } : {}),

        async put(key, body, contentType) {
            if (!isValidBlobKey(key)) {
                throw new InboxCaptureError('INVALID_INPUT', `invalid blob key ${JSON.stringify(String(key).slice(0, 64))}`);
            }

            ensureOpen();
            // Bounded: a stream is read whole (its transaction needs it all), but never past the limit.
            const content = await readBounded(body, maxBlobBytes, 'blob');

            await track(write({ kind: 'put', key, content, contentType: String(contentType) }));
            return { size: content.length };
        },

        async get(key) {
            if (!isValidBlobKey(key)) {
                return null;
            }

            ensureOpen();
            const rows = await track(read<{ content: Buffer }>('SELECT content FROM blobs WHERE key = ?', [key]));
            if (rows.length === 0) {
                return null;
            }

            const content = rows[0]!.content;
            return Readable.from(content.length > 0 ? [content] : [], { objectMode: false });
        },

        async delete(keys) {
            const ours = [...new Set(keys.filter(isValidBlobKey))];
            if (ours.length === 0 || absent()) {
                return;
            }

            ensureOpen();
            await track(write({ kind: 'delete', keys: ours }));
        },

        async *listBlobs() {
            ensureOpen();
            let after = '';
            for (;;) {
                // Keyset pages: each query is short, and blobs written meanwhile do not shift the pages.
                const rows = await track(read<{ key: string; modified_at: number }>(
                    'SELECT key, modified_at FROM blobs WHERE key > ? ORDER BY key LIMIT ?', [after, LIST_PAGE_ROWS]));
                for (const row of rows) {
                    yield { key: row.key, modifiedAt: row.modified_at };
                }

                if (rows.length < LIST_PAGE_ROWS) {
                    return;
                }

                after = rows[rows.length - 1]!.key;
            }
        },

        async stat(key) {
            if (!isValidBlobKey(key)) {
                return null;
            }

            ensureOpen();
            const rows = await track(read<{ size: number; modified_at: number }>('SELECT size, modified_at FROM blobs WHERE key = ?', [key]));
            return rows.length === 0 ? null : { size: rows[0]!.size, modifiedAt: rows[0]!.modified_at };
        },

        async existing(keys) {
            ensureOpen();
            const found = new Set<string>();
            const ours = keys.filter(isValidBlobKey);
            for (let i = 0; i < ours.length; i += EXISTING_CHUNK) {
                const chunk = ours.slice(i, i + EXISTING_CHUNK);
                const rows = await track(read<{ key: string }>(`SELECT key FROM blobs WHERE key IN (${chunk.map(() => '?').join(', ')})`, chunk));
                for (const row of rows) {
                    found.add(row.key);
                }
            }

            return found;
        },

        async createDownloadLink(key, linkOptions) {
            if (!links) {
                throw new Error('createSqliteBlobStore: no `links` signer was given, so it cannot make download links');
            }

            return links.createDownloadLink(key, linkOptions);
        },

        verifyDownload(key, query) {
            return links ? links.verifyDownload(key, query) : null;
        },

        async close() {
            if (closed) {
                return;
            }

            closed = true;
            await Promise.all(inFlight);
            await reader.close();
            const w = await writer?.catch(() => undefined);
            await w?.close();
        }
    };

    return store;
}

/** The writer connection and its prepared statements. */
interface Writer {
    upsert: Sqlite3.Statement;
    remove: Sqlite3.Statement;
    exec(sql: string): Promise<void>;
    run(statement: Sqlite3.Statement, params: unknown[]): Promise<void>;
    close(): Promise<void>;
}

async function openWriterConnection(filename: string, busyTimeout: string): Promise<Writer> {
    createPrivateDatabaseFile(filename);
    const db = await openDatabase(filename, Sqlite3.OPEN_READWRITE | Sqlite3.OPEN_CREATE, `${busyTimeout};\n${WRITER_PRAGMAS}`);
    const exec = (sql: string) => execSql(db, sql);
    try {
        await exec(SCHEMA);
        const upsert = await prepareStatement(db, UPSERT);
        const remove = await prepareStatement(db, 'DELETE FROM blobs WHERE key = ?');
        return {
            upsert,
            remove,
            exec,
            run: (statement, params) => new Promise<void>((resolve, reject) => {
                statement.run(params, (err: Error | null) => (err ? reject(err) : resolve()));
            }),
            close: () => closeDatabase(db, [upsert, remove])
        };
    }
    catch (err) {
        db.close();
        throw err;
    }
}
