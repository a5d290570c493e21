import type { Readable } from 'node:stream';
import { retryWithBackoff } from '../util/backoff';
import { startBackgroundSweeps } from './background-sweeps';
import { ORPHAN_GRACE_MS } from '../defaults';
import { blobKeysOf } from '../blob-store/blob-key';
import type { BlobStore, DownloadLink } from '../blob-store/blob-store';
import { InboxCaptureError } from '../errors';
import type { HeaderField } from '../mime/header-fields';
import { createIngest, RAW_CONTENT_TYPE, type IngestContext, type IngestOptions } from '../ingest/ingest';
import { generateApiKey, hashApiKey } from './keys';
import { createSmtpUsers, type SmtpUsers } from './smtp-users';
import { createMessageBudget, type MessageBudget } from '../util/message-budget';
import { createLongPoller, type LongPoller, type WaitOptions } from '../long-poll/poller';
import { createNotifier, type Notifier } from '../long-poll/notifier';
import { createParsePool } from '../mime/parse-pool';
import { createHeaderReader } from './header-reader';
import { createFaults, type Faults } from './faults';
import type { DeliveryKind, RecordStore } from '../record-store/record-store';
import { createDeliverySenders, type DeliverySender } from './delivery-senders';
import { runRetentionPass, type DeleteInBatches, type RetentionPolicy } from './retention';
import type { ApiKeyInfo, EmailRecord, InboxPage, InboxQuery, KeyScope, ListQuery, RecordPage, SearchTerm } from '../types';
import type { OnProgress } from '../util/progress';
import { inboxInScope, type InboxScope } from '../identity/key-scope';
import type { InboxFromAddress } from '../identity/recipients';
import { removeUnreferencedBlobs } from '../ingest/unreferenced-blobs';
import { resolveServiceOptions, type InboxCaptureOptions } from './service-options';

/** docs/design.md: bulk delete works in batches of 25. */
export const DELETE_BATCH_SIZE = 25;
/** Blob keys the orphan sweep looks up in one query (and reports progress after). */
const SWEEP_CHUNK = 500;
/** Retries of one failed delete batch before giving up, waiting 50 ms, 100 ms, 200 ms ... */
const DELETE_RETRIES = 5;
const DELETE_BACKOFF_MS = 50;

export type { InboxCaptureOptions } from './service-options';

/** The whole service, protocol-free: adapters (HTTP, SMTP, CLI) call only this. */
export interface InboxCapture extends SmtpUsers {
    readonly recordStore: RecordStore;
    readonly blobStore: BlobStore;
    readonly notifier: Notifier;
    readonly longPoller: LongPoller;
    /** The budget of message bytes in flight its ingests share (the SMTP listener reserves DATA from it too). */
    readonly messageBudget: MessageBudget;
    /** Largest message its ingests accept, bytes (the SMTP listener advertises and enforces it too). */
    readonly maxMessageBytes: number;
    /** The SMTP fault rules (docs/api.md, "Faults"): kept in the record store, applied by an SMTP listener built on the service. */
    readonly faults: Faults;
    /** The address → inbox mapping its ingests use (the SMTP listener checks a tenant's inbox at RCPT TO with it). */
    readonly inboxFromAddress: InboxFromAddress;

