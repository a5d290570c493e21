import * as Path from 'node:path';
import type { Knex } from 'knex';
import { retryWithBackoff } from '../util/backoff';
import { createConcurrencyLimit, type ConcurrencyLimit } from '../util/concurrency-limit';
import { InboxCaptureError } from '../errors';
import { createBatcher } from '../util/group-commit';
import { sha256Hex } from '../identity/ids';
import { INBOX_PATTERN, MAX_INBOX_LENGTH } from '../identity/recipients';
import type { SqliteConnectionOptions } from '../sqlite/knex';
import type { SqliteReader } from '../sqlite/reader';
import { sqliteWriteTurns } from '../sqlite/write-turns';
import type { EmailRecord, RecordPage, StoredAttachment } from '../types';
import { cleanDraft, cleanText } from './sql/clean-text';
import { budgetedPageQuery, countWithinBudget, STORED_TEXT_BYTES_SQL, type BudgetedRow, type SizedRow } from './sql/email-page';
import { plainPageSql } from './sql/plain-page-sql';
import { inboxPageQuery, toInboxPage, type InboxRow } from './sql/inbox-page';
import { completeRow, pieceColumns, pieceQuery, type PiecedRow, type PieceReader } from './sqlite/long-text';
import { classifyFailures, isTransient } from './sql/db-errors';
import { hasSqliteSearchIndex } from './sql/search-index';
import { pageRows } from './sql/search-page';
import { indexPlan, whereTerms } from './sql/search-sql';
import { beyondNewestQuery, deleteSelected, inboxesOverQuery, receivedBeforeQuery } from './sql/batch-deletes';
import { migrate } from './sql/migrate';
import { watchNotifications } from './postgres/pg-listen';
import type { RecordStore, SaveResult } from './record-store';
import { toNumber, toRecord, type EmailRow } from './sql/rows';
import { EMAIL_COLUMNS, EMAILS_TABLE, SEARCH_INDEX_TABLE } from './sql/schema';
import { createSaveBatch, type Delivery } from './save-batch';
import type { BatchWriterObserver } from './sqlite/sqlite-batch-writer';
import { openSqliteBatchWriter } from './sqlite/sqlite-batch-writer';
import { removeRows } from './sql/save-statements';
import { referencedBlobKeys } from './sql/blob-references';
import { deliveryOutbox } from './sql/delivery-outbox';
import { faultRules } from './sql/fault-rules';
import { apiKeys } from './sql/api-keys';
import { seenWriter } from './sql/seen';
import { smtpUsers } from './sql/smtp-users';
import { tagWriter } from './sql/tags';
import { authCheckKeeper } from './sql/auth-checks';
import { isPostgres } from './sql/dialect';
import { relayedMessages } from './sql/relayed-messages';

/** Postgres NOTIFY channel saveEmails() signals on, with the inbox as payload. */
export const DEFAULT_NOTIFY_CHANNEL = 'inbox_capture';

/**
 * Attempts of one write transaction that failed for a transient reason (a unique
 * race with another process, a serialization failure, SQLITE_BUSY from another
 * process). Our own writers are serialised (SQLite) or locked per inbox and
 * Message-ID (Postgres), so a second attempt almost always succeeds.
 */
const WRITE_ATTEMPTS = 8;
/** First wait before retrying a write, ms; doubles per attempt, with jitter. */
const WRITE_RETRY_MS = 5;
/**
 * Records one group-commit transaction stores at most (a delivery is never split:
 * a larger one gets a transaction of its own). The commit's fsync is shared by the
 * whole batch, but every delivery in it waits for the last one; this keeps that
 * wait, and the time SQLite's single connection is not free for reads, near 15 ms,
 * while 16-64 concurrent SMTP sessions still share one commit.
 * Tuned by measurement: bench/README.md, "Tuned constants › MAX_BATCH_RECORDS".
 */
const MAX_BATCH_RECORDS = 64;
/**
 * Bytes of staged blobs that weigh as much as one record in a batch: 256 KiB, so 64
 * weigh 16 MiB, what one transaction of blobs.sqlite held at most. One commit never
 * holds (and the WAL never takes) much more than that at once.
 */
