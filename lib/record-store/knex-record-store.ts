import type { Knex } from 'knex';
import { createConcurrencyLimit, type ConcurrencyLimit } from '../concurrency-limit';
import { InboxCaptureError } from '../errors';
import { createBatcher, type Outcome } from '../group-commit';
import { deriveMessageId, sha256Hex } from '../ids';
import type { ApiKeyInfo, EmailDraft, EmailRecord, RecordPage, StoredAttachment } from '../types';
import { migrate } from './migration-source';
import { ORDER_PREFIX_CHARS } from './migrations/20261121000000_initial';
import type { RecordStore, SaveResult } from './record-store';
import type { SqliteReader } from '../sqlite/reader';

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
 * Values per `IN (...)` list, so a sweep batch of any size stays under SQLite's
 * bound-parameter limit (999 before 3.32) and keeps Postgres statements small.
 */
const IN_LIST_CHUNK = 500;
/**
 * Times an id is re-derived when the derived id is held by an unrelated record;
 * each step needs yet another message whose Message-ID mimics a derived id, so
 * this only bounds a loop that adversarial input could otherwise drive.
 */
const MAX_ID_DERIVATIONS = 8;
/**
 * Records one group-commit transaction stores at most (a delivery is never split:
 * a larger one gets a transaction of its own). The commit's fsync is shared by the
 * whole batch, but every delivery in it waits for the last one. Measured (SQLite,
 * 2 vCPUs, 1 KB bodies): batches of 16 took 5.4 ms, of 64 took 14 ms, so this keeps
 * that wait, and the time SQLite's single connection is not free for reads, near
 * 15 ms, while 16-64 concurrent SMTP sessions still share one commit.
 */
const MAX_BATCH_RECORDS = 64;
/**
 * Drafts per lookup statement of a batch (three values each): under SQLite's
 * expression depth (1,000 by default) and bound-parameter limits.
 */
const LOOKUP_CHUNK = 100;
/**
 * Rows per multi-row INSERT into emails (17 values each): under every bound-parameter
 * limit, and under the 500 terms SQLite allows a compound SELECT (knex writes a
 * multi-row insert on SQLite as SELECT ... UNION ALL SELECT ...).
 */
const INSERT_CHUNK = 64;
/** Rows per multi-row INSERT into email_blobs: SQLite's compound SELECT limit, 500 terms. */
const BLOB_ROWS_CHUNK = 500;
/**
 * Group-commit transactions one Postgres store runs at once (SQLite has one
 * writer anyway). One: a second batch in flight shares inboxes with the first
 * (100 inboxes, 8-16 deliveries a batch), so it waits on their advisory locks
 * until the first commits, and meanwhile splits the queue into smaller batches
 * with more commits. Measured (2 vCPUs, fsync on, 16 saves in flight arriving
 * 0-4 ms apart): 1 in flight 364-437 saves/s, 2: 284-337, 4: 153-249. Other
 * processes' batches still run alongside.
 */
const PG_BATCHES_IN_FLIGHT = 1;
/** First wait before re-opening a lost LISTEN connection, ms; doubles up to the max. */
const RECONNECT_FIRST_MS = 100;
/** Longest wait between reconnect attempts, ms. */
const RECONNECT_MAX_MS = 5000;

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
}

type Dialect = 'sqlite' | 'postgres';

interface EmailRow {
    seq: number | string;
    message_id: string;
    source_id: string;
    inbox: string;
    sender: string;
    recipient: string;
    subject: string;
    body: string;
    html_body: string;
    received_at: number | string;
    raw_key: string;
    raw_size: number | string;
    attachments: string;
}

interface KeyRow {
    name: string;
    created_at: number | string;
    revoked_at: number | string | null;
}

const EMAIL_COLUMNS = [
    'seq', 'message_id', 'source_id', 'inbox', 'sender', 'recipient', 'subject',
    'body', 'html_body', 'received_at', 'raw_key', 'raw_size', 'attachments'
];

const KEY_COLUMNS = ['name', 'created_at', 'revoked_at'];