    /** Runs migrations, subscribes to cross-process notifications, starts the configured sweeps. */
    start(): Promise<void>;
    /**
     * Parses and stores one message; returns the stored copies, one per inbox (records:
     * the adapters turn them into what they show).
     */
    ingestRawEmail(raw: Buffer | string | Readable, options?: IngestOptions): Promise<EmailRecord[]>;
    /** One page of an inbox. */
    listEmails(query: ListQuery): Promise<RecordPage>;
    /** One page, waiting for matching mail when there is none yet. */
    waitForEmails(query: ListQuery, options: WaitOptions): Promise<RecordPage>;
    /** The email, or null when it does not exist or (with `scope`) lies in an inbox outside it. */
    getEmail(messageId: string, scope?: InboxScope): Promise<EmailRecord | null>;
    /** The header fields of the email's top-level message, read from its raw blob (docs/api.md, "Header fields"), or null as for getEmail(). */
    getHeaders(messageId: string, scope?: InboxScope): Promise<HeaderField[] | null>;
    /** One page of the inboxes that hold mail, most recently received first, then by name. */
    listInboxes(query: InboxQuery): Promise<InboxPage>;
    /** Deletes the record, then those of its blobs no other copy references; false when it does not exist or lies outside `scope`. */
    deleteEmail(messageId: string, scope?: InboxScope): Promise<boolean>;
    /** Deletes every email of an inbox (those matching every term of `q`, when given) in batches; returns how many. */
    deleteInbox(inbox: string, q?: SearchTerm[]): Promise<number>;
    /**
     * Replaces an email's tags (INVALID_INPUT for one that is not a tag: lib/identity/tags.ts); the record, or null as for
     * getEmail(). Wakes no long-poll and sends no webhook: tags are notes, not new mail (docs/api.md, "Tags").
     */
    setTags(messageId: string, tags: string[], scope?: InboxScope): Promise<EmailRecord | null>;
    /** Marks an email read or unread; the record, or null as for getEmail(). Wakes no long-poll and sends no webhook, as setTags(). */
    setSeen(messageId: string, seen: boolean, scope?: InboxScope): Promise<EmailRecord | null>;
    /**
     * One retention pass (docs/operations.md, "Retention"): deletes the emails older than `maxAgeMs` (measured
     * from `now`, default the clock) and those beyond the newest `maxPerInbox` of each inbox,
     * as deleteInbox() does; returns how many. `signal` ends it early, between two batches.
     */
    pruneEmails(policy: RetentionPolicy, options?: { now?: number; signal?: AbortSignal; onProgress?: OnProgress }): Promise<number>;
    /** A time-limited link to the raw .eml (a URL, or a signed target the server serves), or null as for getEmail(). */
    rawDownloadLink(messageId: string, scope?: InboxScope): Promise<DownloadLink | null>;
    /** A time-limited link to one attachment (as rawDownloadLink()), or null when email (in `scope`) or attachment is missing. */
    attachmentDownloadLink(messageId: string, filename: string, scope?: InboxScope): Promise<DownloadLink | null>;
    /** Creates a key (full access unless `scope` limits it) and returns the plain token (shown once). */
    createKey(name: string, scope?: Partial<KeyScope>): Promise<string>;
    /** The active key a token belongs to, or null. */
    verifyKey(token: string): Promise<ApiKeyInfo | null>;
    /** Revokes the named key; onKeyRevoked() listeners have heard of it when this settles. */
    revokeKey(name: string): Promise<boolean>;
    /** Calls `listener` with each key revoked through this service (a cache of accepted keys drops it at once); answers the unsubscribe. */
    onKeyRevoked(listener: (name: string) => void): () => void;
    listKeys(): Promise<ApiKeyInfo[]>;
    /**
     * Removes blobs no record references and older than `graceMs` (default 10 min: younger ones may belong to an
     * ingest whose record is not committed yet); returns how many. `signal` ends it early, between two chunks of
     * keys; `onProgress` hears how many blobs it has looked at.
     */
    sweepOrphanBlobs(options?: { graceMs?: number; signal?: AbortSignal; onProgress?: OnProgress }): Promise<number>;
    /**
     * From now on each ingest saves, in its commit, one pending delivery of `kind` per copy
     * and target that `sender.targetsFor(draft)` names, then calls `sender.wake()`. The
     * sending is the adapter's (adapters/webhooks, adapters/relay, over the record store's
     * outbox); close() calls `sender.close()` before the stores close. Once per kind and
     * service; answers the stop, which ends the routing and closes the sender.
     */
    routeDeliveries(kind: DeliveryKind, sender: DeliverySender): () => Promise<void>;
    /** Stops the sweeps (waiting for a pass under way), the delivery senders and watching; closes both stores. */
    close(): Promise<void>;
}

