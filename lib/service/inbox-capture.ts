import type { Readable } from 'node:stream';
import { retryWithBackoff } from '../util/backoff';
import { startBackgroundSweeps, type BackgroundSweepOptions } from './background-sweeps';
import { blobKeysOf } from '../blob-store/blob-key';
import type { BlobStore, DownloadLink } from '../blob-store/blob-store';
import { InboxCaptureError } from '../errors';
import { parseHeaderFields, type HeaderField } from '../mime/header-fields';
import { readHeaderSection } from '../mime/header-section';
import { ingestRawEmail, RAW_CONTENT_TYPE, type IngestContext, type IngestOptions } from '../ingest/ingest';
import { generateApiKey, hashApiKey } from './keys';
import { sharedMessageBudget, type MessageBudget } from './message-budget';
import { createLongPoller, type LongPoller, type WaitOptions } from '../long-poll/poller';
import { createNotifier, type Notifier } from '../long-poll/notifier';
import { createParsePool } from '../mime/parse-pool';
import type { RecordStore } from '../record-store/record-store';
import type { SearchTerm } from '../search/search-query';
import { runRetentionPass, type DeleteInBatches, type RetentionPolicy } from './retention';
import type { ApiKeyInfo, EmailRecord, InboxPage, InboxQuery, ListQuery, RecordPage } from '../types';
import { removeUnreferencedBlobs } from './unreferenced-blobs';
import { startWebhookDispatcher, type WebhookDispatcher, type WebhookDispatcherOptions } from '../webhooks/webhook-dispatcher';
import { webhookUrlsFor } from '../webhooks/webhook-target';

/** docs/design.md: bulk delete works in batches of 25. */
export const DELETE_BATCH_SIZE = 25;
/** Download links live 15 minutes (docs/design.md). */
export const DEFAULT_DOWNLOAD_TTL_SECONDS = 900;
/** Retries of one failed delete batch before giving up, waiting 50 ms, 100 ms, 200 ms ... */
const DELETE_RETRIES = 5;
const DELETE_BACKOFF_MS = 50;
/** Blobs younger than this may belong to an ingest still in flight: the sweep leaves them. */
export const ORPHAN_GRACE_MS = 10 * 60_000;
/** The standalone service sweeps orphan blobs hourly: a crash leaves few, and listing every blob costs. */
export const DEFAULT_ORPHAN_SWEEP_INTERVAL_MS = 60 * 60_000;

/** What the service is built from: the stores and ingest settings of every ingest, and the link lifetime. */
export interface InboxCaptureOptions extends IngestContext, BackgroundSweepOptions {
    /** Lifetime of download links, seconds (default 900). */
    downloadTtlSeconds?: number;
}