const STAGED_BYTES_PER_RECORD = 256 * 1024;
/**
 * Group-commit transactions one Postgres store runs at once (SQLite has one
 * writer anyway). One: a second batch in flight shares inboxes with the first,
 * so it waits on their advisory locks until the first commits, and meanwhile
 * splits the queue into smaller batches with more commits. Other processes'
 * batches still run alongside.
 * Tuned by measurement: bench/README.md, "Tuned constants › PG_BATCHES_IN_FLIGHT".
 */
const PG_BATCHES_IN_FLIGHT = 1;

/** How to build the store. */
export interface KnexRecordStoreOptions {
    /** A ready Knex instance for 'sqlite3' or 'pg' (see openSqliteKnex / openPostgresKnex). */
    knex: Knex;
    /** Destroy `knex` in close() (when the store owns it). Default false. */
    destroyKnexOnClose?: boolean;
    /** Postgres LISTEN/NOTIFY channel. Default 'inbox_capture'. */
    notifyChannel?: string;
    /**
     * SQLite only: a read connection (openSqliteReader()) for getEmail(), listEmails() and
     * inboxVersion(), statements kept prepared. Closed in close() along with `knex` when the store owns it.
     */
    reader?: SqliteReader;
    /**
     * SQLite on a file: told of each commit and failure of the save transactions, which run
     * on a connection of their own that Knex's query events do not see (tests count commits with it).
     */
    observeBatchWriter?: BatchWriterObserver;
}

type Dialect = 'sqlite' | 'postgres';

