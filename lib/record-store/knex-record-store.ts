import type { Knex } from 'knex';
import { InboxCaptureError } from '../errors';
import { deriveMessageId, sha256Hex } from '../ids';
import type { ApiKeyInfo, EmailDraft, EmailRecord, RecordPage, StoredAttachment } from '../types';
import { migrate } from './migration-source';
import { ORDER_PREFIX_CHARS } from './migrations/20261121000000_initial';
import type { RecordStore, SaveResult } from './record-store';

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
    const { knex } = options;
    const dialect = detectDialect(knex);
    const pg = dialect === 'postgres';
    const channel = options.notifyChannel ?? DEFAULT_NOTIFY_CHANNEL;
    const serialize = pg ? <T>(fn: () => Promise<T>) => fn() : sqliteWriteLock(knex);
    const watchers = new Set<() => Promise<void>>();

    // One write transaction, retried on transient conflicts. SQLite writers of this
    // process take turns: knex opens SQLite transactions with a deferred BEGIN, and
    // two of them that read and then write would fail each other with SQLITE_BUSY.
    const write = async <T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> => {
        for (let attempt = 1; ; attempt++) {
            try {
                return await serialize(() => knex.transaction(work));
            }
            catch (err) {
                if (attempt >= WRITE_ATTEMPTS || !isTransient(err)) {
                    throw err;
                }

                const wait = WRITE_RETRY_MS * 2 ** (attempt - 1);
                await sleep(wait / 2 + Math.random() * wait);
            }
        }
    };

    const idTaken = async (trx: Knex.Transaction, messageId: string) => {
        const row = await trx('emails').select('seq').where('message_id_hash', sha256Hex(messageId)).first();
        return row !== undefined;
    };

    // DECISIONS: the bare Message-ID for a single-inbox delivery when free,
    // otherwise deriveMessageId(). If even that is held (some other message's
    // Message-ID happens to look like a derived id), derive again from it.
    const chooseId = async (trx: Knex.Transaction, draft: EmailDraft, single: boolean) => {
        let candidate = single ? draft.sourceId : deriveMessageId(draft.sourceId, draft.inbox);
        for (let derivations = 0; await idTaken(trx, candidate); derivations++) {
            if (derivations >= MAX_ID_DERIVATIONS) {
                throw new Error(`No free message id for a copy of ${draft.sourceId} in ${draft.inbox}`);
            }

            candidate = deriveMessageId(candidate, draft.inbox);
        }

        return candidate;
    };

    const insertRecord = async (trx: Knex.Transaction, record: EmailRecord, sourceHash: string) => {
        const inserted = await trx('emails')
            .insert({
                message_id: record.messageId,
                message_id_hash: sha256Hex(record.messageId),
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
            })
            .returning('seq') as { seq: number | string }[];

        const seq = inserted[0]?.seq;
        if (seq === undefined) {
            throw new Error('Insert into emails returned no seq');
        }

        const keys = new Set([record.rawKey, ...record.attachments.map((a) => a.blobKey)]);
        await trx('email_blobs').insert([...keys].map((blobKey) => ({ email_seq: seq, blob_key: blobKey })));
    };

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
    const lockDelivery = async (trx: Knex.Transaction, drafts: EmailDraft[]) => {
        const names = new Set<string>();
        for (const draft of drafts) {
            names.add(`inbox\n${draft.inbox}`);
            names.add(`source\n${draft.sourceId}`);
        }

        const keys = [...names].map(advisoryKey).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        for (const key of keys) {
            await trx.raw('SELECT pg_advisory_xact_lock(?::bigint)', [key.toString()]);
        }
    };

    const store: RecordStore = {
        migrate() {
            return migrate(knex);
        },

        async saveEmails(drafts) {
            if (drafts.length === 0) {
                return { saved: [], replaced: [] };
            }

            const clean = drafts.map(cleanDraft);
            return write(async (trx): Promise<SaveResult> => {
                if (pg) {
                    await lockDelivery(trx, clean);
                }

                const saved: EmailRecord[] = [];
                const replaced: EmailRecord[] = [];
                for (const draft of clean) {
                    const sourceHash = sha256Hex(draft.sourceId);
                    const existing = await trx('emails')
                        .select(EMAIL_COLUMNS)
                        .where({ inbox: draft.inbox, source_id_hash: sourceHash })
                        .first() as EmailRow | undefined;

                    let messageId: string;
                    if (existing) {
                        // Delete and insert, not update: the new row takes a new seq,
                        // so inboxVersion() grows on a replacement too.
                        await removeRows(trx, [existing.seq]);
                        replaced.push(toRecord(existing));
                        messageId = existing.message_id;
                    }
                    else {
                        messageId = await chooseId(trx, draft, clean.length === 1);
                    }

                    const record: EmailRecord = { messageId, ...draft };
                    await insertRecord(trx, record, sourceHash);
                    saved.push(record);
                }

                if (pg) {
                    // Delivered at commit, never for a rolled-back delivery.
                    for (const inbox of new Set(clean.map((d) => d.inbox))) {
                        await trx.raw('SELECT pg_notify(?, ?)', [channel, inbox]);
                    }
                }

                return { saved, replaced };
            });
        },

        async getEmail(messageId) {
            const row = await knex('emails')
                .select(EMAIL_COLUMNS)
                .where('message_id_hash', sha256Hex(cleanText(messageId)))
                .first() as EmailRow | undefined;
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
            const rows = await q.limit(query.limit + 1) as EmailRow[];
            return {
                records: rows.slice(0, query.limit).map(toRecord),
                hasMore: rows.length > query.limit
            } satisfies RecordPage;
        },

        async inboxVersion(inbox) {
            const row = await knex('emails').max({ version: 'seq' }).where('inbox', cleanText(inbox)).first() as
                { version: number | string | null } | undefined;
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
const sqliteLocks = new WeakMap<Knex, <T>(fn: () => Promise<T>) => Promise<T>>();

function sqliteWriteLock(knex: Knex): <T>(fn: () => Promise<T>) => Promise<T> {
    let lock = sqliteLocks.get(knex);
    if (!lock) {
        let tail: Promise<unknown> = Promise.resolve();
        lock = <T>(fn: () => Promise<T>): Promise<T> => {
            const run = tail.then(fn, fn);
            tail = run.catch(() => undefined);
            return run;
        };

        sqliteLocks.set(knex, lock);
    }

    return lock;
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
