/**
 * The blobs of one ingest: written (or staged to commit with the records) before
 * the records that reference them, each call bounded by a timeout, and removed
 * again when a write fails (a failed record write removes them through
 * unreferenced-blobs.ts, only where no record references them).
 */

import type { BlobStore, StagedBlob } from '../blob-store/blob-store';
import { InboxCaptureError, isInboxCaptureError } from '../errors';
import type { RecordStore } from '../record-store/record-store';
import { TimeoutError, within } from '../util/timeout';

/** What the blob writes of an ingest use of its context (an IngestContext, ingest.ts, is one). */
interface BlobContext {
    /** Its `stagedBlobTarget` says which staged writes it commits with the records. */
    recordStore: Pick<RecordStore, 'stagedBlobTarget'>;
    blobStore: BlobStore;
    /** Longest wait for one blob store call, ms. */
    blobStoreTimeoutMs: number;
}

/** The blobs of one ingest: keys already put (removed if the ingest fails), writes staged to commit with the records. */
export interface IngestBlobs {
    written: string[];
    staged: StagedBlob[];
}

/**
 * Stages the blob when the blob store offers it for the record store's own database
 * (it then commits with the records, docs/design.md "What happens to a message");
 * otherwise puts it now, durably, before the records that will reference it.
 */
export async function storeBlob(
    context: BlobContext,
    blobs: IngestBlobs,
    key: string,
    body: Buffer,
    contentType: string,
    log: (message: string, error?: unknown) => void
): Promise<void> {
    const target = context.recordStore.stagedBlobTarget;
    let staged: StagedBlob | null = null;
    try {
        staged = target !== undefined && context.blobStore.stage ? context.blobStore.stage(key, body, contentType) : null;
    }
    catch (err) {
        throw isInboxCaptureError(err) ? err : new InboxCaptureError('BLOB_STORE_FAILED', `staging blob ${key} failed`, { cause: err });
    }

    if (staged && staged.target === target) {
        blobs.staged.push(staged);
        return;
    }

    blobs.written.push(key);
    await putBlob(context, key, body, contentType, log);
}

/**
 * One blob write, bounded by the blob store timeout; a failure of the store becomes
 * `BLOB_STORE_FAILED` (a code it chose itself is kept). A write that times out may
 * still finish later, after the caller removed what it wrote: it is removed again
 * once it does, so a slow store leaves no orphan either.
 */
async function putBlob(
    context: BlobContext,
    key: string,
    body: Buffer,
    contentType: string,
    log: (message: string, error?: unknown) => void
): Promise<void> {
    const { blobStore } = context;
    const timeoutMs = context.blobStoreTimeoutMs;
    // A store that throws instead of rejecting fails the same way.
    const put = (async () => blobStore.put(key, body, contentType))();
    try {
        await within(put, timeoutMs, `writing blob ${key}`);
    }
    catch (err) {
        if (err instanceof TimeoutError) {
            put.then(() => removeWritten(blobStore, [key], timeoutMs, log), () => undefined).catch(() => undefined);
            throw new InboxCaptureError('BLOB_STORE_FAILED', err.message, { cause: err });
        }

        if (isInboxCaptureError(err)) {
            throw err;
        }

        throw new InboxCaptureError('BLOB_STORE_FAILED', `writing blob ${key} failed`, { cause: err });
    }
}

/** Best-effort, bounded removal after a failed blob write: no record can reference these yet. */
export async function removeWritten(blobStore: BlobStore, keys: string[], timeoutMs: number, log: (message: string, error?: unknown) => void): Promise<void> {
    if (keys.length === 0) {
        return;
    }

    try {
        await within((async () => blobStore.delete(keys))(), timeoutMs, 'removing the blobs of a failed ingest');
    }
    catch (err) {
        log('removing the blobs of a failed ingest failed; left for the orphan sweep', err);
    }
}