/** A RecordStore on Knex: SQLite (embedded) or Postgres (several processes). */
export function createKnexRecordStore(options: KnexRecordStoreOptions): RecordStore {
    const { knex, reader } = options;
    const dialect = detectDialect(knex);
    const pg = dialect === 'postgres';
    // Reads of committed data go through the reader when there is one, never queued behind a save
    // on Knex's one SQLite connection (a woken long-poll's query would wait for the next commit).
    const read = async <T>(q: Knex.QueryBuilder): Promise<T[]> => {
        if (!reader) {
            return await q as T[];
        }

        const { sql, bindings } = q.toSQL().toNative();
        return reader.all<T>(sql, bindings as unknown[]);
    };
    const channel = options.notifyChannel ?? DEFAULT_NOTIFY_CHANNEL;
    // SQLite writers of this process take turns: knex opens SQLite transactions with
    // a deferred BEGIN, and two of them that read and then write would fail each
    // other with SQLITE_BUSY. Saves wait in the same line, so writes keep their order.
    const sqliteFile = pg ? undefined : sqliteFilename(knex);
    const sqliteTurns = pg ? null : sqliteFile ? sqliteWriteTurns(sqliteFile) : inMemoryWriteTurns(knex);
    const serialize = <T>(fn: () => Promise<T>): Promise<T> => (sqliteTurns ? sqliteTurns.run(fn) : fn());
    const watchers = new Set<() => Promise<void>>();

    // Runs `attempt` again on transient conflicts, with growing, jittered waits.
    const retryTransient = <T>(attempt: () => Promise<T>): Promise<T> =>
        retryWithBackoff(attempt, { retries: WRITE_ATTEMPTS - 1, firstMs: WRITE_RETRY_MS, jitter: true, retryable: isTransient });

    // One write transaction, retried on transient conflicts; on SQLite each attempt takes its turn.
    const write = <T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> =>
        retryTransient(() => serialize(() => knex.transaction(work)));

    // SQLite: whether the database has the search index (an SQLite without FTS5 trigram has
    // none); asked once, again after a migration. Postgres' planner finds its index itself.
    let sqliteIndexed: boolean | undefined;
    const sqliteSearchIndex = async (on: Knex): Promise<boolean> => sqliteIndexed ??= await hasSqliteSearchIndex(on);
    const searchIndexed = async (): Promise<boolean> => pg || (sqliteIndexed ??= (await read(knex('sqlite_master').select('name').where({ type: 'table', name: SEARCH_INDEX_TABLE }))).length > 0);

    // The embedded file's saves run on a connection of their own with prepared statements, on
    // this event loop: a new batch is one node-sqlite3 call, cheaper here than posted to a
    // thread and back (docs/design.md, "SQLite connections").
    const batchWriter = sqliteFile === undefined ? undefined : openSqliteBatchWriter(sqliteFile, options.observeBatchWriter, sqliteConnectionOf(knex));
    const saveBatch = createSaveBatch({ knex, pg, channel, batchWriter, retryTransient, sqliteSearchIndex });

    const batchSave = createBatcher<Delivery, SaveResult>({
        turns: sqliteTurns ?? createConcurrencyLimit(PG_BATCHES_IN_FLIGHT),
        maxWeight: MAX_BATCH_RECORDS,
        weight: (delivery) => delivery.drafts.length + Math.floor(delivery.blobs.reduce((sum, b) => sum + b.content.length, 0) / STAGED_BYTES_PER_RECORD),
        run: saveBatch
    });

    // getEmail()'s SQL and bindings for the reader, compiled on first use (the hash is the first binding).
    let getEmailSql: Knex.SqlNative | undefined;

    // SQLite reads a long body in pieces (long-text.ts); node-postgres decodes a value as it arrives.
    const emailColumns = pg ? EMAIL_COLUMNS : pieceColumns(knex);
    // The SQLite page a waiting long-poll and a first page ask, built once (plain-page-sql.ts).
    const plainBudgetedPage = plainPageSql((query) => budgetedPageQuery(knex, query, (q) => q.select(emailColumns)));
    const readPiece: PieceReader = async (column, seq, from, length) => {
        const [row] = await read<{ piece: Buffer | null }>(pieceQuery(knex, column, seq, from, length));
        return row ? row.piece ?? Buffer.alloc(0) : null;
    };
    // The records of rows read with emailColumns; a row deleted while its pieces were read is left out.
    const toRecords = async (rows: PiecedRow[]): Promise<EmailRecord[]> => {
        const records: EmailRecord[] = [];
        for (const row of rows) {
            const whole = pg ? row as EmailRow : await completeRow(row, readPiece);
            if (whole) {
                records.push(toRecord(whole));
            }
        }

        return records;
    };

    const store: RecordStore = {
        stagedBlobTarget: sqliteFile,

        async migrate(migrateOptions = {}) {
            // Emails stored by an earlier version get their links and codes, and their searched
            // texts (and index documents), before the store serves; the back-fills' transactions
            // take turns with this store's writers.
            const { onProgress } = migrateOptions;
            await migrate(knex, { transaction: write, onBatch: onProgress && ((done, total) => onProgress({ done, total })) });
            sqliteIndexed = undefined;
        },

        async saveEmails(drafts, saveOptions) {
            const blobs = saveOptions?.blobs ?? [];
            for (const blob of blobs) {
                if (sqliteFile === undefined || blob.target !== sqliteFile) {
                    throw new InboxCaptureError('INVALID_INPUT', `blob ${blob.key} was staged for ${blob.target}, which this record store does not write`);
                }
            }

            if (drafts.length === 0 && blobs.length === 0) {
                return { saved: [], replaced: [] };
            }

            // Shares a transaction, and its commit, with the saves queued alongside.
            const cleaned = new Map<StoredAttachment[], StoredAttachment[]>();
            const delivery = { drafts: drafts.map((draft) => cleanDraft(draft, cleaned)), blobs, deliveries: saveOptions?.deliveries };
            return batchSave(delivery);
        },

        async getEmail(messageId) {
            const hash = sha256Hex(cleanText(messageId));
            const byHash = (h: string) => knex(EMAILS_TABLE).select(emailColumns).where('message_id_hash', h).limit(1);
            if (!reader) {
                const [record] = await toRecords(await byHash(hash) as PiecedRow[]);
                return record ?? null;
            }

            // The SQL is built once: a read by id is the hottest query, and Knex's query
            // building cost more than the read through the prepared statement itself.
            getEmailSql ??= byHash('').toSQL().toNative();
            const [record] = await toRecords(await reader.all<PiecedRow>(getEmailSql.sql, [hash, ...getEmailSql.bindings.slice(1)]));
            return record ?? null;
        },

        async listEmails(query) {
            assertPositiveInteger(query.limit, 'limit');
            const indexed = query.q !== undefined && await searchIndexed();
            if (query.maxBytes === undefined) {
                const rows = await pageRows<PiecedRow>(knex, query, pg, indexed, (q) => q.select(emailColumns), read);
                return { records: await toRecords(rows.slice(0, query.limit)), hasMore: rows.length > query.limit } satisfies RecordPage;
            }

            // Only the rows that fit are read whole (text past the budget is never loaded, but for one
            // email larger alone). SQLite sizes and reads in one query, unless the search asks its index.
            assertPositiveInteger(query.maxBytes, 'maxBytes');
            if (!pg && !(indexed && query.q)) {
                const plain = reader && plainBudgetedPage(query);
                const rows = plain ? await reader.all<PiecedRow & BudgetedRow>(plain.sql, plain.bindings) :
                    await read<PiecedRow & BudgetedRow>(budgetedPageQuery(knex, { ...query, maxBytes: query.maxBytes }, (q) => q.select(emailColumns)));
                return { records: await toRecords(rows), hasMore: rows.length > 0 && toNumber(rows[0]!.page_rows) > rows.length } satisfies RecordPage;
            }

            const sized = await pageRows<SizedRow>(knex, query, pg, indexed, (q) => q.select('seq', knex.raw(`${STORED_TEXT_BYTES_SQL} as size`)), read);
            const count = countWithinBudget(sized.map((r) => toNumber(r.size)), query.limit, query.maxBytes);
            const seqs = sized.slice(0, count).map((r) => r.seq);
            const rows = seqs.length === 0 ? [] : await read<PiecedRow>(knex(EMAILS_TABLE).select(emailColumns).whereIn('seq', seqs));
            // By seq, in the order of the sizing query (a row deleted meanwhile is just absent).
            const bySeq = new Map(rows.map((row) => [String(row.seq), row]));
            const records = await toRecords(seqs.flatMap((seq) => bySeq.get(String(seq)) ?? []));
            return { records, hasMore: sized.length > count } satisfies RecordPage;
        },

        async listInboxes(query) {
            assertPositiveInteger(query.limit, 'limit');
            if (query.prefix !== undefined && query.prefix !== '' && !(query.prefix.length <= MAX_INBOX_LENGTH && INBOX_PATTERN.test(query.prefix))) {
                throw new InboxCaptureError('INVALID_INPUT', 'prefix may hold only the characters of an inbox name (a-z 0-9 . _ -), at most 64');
            }

            return toInboxPage(await read<InboxRow>(inboxPageQuery(knex, query)), query.limit);
        },

        async inboxVersion(inbox) {
            const [row] = await read<{ version: number | string | null }>(knex(EMAILS_TABLE).max({ version: 'seq' }).where('inbox', cleanText(inbox)));
            return row?.version === null || row?.version === undefined ? 0 : toNumber(row.version);
        },

        async deleteEmail(messageId, options = {}) {
            const hash = sha256Hex(cleanText(messageId));
            return write(async (trx) => {
                const row = await trx(EMAILS_TABLE).select(EMAIL_COLUMNS).where('message_id_hash', hash).first() as EmailRow | undefined;
                // Checked in the transaction that deletes: the id cannot meanwhile name a copy in another inbox.
                if (!row || (options.inboxPrefix && !row.inbox.startsWith(options.inboxPrefix))) {
                    return null;
                }

                // A concurrent delete (another Postgres process) may have won.
                const deleted = await removeRows(trx, [row.seq]);
                return deleted === 1 ? toRecord(row) : null;
            });
        },

        async deleteInboxBatch(inbox, batchSize, q) {
            assertPositiveInteger(batchSize, 'batchSize');
            const cleanInbox = cleanText(inbox);
            const plan = q && await searchIndexed() ? indexPlan(cleanInbox, q, pg) : null;
            // Oldest stored first; two bulk deletes on Postgres share the work (deleteSelected()).
            return write((trx) => {
                const select = trx(EMAILS_TABLE).select(EMAIL_COLUMNS).where('inbox', cleanInbox);
                if (plan?.candidates) {
                    select.whereRaw(plan.candidates.sql, plan.candidates.bindings);
                }

                return deleteSelected(trx, whereTerms(select, q ?? [], pg, plan !== null).orderBy('seq', 'asc').limit(batchSize), pg);
            });
        },

        ...tagWriter({ write }),
        ...seenWriter({ write }),
        ...authCheckKeeper({ knex, write }),

        async deleteReceivedBeforeBatch(receivedBefore, batchSize) {
            assertPositiveInteger(batchSize, 'batchSize');
            return write((trx) => deleteSelected(trx, receivedBeforeQuery(trx, receivedBefore, batchSize, pg), pg));
        },

        async inboxesOver(maxCount, page) {
            assertPositiveInteger(page.limit, 'limit');
            const rows = await read<{ name: string }>(inboxesOverQuery(knex, maxCount, page.after, page.limit));
            return rows.map((r) => r.name);
        },

        async deleteBeyondNewestBatch(inbox, keep, batchSize) {
            assertPositiveInteger(keep, 'keep');
            assertPositiveInteger(batchSize, 'batchSize');
            const cleanInbox = cleanText(inbox);
            return write(async (trx) => {
                // The boundary is found again in each batch's transaction: mail stored since moves it.
                const beyond = await beyondNewestQuery(trx, cleanInbox, keep, batchSize, pg);
                return beyond ? deleteSelected(trx, beyond.select, pg) : [];
            });
        },

        referencedBlobKeys(keys) {
            return referencedBlobKeys(knex, keys);
        },

        ...deliveryOutbox({ knex, pg, write }),
        ...faultRules(knex, write),
        ...relayedMessages(write),

        ...apiKeys(knex, serialize),
        ...smtpUsers(knex, serialize),

        async close() {
            await Promise.all([...watchers].map((unwatch) => unwatch()));
            await batchWriter?.close();
            if (options.destroyKnexOnClose) {
                await reader?.close();
                await knex.destroy();
            }
        }
    };

    if (pg) {
        store.watchInboxes = async (listener) => {
            const unwatch = await watchNotifications(knex, channel, listener);
            const unsubscribe = async () => {
                watchers.delete(unsubscribe);
                await unwatch();
            };

            watchers.add(unsubscribe);
            return unsubscribe;
        };
    }

    return classifyFailures(store);
}