/** Builds the service from its stores; its options are checked here, once (a mistake throws a TypeError). */
export function createInboxCapture(options: InboxCaptureOptions): InboxCapture {
    const settings = resolveServiceOptions(options);
    const { recordStore, blobStore, log, maxMessageBytes } = settings;
    const notifier = settings.notifier ?? createNotifier();
    const longPoller = createLongPoller({ recordStore, notifier });
    const ttl = settings.downloadTtlSeconds;
    let unwatch: (() => Promise<void>) | undefined;
    let stopSweeps: (() => Promise<void>) | undefined;
    const revocationListeners = new Set<(name: string) => void>();
    // The service's own: every ingest and the SMTP sessions of a listener built on it share it.
    const messageBudget = createMessageBudget(settings.maxMessageBytesInFlight);
    const parsePool = createParsePool({ size: settings.parseWorkers, timeoutMs: settings.parseTimeoutMs, workerFile: settings.parseWorkerFile });
    const readHeaders = createHeaderReader(blobStore, (section) => parsePool.parseHeaders(section));
    const faults = createFaults({ recordStore, inboxFromAddress: settings.inboxFromAddress, refreshMs: settings.faultRefreshMs });
    const senders = createDeliverySenders();
    const ingestContext: IngestContext = {
        recordStore,
        blobStore,
        notifier,
        maxMessageBytes,
        messageBudget,
        blobStoreTimeoutMs: settings.blobStoreTimeoutMs,
        inboxFromAddress: settings.inboxFromAddress,
        log,
        deliveries: senders,
        parse: (raw) => parsePool.parse(raw)
    };

    // Record first (the caller committed its delete), then the blobs no record still
    // references: the copies of one delivery share them. What fails here is left to the sweep.
    const removeBlobs = (records: EmailRecord[]) => removeUnreferencedBlobs({ recordStore, blobStore, log }, blobKeysOf(records), 'deleted emails');

    // As the delete endpoints delete: records in batches, each batch's blobs after it.
    const deleteInBatches: DeleteInBatches = async (take, signal, onBatch) => {
        let deleted = 0;
        while (!signal?.aborted) {
            // docs/design.md: a failing batch (a busy database) is retried with
            // exponential backoff; each batch gets its retries afresh.
            const batch = await retryWithBackoff(() => take(DELETE_BATCH_SIZE), {
                retries: DELETE_RETRIES,
                firstMs: DELETE_BACKOFF_MS,
                onRetry: (err) => log('delete batch failed; backing off', err)
            });
            if (batch.length === 0) {
                return deleted;
            }

            deleted += batch.length;
            await removeBlobs(batch);
            onBatch?.(batch.length);
        }

        return deleted;
    };

    // An email of an inbox outside the scope is answered as one that does not exist.
    const emailInScope = async (messageId: string, scope: InboxScope | undefined) => {
        const record = await recordStore.getEmail(messageId);
        return record && inboxInScope(scope, record.inbox) ? record : null;
    };

    const capture: InboxCapture = {
        recordStore,
        blobStore,
        notifier,
        longPoller,
        messageBudget,
        maxMessageBytes,
        faults,
        inboxFromAddress: settings.inboxFromAddress,
        ...createSmtpUsers(recordStore),

        async start() {
            await recordStore.migrate();
            if (recordStore.watchInboxes && !unwatch) {
                unwatch = await recordStore.watchInboxes((inbox) => notifier.publish(inbox));
            }

            stopSweeps ??= startBackgroundSweeps(capture, settings, log);
        },

        ingestRawEmail: createIngest(ingestContext),

        listEmails(query) {
            return recordStore.listEmails(query);
        },

        waitForEmails(query, waitOptions) {
            return longPoller.wait(query, waitOptions);
        },

        getEmail(messageId, scope) {
            return emailInScope(messageId, scope);
        },

        async getHeaders(messageId, scope) {
            const record = await emailInScope(messageId, scope);
            if (!record) {
                return null;
            }

            return readHeaders(record);
        },

        listInboxes(query) {
            return recordStore.listInboxes(query);
        },

        async deleteEmail(messageId, scope) {
            const record = await recordStore.deleteEmail(messageId, { inboxPrefix: scope?.inboxPrefix });
            if (!record) {
                return false;
            }

            await removeBlobs([record]);
            return true;
        },

        deleteInbox(inbox, q) {
            const terms = q && q.length > 0 ? q : undefined;
            return deleteInBatches((batchSize) => recordStore.deleteInboxBatch(inbox, batchSize, terms));
        },

        setTags(messageId, tags, scope) {
            return recordStore.setTags(messageId, tags, { inboxPrefix: scope?.inboxPrefix });
        },

        setSeen(messageId, seen, scope) {
            return recordStore.setSeen(messageId, seen, { inboxPrefix: scope?.inboxPrefix });
        },

        pruneEmails(policy, pruneOptions = {}) {
            return runRetentionPass(policy, { recordStore, deleteInBatches, now: pruneOptions.now ?? Date.now(), signal: pruneOptions.signal, onProgress: pruneOptions.onProgress });
        },

        async rawDownloadLink(messageId, scope) {
            const record = await emailInScope(messageId, scope);
            if (!record) {
                return null;
            }

            return blobStore.createDownloadLink(record.rawKey, {
                expiresInSeconds: ttl,
                filename: 'message.eml',
                contentType: RAW_CONTENT_TYPE
            });
        },

        async attachmentDownloadLink(messageId, filename, scope) {
            const record = await emailInScope(messageId, scope);
            const attachment = record?.attachments.find((a) => a.filename === filename);
            if (!attachment) {
                return null;
            }

            return blobStore.createDownloadLink(attachment.blobKey, {
                expiresInSeconds: ttl,
                filename: attachment.filename,
                contentType: attachment.contentType
            });
        },

        async createKey(name, scope) {
            const token = generateApiKey();
            await recordStore.createKey(name, hashApiKey(token), scope);
            return token;
        },

        verifyKey(token) {
            return recordStore.findActiveKeyByHash(hashApiKey(token));
        },

        async revokeKey(name) {
            try {
                return await recordStore.revokeKey(name);
            }
            finally {
                // Always, even on false or a failure: the key may have been revoked
                // elsewhere (the CLI), and a listener dropping a live key only costs a lookup.
                for (const listener of [...revocationListeners]) {
                    try {
                        listener(name);
                    }
                    catch (err) {
                        log('key revocation listener failed', err);
                    }
                }
            }
        },

        onKeyRevoked(listener) {
            // Wrapped so the same function subscribed twice is two subscriptions.
            const entry = (name: string) => listener(name);
            revocationListeners.add(entry);
            return () => revocationListeners.delete(entry);
        },

        listKeys() {
            return recordStore.listKeys();
        },

        async sweepOrphanBlobs(sweepOptions = {}) {
            const cutoff = Date.now() - (sweepOptions.graceMs ?? ORPHAN_GRACE_MS);
            let removed = 0;
            let chunk: string[] = [];
            const flush = async () => {
                const referenced = await recordStore.referencedBlobKeys(chunk);
                const orphans = chunk.filter((k) => !referenced.has(k));
                if (orphans.length > 0) {
                    await blobStore.delete(orphans);
                    removed += orphans.length;
                }

                chunk = [];
            };

            let seen = 0;
            for await (const blob of blobStore.listBlobs()) {
                if (sweepOptions.signal?.aborted) {
                    return removed;
                }

                if (++seen % SWEEP_CHUNK === 0) {
                    sweepOptions.onProgress?.({ done: seen });
                }

                if (blob.modifiedAt > cutoff) {
                    continue;
                }

                chunk.push(blob.key);
                if (chunk.length >= SWEEP_CHUNK) {
                    await flush();
                }
            }

            if (chunk.length > 0) {
                await flush();
            }

            sweepOptions.onProgress?.({ done: seen });

            return removed;
        },

        routeDeliveries(kind, sender) {
            return senders.route(kind, sender);
        },

        async close() {
            if (stopSweeps) {
                await stopSweeps();
                stopSweeps = undefined;
            }

            await senders.closeAll();
            if (unwatch) {
                await unwatch();
                unwatch = undefined;
            }

            await parsePool.close();
            await recordStore.close();
            await blobStore.close?.();
        }
    };

    return capture;
}

export { InboxCaptureError };
export type { DeliverySender };
