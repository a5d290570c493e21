import type { BlobStore } from '../../lib/blob-store/blob-store';
import { readAll } from './streams';

/** The bytes stored under `key`, or null when the store has no such blob. */
export async function readBlob(store: BlobStore, key: string): Promise<Buffer | null> {
    const stream = await store.get(key);
    return stream ? readAll(stream) : null;
}

/** Every key in the store, sorted, so that two listings compare with `equal`. */
export async function blobKeys(store: BlobStore): Promise<string[]> {
    const keys: string[] = [];
    for await (const blob of store.listBlobs()) {
        keys.push(blob.key);
    }

    return keys.sort();
}