/** The whole service, protocol-free: adapters (HTTP, SMTP, CLI) call only this. */
export interface InboxCapture {
    readonly recordStore: RecordStore;
    readonly blobStore: BlobStore;
    readonly notifier: Notifier;
    readonly longPoller: LongPoller;
    /** The budget of message bytes in flight its ingests share (the SMTP listener reserves DATA from it too). */
    readonly messageBudget: MessageBudget;

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
    getEmail(messageId: string): Promise<EmailRecord | null>;
    /** The header fields of the email's top-level message, read from its raw blob (EXTENSIONS §2), or null when the email does not exist. */
    getHeaders(messageId: string): Promise<HeaderField[] | null>;
    /** One page of the inboxes that hold mail, most recently received first, then by name. */
    listInboxes(query: InboxQuery): Promise<InboxPage>;
    /** Deletes the record, then those of its blobs no other copy references; false when it does not exist. */
    deleteEmail(messageId: string): Promise<boolean>;
    /** Deletes every email of an inbox (those matching every term of `q`, when given) in batches; returns how many. */
    deleteInbox(inbox: string, q?: SearchTerm[]): Promise<number>;
    /**
     * Replaces an email's tags (lib/search/tags.ts; INVALID_INPUT when one is not a tag) and
     * returns the record, or null when it does not exist. Wakes no long-poll and sends no
     * webhook: tags are the reader's notes, not new mail (docs/api.md, "Tags").
     */
    setTags(messageId: string, tags: string[]): Promise<EmailRecord | null>;
    /**
     * One retention pass (EXTENSIONS §5): deletes the emails older than `maxAgeMs` (measured
     * from `now`, default the clock) and those beyond the newest `maxPerInbox` of each inbox,
     * as deleteInbox() does; returns how many. `signal` ends it early, between two batches.
     */
    pruneEmails(policy: RetentionPolicy, options?: { now?: number; signal?: AbortSignal }): Promise<number>;
    /** A time-limited link to the raw .eml (a URL, or a signed target the server serves), or null when the email does not exist. */
    rawDownloadLink(messageId: string): Promise<DownloadLink | null>;
    /** A time-limited link to one attachment (as rawDownloadLink()), or null when email or attachment is missing. */
    attachmentDownloadLink(messageId: string, filename: string): Promise<DownloadLink | null>;
    /** Creates a key and returns the plain token (shown once). */
    createKey(name: string): Promise<string>;
    /** The active key a token belongs to, or null. */
    verifyKey(token: string): Promise<ApiKeyInfo | null>;
    /** Revokes the named key; onKeyRevoked() listeners have heard of it when this settles. */
    revokeKey(name: string): Promise<boolean>;
    /**
     * Calls `listener` with the name of every key revoked through this service, so that a
     * cache of accepted keys drops it at once; returns the unsubscribe function.
     */
    onKeyRevoked(listener: (name: string) => void): () => void;
    listKeys(): Promise<ApiKeyInfo[]>;
    /**
     * Removes blobs no record references and older than `graceMs` (default 10 min:
     * younger ones may belong to an ingest whose record is not committed yet).
     * Returns how many. `signal` ends it early, between two chunks of keys.
     */
    sweepOrphanBlobs(options?: { graceMs?: number; signal?: AbortSignal }): Promise<number>;
    /**
     * Tells `targets` of every email stored from now on (EXTENSIONS §6): each ingest saves
     * one pending delivery per (copy, target URL) in its commit, and the dispatcher started
     * here sends them (and those other processes left). Once per service; close() stops it.
     * `recordOnly`: deliveries are only saved, for a running service to send (a CLI ingest).
     */
    startWebhooks(options: Omit<WebhookDispatcherOptions, 'recordStore' | 'log'> & { recordOnly?: boolean }): WebhookDispatcher;
    /** Stops the sweeps (waiting for a pass under way), the webhook dispatcher and watching; closes both stores. */
    close(): Promise<void>;
}