/** A RecordStore on Knex: SQLite (embedded) or Postgres (several processes). */
export function createKnexRecordStore(options: KnexRecordStoreOptions): RecordStore {
    const { knex, reader } = options;
    const dialect = detectDialect(knex);
    const pg = dialect === 'postgres';
    // Reads that need only committed data go through the reader when there is one: they
    // then never queue behind a save transaction on Knex's one SQLite connection (a
    // woken long-poll's page query would otherwise wait for the next group commit).
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
    const sqliteTurns = pg ? null : sqliteConcurrencyLimit(knex);
    const serialize = <T>(fn: () => Promise<T>): Promise<T> => (sqliteTurns ? sqliteTurns.run(fn) : fn());
    const watchers = new Set<() => Promise<void>>();

    // Runs `attempt` again on transient conflicts, with growing, jittered waits.
    const retryTransient = async <T>(attempt: () => Promise<T>): Promise<T> => {
        for (let failures = 1; ; failures++) {
            try {
                return await attempt();
            }
            catch (err) {
                if (failures >= WRITE_ATTEMPTS || !isTransient(err)) {
                    throw err;
                }

                const wait = WRITE_RETRY_MS * 2 ** (failures - 1);
                await sleep(wait / 2 + Math.random() * wait);
            }
        }
    };

    // One write transaction, retried on transient conflicts; on SQLite each attempt takes its turn.
    const write = <T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> =>
        retryTransient(() => serialize(() => knex.transaction(work)));

    // Explicit rather than left to ON DELETE CASCADE: a caller's own SQLite knex may
    // not have foreign_keys on, and a stale email_blobs row would keep a blob forever.
    const removeRows = async (trx: Knex.Transaction, seqs: (number | string)[]) => {
        await trx('email_blobs').whereIn('email_seq', seqs).delete();
        return trx('emails').whereIn('seq', seqs).delete();
    };

    // Postgres writers of one inbox or one Message-ID take turns (transaction-scoped
    // advisory locks, taken in one global order so they cannot deadlock):
    // - 50 concurrent deliveries of one message resolve to replacements instead of
    //   unique violations;
    // - within an inbox, seq values commit in increasing order, so a version probe
    //   that saw max(seq) = n cannot later miss a row with a lower seq.
    // A batch takes the locks of all its deliveries up front, in one statement that
    // takes them in that order, and holds them to its commit.
    const lockDeliveries = async (trx: Knex.Transaction, drafts: EmailDraft[]) => {
        const names = new Set<string>();
        for (const draft of drafts) {
            names.add(`inbox\n${draft.inbox}`);
            names.add(`source\n${draft.sourceId}`);
        }

        const keys = [...names].map(advisoryKey).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        // VALUES yields its rows in the order written, and ORDER BY keeps it so.
        await trx.raw(
            `SELECT pg_advisory_xact_lock(k) FROM (VALUES ${keys.map(() => '(?::bigint, ?::int)').join(', ')}) AS v(k, i) ORDER BY i`,
            keys.flatMap((key, i) => [key.toString(), i]));
    };

    // Delivered at commit, never for a rolled-back delivery; once per inbox per batch.
    const notifyInboxes = async (trx: Knex.Transaction, inboxes: Set<string>) => {
        if (inboxes.size > 0) {
            await trx.raw(
                `SELECT pg_notify(?, inbox) FROM (VALUES ${[...inboxes].map(() => '(?::text)').join(', ')}) AS v(inbox)`,
                [channel, ...inboxes]);
        }
    };

    // The rows a batch's drafts can meet: the stored copy of each (inbox, source)
    // and the holder of each draft's first-choice id. One statement per
    // LOOKUP_CHUNK drafts, where one delivery alone used to take two per draft.
    const lookupRows = async (trx: Knex.Transaction, wanted: PlannedDraft[]): Promise<LookupRow[]> => {
        const rows: LookupRow[] = [];
        for (let i = 0; i < wanted.length; i += LOOKUP_CHUNK) {
            const chunk = wanted.slice(i, i + LOOKUP_CHUNK);
            const found = await trx('emails')
                .select([...EMAIL_COLUMNS, 'message_id_hash', 'source_id_hash'])
                .where((q) => {
                    void q.whereIn('message_id_hash', chunk.map((w) => w.candidateHash));
                    for (const w of chunk) {
                        void q.orWhere((p) => void p.where('inbox', w.draft.inbox).andWhere('source_id_hash', w.sourceHash));
                    }
                }) as LookupRow[];
            rows.push(...found);
        }

        return rows;
    };

    const insertRecords = async (trx: Knex.Transaction, records: PlannedInsert[]) => {
        for (let i = 0; i < records.length; i += INSERT_CHUNK) {
            const chunk = records.slice(i, i + INSERT_CHUNK);
            // The id hash tells the rows apart: RETURNING promises no order.
            const inserted = await trx('emails')
                .insert(chunk.map(({ record, sourceHash, messageHash }) => ({
                    message_id: record.messageId,
                    message_id_hash: messageHash,
                    source_id: record.sourceId,
                    source_id_hash: sourceHash,
                    inbox: record.inbox,
                    sender: record.sender,
                    recipient: record.recipient,
                    subject: record.subject,
                    sender_folded: record.sender.toLowerCase(),
                    subject_folded: record.subject.toLowerCase(),
                    body: record.body,
                    html_body: record.htmlBody,
                    received_at: record.receivedAt,
                    raw_key: record.rawKey,
                    raw_size: record.rawSize,
                    has_attachments: record.attachments.length > 0,
                    attachments: JSON.stringify(record.attachments)
                })))
                .returning(['seq', 'message_id_hash']) as { seq: number | string; message_id_hash: string }[];

            const seqs = new Map(inserted.map((row) => [row.message_id_hash, row.seq]));
            const blobRows = chunk.flatMap(({ record, messageHash }) => {
                const seq = seqs.get(messageHash);
                if (seq === undefined) {
                    throw new Error('Insert into emails returned no seq');
                }

                const keys = new Set([record.rawKey, ...record.attachments.map((a) => a.blobKey)]);
                return [...keys].map((blobKey) => ({ email_seq: seq, blob_key: blobKey }));
            });
            for (let j = 0; j < blobRows.length; j += BLOB_ROWS_CHUNK) {
                await trx('email_blobs').insert(blobRows.slice(j, j + BLOB_ROWS_CHUNK));
            }
        }
    };

    // Stores deliveries in order, each exactly as if it ran alone after the one
    // before (DECISIONS' ids, replacement of the same message in the same inbox),
    // with a handful of statements for the whole batch: one lookup, the ids worked
    // out in memory from it and from the batch's own earlier records, then
    // multi-row deletes and inserts. Nothing is written until the plan is complete,
    // so the few lookups made while planning see the table as the first one did.
    const storeDeliveries = async (trx: Knex.Transaction, deliveries: EmailDraft[][]): Promise<SaveResult[]> => {
        const planned: PlannedDraft[][] = deliveries.map((drafts) => drafts.map((draft) => ({
            draft,
            sourceHash: sha256Hex(draft.sourceId),
            candidateHash: sha256Hex(firstChoiceId(draft, drafts.length === 1))
        })));
        const all = planned.flat();

        // Whether a record holds a message id (by hash), and the stored copy of each
        // (inbox, source), as they stand after the deliveries planned so far.
        const held = new Map<string, boolean>();
        const copies = new Map<string, StoredCopy>();
        for (const { candidateHash } of all) {
            held.set(candidateHash, false);
        }

        for (const row of await lookupRows(trx, all)) {
            held.set(row.message_id_hash, true);
            copies.set(copyKey(row.inbox, row.source_id_hash), { record: toRecord(row), seq: row.seq });
        }

        const isHeld = async (messageId: string) => {
            const hash = sha256Hex(messageId);
            let known = held.get(hash);
            if (known === undefined) {
                known = await trx('emails').select('seq').where('message_id_hash', hash).first() !== undefined;
                held.set(hash, known);
            }

            return known;
        };

        const results: SaveResult[] = [];
        const inserts: PlannedInsert[] = [];
        const removed: (number | string)[] = [];
        for (const drafts of planned) {
            const saved: EmailRecord[] = [];
            const replaced: EmailRecord[] = [];
            for (const { draft, sourceHash } of drafts) {
                const key = copyKey(draft.inbox, sourceHash);
                const earlier = copies.get(key);
                let messageId: string;
                if (earlier) {
                    // The replacement is a new row, not an update: it takes a new seq,
                    // so inboxVersion() grows on a replacement too. A copy stored
                    // earlier in this batch is simply never written.
                    replaced.push(copyRecord(earlier.record));
                    if (earlier.insert) {
                        earlier.insert.superseded = true;
                    }
                    else {
                        removed.push(earlier.seq!);
                    }

                    messageId = earlier.record.messageId;
                }
                else {
                    messageId = await chooseId(draft, drafts.length === 1, isHeld);
                }

                const record: EmailRecord = { messageId, ...draft };
                const insert: PlannedInsert = { record, sourceHash, messageHash: sha256Hex(messageId), superseded: false };
                inserts.push(insert);
                copies.set(key, { record, insert });
                held.set(insert.messageHash, true);
                saved.push(record);
            }

            results.push({ saved, replaced });
        }

        for (let i = 0; i < removed.length; i += IN_LIST_CHUNK) {
            await removeRows(trx, removed.slice(i, i + IN_LIST_CHUNK));
        }

        await insertRecords(trx, inserts.filter((insert) => !insert.superseded));
        return results;
    };

    // One group-commit transaction for a batch of deliveries, in its turn. Each
    // delivery keeps its own outcome: when the batch fails for a reason of one of
    // its deliveries (bad data, a trigger), it runs again with a savepoint per
    // delivery, so that one fails alone and the rest commit. A failure of the
    // transaction itself (BEGIN, COMMIT, the connection) fails every delivery:
    // none was acknowledged. Transient conflicts retry the whole batch.
    const saveBatch = async (deliveries: EmailDraft[][]): Promise<Outcome<SaveResult>[]> => {
        let isolate = false;
        for (;;) {
            try {
                return await retryTransient(() => knex.transaction(async (trx) => {
                    if (pg) {
                        await lockDeliveries(trx, deliveries.flat());
                    }

                    const outcomes: Outcome<SaveResult>[] = [];
                    if (isolate) {
                        for (const drafts of deliveries) {
                            try {
                                const [value] = await trx.transaction((savepoint) => storeDeliveries(savepoint, [drafts]));
                                outcomes.push({ ok: true, value: value! });
                            }
                            catch (err) {
                                if (!isOwnFailure(err)) {
                                    throw err;
                                }

                                outcomes.push({ ok: false, error: err });
                            }
                        }
                    }
                    else {
                        for (const value of await storeDeliveries(trx, deliveries)) {
                            outcomes.push({ ok: true, value });
                        }
                    }

                    if (pg) {
                        const inboxes = new Set<string>();
                        for (const outcome of outcomes) {
                            for (const record of outcome.ok ? outcome.value.saved : []) {
                                inboxes.add(record.inbox);
                            }
                        }

                        await notifyInboxes(trx, inboxes);
                    }

                    return outcomes;
                }));
            }
            catch (err) {
                // A lone delivery's own failure is simply its outcome.
                if (isolate || deliveries.length === 1 || !isOwnFailure(err)) {
                    throw err;
                }

                isolate = true;
            }
        }
    };

    const batchSave = createBatcher<EmailDraft[], SaveResult>({
        turns: sqliteTurns ?? createConcurrencyLimit(PG_BATCHES_IN_FLIGHT),
        maxWeight: MAX_BATCH_RECORDS,
        weight: (drafts) => drafts.length,
        run: saveBatch
    });

    const store: RecordStore = {
        migrate() {
            return migrate(knex);
        },

        async saveEmails(drafts) {
            if (drafts.length === 0) {
                return { saved: [], replaced: [] };
            }

            // Shares a transaction, and its commit, with the saves queued alongside.
            return batchSave(drafts.map(cleanDraft));
        },

        async getEmail(messageId) {
            const hash = sha256Hex(cleanText(messageId));
            const [row] = await read<EmailRow>(knex('emails').select(EMAIL_COLUMNS).where('message_id_hash', hash).limit(1));
            return row ? toRecord(row) : null;
        },

        async listEmails(query) {
            assertPositiveInteger(query.limit, 'limit');
            const q = knex('emails').select(EMAIL_COLUMNS).where('inbox', cleanText(query.inbox));
            if (query.after) {
                const { receivedAt } = query.after;
                const messageId = cleanText(query.after.messageId);
                if (pg) {
                    // The index bound (the prefix never sorts after the whole id), then
                    // the exact position; rows whose prefix ties are filtered, not sought.
                    q.whereRaw(`(received_at, left(message_id, ${ORDER_PREFIX_CHARS})) <= (?, left(?, ${ORDER_PREFIX_CHARS}))`, [receivedAt, messageId]);
                }

                q.whereRaw('(received_at, message_id) < (?, ?)', [receivedAt, messageId]);
            }

            if (query.sender !== undefined) {
                q.whereRaw(`sender_folded LIKE ? ESCAPE '\\'`, [containsPattern(query.sender)]);
            }

            if (query.subject !== undefined) {
                q.whereRaw(`subject_folded LIKE ? ESCAPE '\\'`, [containsPattern(query.subject)]);
            }

            if (query.receivedAfter !== undefined) {
                q.where('received_at', '>=', query.receivedAfter);
            }

            if (query.receivedBefore !== undefined) {
                q.where('received_at', '<', query.receivedBefore);
            }

            if (query.hasAttachments !== undefined) {
                q.where('has_attachments', query.hasAttachments);
            }

            q.orderByRaw(pg ?
                `received_at DESC, left(message_id, ${ORDER_PREFIX_CHARS}) DESC, message_id DESC` :
                'received_at DESC, message_id DESC');

            // One row more than asked says whether another page exists.
            const rows = await read<EmailRow>(q.limit(query.limit + 1));
            return {
                records: rows.slice(0, query.limit).map(toRecord),
                hasMore: rows.length > query.limit
            } satisfies RecordPage;
        },

        async inboxVersion(inbox) {
            const [row] = await read<{ version: number | string | null }>(knex('emails').max({ version: 'seq' }).where('inbox', cleanText(inbox)));
            return row?.version === null || row?.version === undefined ? 0 : toNumber(row.version);
        },

        async deleteEmail(messageId) {
            const hash = sha256Hex(cleanText(messageId));
            return write(async (trx) => {
                const row = await trx('emails').select(EMAIL_COLUMNS).where('message_id_hash', hash).first() as EmailRow | undefined;
                if (!row) {
                    return null;
                }

                // A concurrent delete (another Postgres process) may have won.
                const deleted = await removeRows(trx, [row.seq]);
                return deleted === 1 ? toRecord(row) : null;
            });
        },

        async deleteInboxBatch(inbox, batchSize) {
            assertPositiveInteger(batchSize, 'batchSize');
            const cleanInbox = cleanText(inbox);
            return write(async (trx) => {
                // Oldest stored first. On Postgres, rows another process is deleting
                // right now are skipped, so two bulk deletes share the work.
                const select = trx('emails').select(EMAIL_COLUMNS).where('inbox', cleanInbox).orderBy('seq', 'asc').limit(batchSize);
                const rows = await (pg ? select.forUpdate().skipLocked() : select) as EmailRow[];
                if (rows.length > 0) {
                    await removeRows(trx, rows.map((r) => r.seq));
                }

                return rows.map(toRecord);
            });
        },

        async referencedBlobKeys(keys) {
            const referenced = new Set<string>();
            const unique = [...new Set(keys)];
            for (let i = 0; i < unique.length; i += IN_LIST_CHUNK) {
                const rows = await knex('email_blobs')
                    .distinct('blob_key')
                    .whereIn('blob_key', unique.slice(i, i + IN_LIST_CHUNK)) as { blob_key: string }[];
                for (const row of rows) {
                    referenced.add(row.blob_key);
                }
            }

            return referenced;
        },

        async createKey(name, hashHex) {
            const info: ApiKeyInfo = { name: cleanText(name), createdAt: Date.now(), revokedAt: null };
            try {
                await serialize(() => knex('api_keys').insert({
                    name: info.name,
                    key_hash: cleanText(hashHex),
                    created_at: info.createdAt
                }));
            }
            catch (err) {
                if (isUniqueViolation(err) && await knex('api_keys').select('name').where('name', info.name).first()) {
                    throw new InboxCaptureError('DUPLICATE_KEY', `An API key named ${JSON.stringify(info.name)} already exists`, { cause: err });
                }

                throw err;
            }

            return info;
        },

        async findActiveKeyByHash(hashHex) {
            const row = await knex('api_keys')
                .select(KEY_COLUMNS)
                .where('key_hash', cleanText(hashHex))
                .whereNull('revoked_at')
                .first() as KeyRow | undefined;
            return row ? toKeyInfo(row) : null;
        },

        async revokeKey(name) {
            const updated = await serialize(async () => knex('api_keys')
                .where('name', cleanText(name))
                .whereNull('revoked_at')
                .update({ revoked_at: Date.now() }));
            return updated > 0;
        },

        async listKeys() {
            const rows = await knex('api_keys').select(KEY_COLUMNS).orderBy([
                { column: 'created_at', order: 'asc' },
                { column: 'id', order: 'asc' }
            ]) as KeyRow[];
            return rows.map(toKeyInfo);
        },

        async close() {
            await Promise.all([...watchers].map((unwatch) => unwatch()));
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

/** What a raw node-postgres client offers that LISTEN needs. */
interface ListenClient {
    query(sql: string): Promise<unknown>;
    escapeIdentifier(name: string): string;
    on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
    on(event: 'error' | 'end', listener: () => void): unknown;
    end(): Promise<void>;
}

// LISTEN on a connection of its own, outside the pool (a pooled connection is
// handed to other queries and may be closed by the pool at any time). A lost
// connection is re-opened with backoff; notifications sent meanwhile are lost,
// which the long-poll's periodic check covers.
async function watchNotifications(knex: Knex, channel: string, listener: (inbox: string) => void): Promise<() => Promise<void>> {
    let current: ListenClient | null = null;
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let delay = RECONNECT_FIRST_MS;

    const connect = async (): Promise<void> => {
        const client = await knex.client.acquireRawConnection() as ListenClient;
        let lost = false;
        const onLost = () => {
            if (lost || stopped) {
                return;
            }

            lost = true;
            if (current === client) {
                current = null;
            }

            client.end().catch(() => undefined);
            scheduleReconnect();
        };

        client.on('notification', (message) => {
            if (message.channel !== channel || message.payload === undefined) {
                return;
            }

            try {
                listener(message.payload);
            }
            catch {
                // A listener's failure must not take the connection down.
            }
        });
        client.on('error', onLost);
        client.on('end', onLost);

        try {
            await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
        }
        catch (err) {
            lost = true;
            await client.end().catch(() => undefined);
            throw err;
        }

        if (stopped) {
            lost = true;
            await client.end().catch(() => undefined);
            return;
        }

        current = client;
        delay = RECONNECT_FIRST_MS;
    };

    const scheduleReconnect = () => {
        if (stopped || timer) {
            return;
        }

        timer = setTimeout(() => {
            timer = undefined;
            connect().catch(() => {
                delay = Math.min(delay * 2, RECONNECT_MAX_MS);
                scheduleReconnect();
            });
        }, delay);
    };

    await connect();

    return async () => {
        stopped = true;
        clearTimeout(timer);
        timer = undefined;
        const client = current;
        current = null;
        if (client) {
            // `stopped` turns the 'end' this causes into a no-op for the reconnect logic.
            await client.end().catch(() => undefined);
        }
    };
}

function detectDialect(knex: Knex): Dialect {
    const client = knex.client.config.client;
    if (client === 'sqlite3') {
        return 'sqlite';
    }

    if (client === 'pg' || client === 'postgres' || client === 'postgresql') {
        return 'postgres';
    }

    throw new Error(`createKnexRecordStore supports the 'sqlite3' and 'pg' clients, not ${String(client)}`);
}

// Every write of this process to one SQLite database takes its turn (keyed by the
// Knex instance, so two stores on one instance share it).
const sqliteTurnsByKnex = new WeakMap<Knex, ConcurrencyLimit>();

function sqliteConcurrencyLimit(knex: Knex): ConcurrencyLimit {
    let turns = sqliteTurnsByKnex.get(knex);
    if (!turns) {
        turns = createConcurrencyLimit(1);
        sqliteTurnsByKnex.set(knex, turns);
    }

    return turns;
}

/** One draft of a batch, with the digests its lookups use. */
interface PlannedDraft {
    draft: EmailDraft;
    sourceHash: string;
    /** Digest of the id the draft takes when nothing holds it. */
    candidateHash: string;
}

/** A record a batch will insert, unless a later delivery of the batch replaces it first. */
interface PlannedInsert {
    record: EmailRecord;
    sourceHash: string;
    messageHash: string;
    superseded: boolean;
}

/** The copy of a message an inbox holds at this point of a batch: a stored row or one the batch inserts. */
interface StoredCopy {
    record: EmailRecord;
    seq?: number | string;
    insert?: PlannedInsert;
}

interface LookupRow extends EmailRow {
    message_id_hash: string;
    source_id_hash: string;
}

// `\n` never occurs in a hex digest, and the digest has a fixed length, so the key is unambiguous.
function copyKey(inbox: string, sourceHash: string): string {
    return `${inbox}\n${sourceHash}`;
}

// DECISIONS: the bare Message-ID for a single-inbox delivery, otherwise deriveMessageId().
function firstChoiceId(draft: EmailDraft, single: boolean): string {
    return single ? draft.sourceId : deriveMessageId(draft.sourceId, draft.inbox);
}

// The first choice when free; if even the derived id is held (some other message's
// Message-ID happens to look like a derived id), derive again from it.
async function chooseId(draft: EmailDraft, single: boolean, isHeld: (messageId: string) => Promise<boolean>): Promise<string> {
    let candidate = firstChoiceId(draft, single);
    for (let derivations = 0; await isHeld(candidate); derivations++) {
        if (derivations >= MAX_ID_DERIVATIONS) {
            throw new Error(`No free message id for a copy of ${draft.sourceId} in ${draft.inbox}`);
        }

        candidate = deriveMessageId(candidate, draft.inbox);
    }

    return candidate;
}

// A replaced record goes to another caller than the one it was saved for: its own copy.
function copyRecord(record: EmailRecord): EmailRecord {
    return { ...record, attachments: record.attachments.map((a) => ({ ...a })) };
}

// A failure of one delivery (its data, a trigger), as opposed to one of the
// transaction or the database, which every delivery of the batch shares.
function isOwnFailure(err: unknown): boolean {
    return !isTransient(err) && !isUnavailableError(err);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text as both backends can store it and read back unchanged: Postgres rejects
 * NUL in text, and a lone UTF-16 surrogate cannot be encoded in UTF-8 (drivers
 * would turn it into U+FFFD on the way in). Applied on SQLite too, so a record
 * reads the same whichever backend holds it; lookups apply it to their input.
 */
function cleanText(value: string): string {
    const noNul = value.includes('\u0000') ? value.replace(/\u0000/g, '') : value;
    return noNul.replace(LONE_SURROGATE, '\uFFFD');
}

// Blob keys are ours (hex from newBlobPrefix), never from mail: stored as given.
function cleanDraft(draft: EmailDraft): EmailDraft {
    return {
        sourceId: cleanText(draft.sourceId),
        inbox: cleanText(draft.inbox),
        sender: cleanText(draft.sender),
        recipient: cleanText(draft.recipient),
        subject: cleanText(draft.subject),
        body: cleanText(draft.body),
        htmlBody: cleanText(draft.htmlBody),
        receivedAt: draft.receivedAt,
        rawKey: draft.rawKey,
        rawSize: draft.rawSize,
        attachments: draft.attachments.map((a) => ({
            filename: cleanText(a.filename),
            contentType: cleanText(a.contentType),
            size: a.size,
            blobKey: a.blobKey
        }))
    };
}

// `%`, `_` and `\` in the user's text match literally; the stored side is folded
// with the same toLowerCase() at write time.
function containsPattern(text: string): string {
    const escaped = cleanText(text).toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
    return `%${escaped}%`;
}

function toRecord(row: EmailRow): EmailRecord {
    return {
        messageId: row.message_id,
        sourceId: row.source_id,
        inbox: row.inbox,
        sender: row.sender,
        recipient: row.recipient,
        subject: row.subject,
        body: row.body,
        htmlBody: row.html_body,
        receivedAt: toNumber(row.received_at),
        rawKey: row.raw_key,
        rawSize: toNumber(row.raw_size),
        attachments: parseAttachments(row.attachments)
    };
}

function parseAttachments(json: string): StoredAttachment[] {
    const parsed: unknown = JSON.parse(json);
    if (!Array.isArray(parsed)) {
        throw new Error('Stored attachments are not a JSON array');
    }

    return parsed.map((a: StoredAttachment) => ({
        filename: a.filename,
        contentType: a.contentType,
        size: a.size,
        blobKey: a.blobKey
    }));
}

function toKeyInfo(row: KeyRow): ApiKeyInfo {
    return {
        name: row.name,
        createdAt: toNumber(row.created_at),
        revokedAt: row.revoked_at === null ? null : toNumber(row.revoked_at)
    };
}

// node-postgres returns bigint columns as strings; our values are < 2^53.
function toNumber(value: number | string): number {
    return typeof value === 'number' ? value : Number(value);
}

function assertPositiveInteger(value: number, name: string): void {
    if (!Number.isSafeInteger(value) || value < 1) {
        throw new InboxCaptureError('INVALID_INPUT', `${name} must be a positive integer, not ${value}`);
    }
}

// 64 bits of SHA-256 as the signed bigint pg_advisory_xact_lock takes.
function advisoryKey(name: string): bigint {
    return BigInt.asIntN(64, BigInt(`0x${sha256Hex(name).slice(0, 16)}`));
}

function errorCode(err: unknown): string | undefined {
    const code = (err as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? code : undefined;
}

function isUniqueViolation(err: unknown): boolean {
    const code = errorCode(err);
    return code === '23505' ||
        (code === 'SQLITE_CONSTRAINT' && /UNIQUE constraint failed/.test((err as Error).message));
}

// Worth another attempt: unique races and serialization failures (Postgres), a
// lock held too long by another process (SQLite).
function isTransient(err: unknown): boolean {
    const code = errorCode(err);
    return code === '23505' || code === '40001' || code === '40P01' || code === 'SQLITE_BUSY';
}

// Node's socket errors for a database that cannot be reached (refused, reset, no route, no name).
const NETWORK_CODES = new Set([
    'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT',
    'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN'
]);

// Postgres SQLSTATEs of a server that is shutting down, starting, out of resources,
// read-only (a standby after failover) or too busy: the same call can succeed later.
// Class 08 (connection exception) is matched by prefix.
const POSTGRES_UNAVAILABLE_CODES = new Set([
    '57P01', // admin_shutdown: the backend was terminated (restart, pg_terminate_backend)
    '57P02', // crash_shutdown
    '57P03', // cannot_connect_now: starting up or shutting down
    '57014', // query_canceled: statement_timeout on an overloaded server
    '55P03', // lock_not_available: lock_timeout
    '53100', // disk_full
    '53200', // out_of_memory
    '53300', // too_many_connections
    '25006', // read_only_sql_transaction: connected to a standby
    '40001', // serialization_failure, still failing after the write retries
    '40P01' // deadlock_detected, likewise
]);

// SQLite result codes of a database another process holds locked, or whose file
// cannot be opened, read or written right now (node-sqlite3 puts the primary code in `code`).
const SQLITE_UNAVAILABLE_CODES = new Set([
    'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_PROTOCOL'
]);

// node-postgres' errors for a lost or unusable connection carry no code, only these
// messages (which Knex prefixes with the failed SQL).
const LOST_CONNECTION = /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|Query read timeout/;

/** Causes followed to find the driver's own error under wrappers. */
const MAX_CAUSE_DEPTH = 5;

/**
 * True when `err` says the database cannot be reached or used right now (down,
 * restarting, locked by another process, out of connections or disk), as opposed
 * to a failure of the call itself. Knex's pool timeout counts: no connection
 * became free within acquireConnectionTimeout.
 */
function isUnavailableError(err: unknown): boolean {
    for (let depth = 0, current = err; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
        const code = errorCode(current);
        if (code !== undefined && (
            NETWORK_CODES.has(code) ||
            POSTGRES_UNAVAILABLE_CODES.has(code) ||
            (code.startsWith('08') && code.length === 5) ||
            SQLITE_UNAVAILABLE_CODES.has(code))) {
            return true;
        }

        if (current.name === 'KnexTimeoutError' || LOST_CONNECTION.test(current.message)) {
            return true;
        }

        // Node's dual-stack connect fails with one error per address tried.
        if (current instanceof AggregateError && current.errors.some(isUnavailableError)) {
            return true;
        }

        current = current.cause;
    }

    return false;
}

// Every method of the store, with "the database is unreachable right now" turned into
// RECORD_STORE_UNAVAILABLE, which adapters answer with HTTP 503 and SMTP 451. Other
// failures pass unchanged: they are bugs or bad input, not outages.
function classifyFailures(store: RecordStore): RecordStore {
    const wrapped: Record<string, unknown> = { ...store };
    for (const [name, method] of Object.entries(store)) {
        if (typeof method !== 'function' || name === 'close') {
            continue;
        }

        wrapped[name] = async (...args: unknown[]) => {
            try {
                return await (method as (...a: unknown[]) => Promise<unknown>).apply(store, args);
            }
            catch (err) {
                if (err instanceof InboxCaptureError || !isUnavailableError(err)) {
                    throw err;
                }

                // The driver's words (host, port, SQL) are for the log; adapters never send them.
                throw new InboxCaptureError('RECORD_STORE_UNAVAILABLE', `record store unavailable in ${name}(): ${(err as Error).message}`, { cause: err });
            }
        };
    }

    return wrapped as unknown as RecordStore;
}

function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}