function detectDialect(knex: Knex): Dialect {
    const client = knex.client.config.client;
    if (client === 'sqlite3') {
        return 'sqlite';
    }

    if (isPostgres(knex)) {
        return 'postgres';
    }

    throw new Error(`createKnexRecordStore supports the 'sqlite3' and 'pg' clients, not ${String(client)}`);
}

// The resolved database file of a SQLite Knex, or undefined for an in-memory one.
function sqliteFilename(knex: Knex): string | undefined {
    const connection = knex.client.config.connection as { filename?: string } | undefined;
    const filename = connection?.filename;
    return typeof filename === 'string' && filename !== '' && filename !== ':memory:' && !filename.startsWith('file:') ? Path.resolve(filename) : undefined;
}

// How the SQLite Knex's connections wait for locks (openSqliteKnex()), for the batch writer's own connection.
function sqliteConnectionOf(knex: Knex): SqliteConnectionOptions {
    const busyTimeoutMs = (knex.client.config.connection as { busyTimeoutMs?: number } | undefined)?.busyTimeoutMs;
    return busyTimeoutMs === undefined ? {} : { busyTimeoutMs };
}

// An in-memory database is private to its Knex: its writes take turns per instance.
const sqliteTurnsByKnex = new WeakMap<Knex, ConcurrencyLimit>();

function inMemoryWriteTurns(knex: Knex): ConcurrencyLimit {
    let turns = sqliteTurnsByKnex.get(knex);
    if (!turns) {
        turns = createConcurrencyLimit(1);
        sqliteTurnsByKnex.set(knex, turns);
    }

    return turns;
}

function assertPositiveInteger(value: number, name: string): void {
    if (!Number.isSafeInteger(value) || value < 1) {
        throw new InboxCaptureError('INVALID_INPUT', `${name} must be a positive integer, not ${value}`);
    }
}