/** Builds the service from its stores. */
export function createInboxCapture(options: InboxCaptureOptions): InboxCapture {
    const { recordStore, blobStore } = options;
    const notifier = options.notifier ?? createNotifier();
    const longPoller = createLongPoller({ recordStore, notifier });
    const ttl = options.downloadTtlSeconds ?? DEFAULT_DOWNLOAD_TTL_SECONDS;
    const log = options.log ?? (() => undefined);
    let unwatch: (() => Promise<void>) | undefined;
    let stopSweeps: (() => Promise<void>) | undefined;
    let webhooks: WebhookDispatcher | undefined;
    const revocationListeners = new Set<(name: string) => void>();
    const messageBudget = options.messageBudget ?? sharedMessageBudget();
    const parsePool = createParsePool();
    const ingestContext: IngestContext = {
        recordStore,
        blobStore,
        notifier,
        maxMessageBytes: options.maxMessageBytes,
        messageBudget,
        blobStoreTimeoutMs: options.blobStoreTimeoutMs,
        inboxFromAddress: options.inboxFromAddress,
        log,
        parse: (raw) => parsePool.parse(raw)
    };

    // Record first (the caller committed its delete), then the blobs no record still
    // references: the copies of one delivery share them. What fails here is left to the sweep.
    const removeBlobs = (records: EmailRecord[]) => removeUnreferencedBlobs({ recordStore, blobStore, log }, blobKeysOf(records), 'deleted emails');

    // As the delete endpoints delete: records in batches, each batch's blobs after it.
    const deleteInBatches: DeleteInBatches = async (take, signal) => {
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
        }

        return deleted;
    };

    const capture: InboxCapture = {
        recordStore,
        blobStore,
        notifier,
        longPoller,
        messageBudget,

        async start() {
            await recordStore.migrate();
            if (recordStore.watchInboxes && !unwatch) {
                unwatch = await recordStore.watchInboxes((inbox) => notifier.publish(inbox));
            }

            stopSweeps ??= startBackgroundSweeps(capture, options, log);
        },

        ingestRawEmail(raw, ingestOptions = {}) {
            // The service's stores and settings win over anything a caller slips into the options.
            return ingestRawEmail(raw, { ...ingestOptions, ...ingestContext });
        },

        listEmails(query) {
            return recordStore.listEmails(query);
        },

        waitForEmails(query, waitOptions) {
            return longPoller.wait(query, waitOptions);
        },

        getEmail(messageId) {
            return recordStore.getEmail(messageId);
        },

        async getHeaders(messageId) {
            const record = await recordStore.getEmail(messageId);
            if (!record) {
                return null;
            }

            const raw = await blobStore.get(record.rawKey);
            if (!raw) {
                // Blobs are written before their record and deleted after it: this is a bug or a lost disk.
                throw new InboxCaptureError('BLOB_STORE_FAILED', `the raw message of ${record.messageId} is missing`);
            }

            return parseHeaderFields(await readHeaderSection(raw));
        },

        listInboxes(query) {
            return recordStore.listInboxes(query);
        },

        async deleteEmail(messageId) {
            const record = await recordStore.deleteEmail(messageId);
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

        setTags(messageId, tags) {
            return recordStore.setTags(messageId, tags);
        },

        pruneEmails(policy, pruneOptions = {}) {
            return runRetentionPass(policy, { recordStore, deleteInBatches, now: pruneOptions.now ?? Date.now(), signal: pruneOptions.signal });
        },

        async rawDownloadLink(messageId) {
            const record = await recordStore.getEmail(messageId);
            if (!record) {
                return null;
            }

            return blobStore.createDownloadLink(record.rawKey, {
                expiresInSeconds: ttl,
                filename: 'message.eml',
                contentType: RAW_CONTENT_TYPE
            });
        },

        async attachmentDownloadLink(messageId, filename) {
            const record = await recordStore.getEmail(messageId);
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

        async createKey(name) {
            const token = generateApiKey();
            await recordStore.createKey(name, hashApiKey(token));
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

            for await (const blob of blobStore.listBlobs()) {
                if (sweepOptions.signal?.aborted) {
                    return removed;
                }

                if (blob.modifiedAt > cutoff) {
                    continue;
                }

                chunk.push(blob.key);
                if (chunk.length >= 500) {
                    await flush();
                }
            }

            if (chunk.length > 0) {
                await flush();
            }

            return removed;
        },

        startWebhooks(webhookOptions) {
            if (webhooks) {
                throw new InboxCaptureError('INVALID_INPUT', 'webhooks are already started for this service');
            }

            const { targets, recordOnly, ...timing } = webhookOptions;
            const dispatcher: WebhookDispatcher = recordOnly ?
                { wake: () => undefined, close: () => Promise.resolve() } :
                startWebhookDispatcher({ ...timing, targets, recordStore, log });
            ingestContext.webhooks = { urlsFor: (inbox) => webhookUrlsFor(targets, inbox), wake: () => dispatcher.wake() };
            webhooks = {
                wake: () => dispatcher.wake(),
                async close() {
                    ingestContext.webhooks = undefined;
                    await dispatcher.close();
                }
            };
            return webhooks;
        },

        async close() {
            if (stopSweeps) {
                await stopSweeps();
                stopSweeps = undefined;
            }

            await webhooks?.close();
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
