/**
 * The service's options, checked once when it is built: every number a positive integer,
 * every default from defaults.ts applied here and nowhere else. What comes out is what
 * the ingest, the sweeps and the adapters built on the service use.
 */

import type { BlobStore } from '../blob-store/blob-store';
import { defaultInboxFromAddress, type InboxFromAddress } from '../identity/recipients';
import type { Notifier } from '../long-poll/notifier';
import type { RecordStore } from '../record-store/record-store';
import type { BackgroundSweepOptions, OrphanSweepOptions } from './background-sweeps';
import {
    DEFAULT_BLOB_STORE_TIMEOUT_MS, DEFAULT_DOWNLOAD_TTL_SECONDS, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MESSAGE_BUDGET_BYTES,
    DEFAULT_FAULT_REFRESH_MS, DEFAULT_PARSE_TIMEOUT_MS, DEFAULT_PARSE_WORKERS, DEFAULT_RETENTION_INTERVAL_MS
} from '../defaults';
import type { RetentionOptions } from './retention';

/** What the service is built from: its stores, and the settings every ingest and sweep uses. */
export interface InboxCaptureOptions extends BackgroundSweepOptions {
    recordStore: RecordStore;
    blobStore: BlobStore;
    /** Told about each inbox that received mail (default: an in-process notifier of its own). */
    notifier?: Notifier;
    /** Largest accepted message, bytes (default 25 MiB); an SMTP listener built on the service advertises it. */
    maxMessageBytes?: number;
    /**
     * Raw message bytes the service's ingests, and the SMTP sessions of a listener built on
     * it, hold at once (default 128 MiB); past it, `BUSY`.
     */
    maxMessageBytesInFlight?: number;
    /**
     * Longest wait for one blob store call of an ingest, ms (default 30000): a write that
     * takes longer fails the ingest with BLOB_STORE_FAILED; a cleanup delete that does is
     * given up and its blobs are left to the orphan sweep.
     */
    blobStoreTimeoutMs?: number;
    /** Address → inbox mapping (default: the local-part rule of docs/design.md). */
    inboxFromAddress?: InboxFromAddress;
    /** Worker threads that parse messages, at most (default: one per core, up to 4). */
    parseWorkers?: number;
    /**
     * A parse that has used this much of its worker's CPU (three times it in wall time at most)
     * is abandoned, ms (default 10000): its worker is replaced and
     * the message stored with what the envelope gives (sender, recipients, raw download).
     */
    parseTimeoutMs?: number;
    /** The parse worker's script, `.js` or `.ts` (default: the package's own); for tests that need a worker that misbehaves. */
    parseWorkerFile?: string;
    /** Lifetime of download links, seconds (default 900). */
    downloadTtlSeconds?: number;
    /** How old this instance's copy of the SMTP fault rules may get before it reads them again, and how long a change of them waits before it answers, ms (default 100). */
    faultRefreshMs?: number;
    /** Receives failures that are handled but worth knowing (cleanup failures, parse errors, retries). */
    log?: (message: string, error?: unknown) => void;
}

/** The options once checked, every default applied. */
export interface ServiceSettings {
    recordStore: RecordStore;
    blobStore: BlobStore;
    notifier?: Notifier;
    maxMessageBytes: number;
    maxMessageBytesInFlight: number;
    blobStoreTimeoutMs: number;
    inboxFromAddress: InboxFromAddress;
    parseWorkers: number;
    parseTimeoutMs: number;
    parseWorkerFile?: string;
    downloadTtlSeconds: number;
    faultRefreshMs: number;
    log: (message: string, error?: unknown) => void;
    retention?: RetentionOptions & { intervalMs: number };
    orphanSweep?: OrphanSweepOptions;
}

/** A whole number of at least 1 (and no more than a safe integer), or `fallback` when absent. */
function positive(name: string, value: unknown, fallback: number): number;
function positive(name: string, value: unknown): number | undefined;
function positive(name: string, value: unknown, fallback?: number): number | undefined {
    if (value === undefined) {
        return fallback;
    }

    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
        throw new TypeError(`createInboxCapture: ${name} must be a positive integer, not ${String(value)}`);
    }

    return value;
}

/** Checks the options once and applies the defaults; a mistake throws a TypeError naming the option. */
export function resolveServiceOptions(options: InboxCaptureOptions): ServiceSettings {
    for (const name of ['recordStore', 'blobStore'] as const) {
        if (typeof options[name] !== 'object' || options[name] === null) {
            throw new TypeError(`createInboxCapture: ${name} is required (a store object)`);
        }
    }

    if (options.inboxFromAddress !== undefined && typeof options.inboxFromAddress !== 'function') {
        throw new TypeError('createInboxCapture: inboxFromAddress must be a function');
    }

    const settings: ServiceSettings = {
        recordStore: options.recordStore,
        blobStore: options.blobStore,
        notifier: options.notifier,
        maxMessageBytes: positive('maxMessageBytes', options.maxMessageBytes, DEFAULT_MAX_MESSAGE_BYTES),
        maxMessageBytesInFlight: positive('maxMessageBytesInFlight', options.maxMessageBytesInFlight, DEFAULT_MESSAGE_BUDGET_BYTES),
        blobStoreTimeoutMs: positive('blobStoreTimeoutMs', options.blobStoreTimeoutMs, DEFAULT_BLOB_STORE_TIMEOUT_MS),
        inboxFromAddress: options.inboxFromAddress ?? defaultInboxFromAddress,
        parseWorkers: positive('parseWorkers', options.parseWorkers, DEFAULT_PARSE_WORKERS),
        parseTimeoutMs: positive('parseTimeoutMs', options.parseTimeoutMs, DEFAULT_PARSE_TIMEOUT_MS),
        parseWorkerFile: options.parseWorkerFile,
        downloadTtlSeconds: positive('downloadTtlSeconds', options.downloadTtlSeconds, DEFAULT_DOWNLOAD_TTL_SECONDS),
        faultRefreshMs: positive('faultRefreshMs', options.faultRefreshMs, DEFAULT_FAULT_REFRESH_MS),
        log: options.log ?? (() => undefined)
    };

    const { retention, orphanSweep } = options;
    if (retention) {
        settings.retention = {
            maxAgeMs: positive('retention.maxAgeMs', retention.maxAgeMs),
            maxPerInbox: positive('retention.maxPerInbox', retention.maxPerInbox),
            intervalMs: positive('retention.intervalMs', retention.intervalMs, DEFAULT_RETENTION_INTERVAL_MS)
        };
    }

    if (orphanSweep) {
        positive('orphanSweep.intervalMs', orphanSweep.intervalMs ?? null);
        // 0 is allowed: `gc --grace-seconds 0` sweeps every orphan at once.
        if (orphanSweep.graceMs !== undefined && !(Number.isSafeInteger(orphanSweep.graceMs) && orphanSweep.graceMs >= 0)) {
            throw new TypeError(`createInboxCapture: orphanSweep.graceMs must be a non-negative integer, not ${String(orphanSweep.graceMs)}`);
        }

        settings.orphanSweep = orphanSweep;
    }

    return settings;
}
