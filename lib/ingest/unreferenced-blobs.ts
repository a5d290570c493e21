/**
 * Removing the blobs of records that are gone (deleted, replaced, or never
 * committed). The copies of one delivery share its blobs, so a blob goes only when
 * no record references it any more; the check runs after the commit that removed
 * the records, never inside it (docs/design.md, "Deletes and shared blobs").
 */

import type { BlobStore } from '../blob-store/blob-store';
import type { RecordStore } from '../record-store/record-store';
import { within } from '../util/timeout';

/** The stores a removal works on, and how it reports what it gave up on. */
export interface BlobRemoval {
    recordStore: RecordStore;
    blobStore: BlobStore;
    /** Longest wait for the blob store's delete, ms; unbounded when absent. */
    timeoutMs?: number;
    log: (message: string, error?: unknown) => void;
}

/**
 * Deletes those of `keys` that no record references, after the caller committed the
 * removal of the records that did; resolves to how many it deleted. Best-effort:
 * when the references cannot be read or the delete fails, the blobs stay for the
 * orphan sweep (`what` names them in the log). Safe against a concurrent removal of
 * another copy: whichever commits last sees no reference and deletes, and a delete
 * done twice is a no-op.
 */
export async function removeUnreferencedBlobs(removal: BlobRemoval, keys: string[], what: string): Promise<number> {
    const unique = [...new Set(keys)];
    if (unique.length === 0) {
        return 0;
    }

    let referenced: Set<string>;
    try {
        referenced = await removal.recordStore.referencedBlobKeys(unique);
    }
    catch (err) {
        removal.log(`cannot tell which blobs of ${what} are unused; left for the orphan sweep`, err);
        return 0;
    }

    const unused = unique.filter((key) => !referenced.has(key));
    if (unused.length === 0) {
        return 0;
    }

    try {
        // A store that throws instead of rejecting fails the same way.
        const deleting = (async () => removal.blobStore.delete(unused))();
        await (removal.timeoutMs === undefined ? deleting : within(deleting, removal.timeoutMs, `removing the blobs of ${what}`));
        return unused.length;
    }
    catch (err) {
        removal.log(`removing the blobs of ${what} failed; left for the orphan sweep`, err);
        return 0;
    }
}
