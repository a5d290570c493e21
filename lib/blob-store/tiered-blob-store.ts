import { Readable } from 'node:stream';
import type { SelfServedBlobStore } from './blob-store';
import type { FsBlobStore } from './fs-blob-store';
import type { SqliteBlobStore } from './sqlite-blob-store';

/**
 * Blobs up to this size, bytes, go to the SQLite store by default. Below it a file's
 * create + fsync + rename + directory fsync costs more than the blob's share of a
 * group commit; above it the bytes dominate, and a file streams without being held
 * in memory. Tuned by measurement: bench/README.md, "Tuned constants › DEFAULT_TIER_THRESHOLD_BYTES".
 */
export const DEFAULT_TIER_THRESHOLD_BYTES = 256 * 1024;

/** Keys checked against the SQLite store at once while listing the files. */
const LIST_CHECK_CHUNK = 500;

/** Options of the tiered store. */
export interface TieredBlobStoreOptions {
    /** Where blobs of at most `thresholdBytes` go. */
    small: SqliteBlobStore;
    /** Where larger blobs go; it also signs and checks the links of both tiers (a signed link names a key, not a tier). */
    large: FsBlobStore;
    /**
     * A SQLite store in the record store's own database (createSqliteBlobStore with
     * `staging`): blobs of at most `thresholdBytes` are staged there by stage(), and the
     * record store commits them with their records. Read first; never put() to: blobs
     * that are put (no record store to commit them) go to `small` as before.
     */
    withRecords?: SqliteBlobStore;
    /** Largest blob kept in `small`, bytes (default DEFAULT_TIER_THRESHOLD_BYTES). */
    thresholdBytes?: number;
}

/**
 * A blob store that keeps small blobs in SQLite (group commit) and large ones as
 * files. Small blobs an ingest can commit with its records are staged in the records'
 * database (`withRecords`); those put() go to `small`. Reads look in SQLite first,
 * then the files, so data dirs written before the SQLite tiers existed (every blob a
 * file) keep working.
 */
export function createTieredBlobStore(options: TieredBlobStoreOptions): SelfServedBlobStore {
    const { small, large, withRecords } = options;
    const threshold = options.thresholdBytes ?? DEFAULT_TIER_THRESHOLD_BYTES;
    if (!Number.isSafeInteger(threshold) || threshold < 0) {
        throw new TypeError('createTieredBlobStore: thresholdBytes must be a non-negative integer');
    }

    // Writes the blob to one tier, then removes the key from the other: a key written
    // again with another size must not leave its old version shadowing (SQLite) or
    // shadowed by (files) the new one. The new version is durable before the old goes.
    // Looked up first (a read on SQLite's read connection, an lstat for a file): ingest
    // keys are always new, and a blind delete would put a write transaction in
    // blobs.sqlite's line for every large blob.
    const putIn = async (key: string, body: Buffer | Readable, contentType: string, isSmall: boolean) => {
        const result = await (isSmall ? small : large).put(key, body, contentType);
        const other = isSmall ? large : small;
        if (await other.stat(key) !== null) {
            await other.delete([key]);
        }

        return result;
    };

    // The SQLite tiers reads look in, in order (then the files): where ingests commit
    // small blobs with their records, then where put() writes them.
    const rows: SqliteBlobStore[] = withRecords ? [withRecords, small] : [small];
    const store: SelfServedBlobStore = {
        async put(key, body, contentType) {
            if (Buffer.isBuffer(body)) {
                return putIn(key, body, contentType, body.length <= threshold);
            }

            // A stream of unknown size: read up to the threshold; past it the head and the
            // rest go on streaming to a file, never held whole.
            const iterator = (body as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
            const head: Buffer[] = [];
            let size = 0;
            for (;;) {
                const next = await iterator.next();
                if (next.done) {
                    return putIn(key, Buffer.concat(head, size), contentType, true);
                }

                const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
                head.push(chunk);
                size += chunk.length;
                if (size > threshold) {
                    break;
                }
            }

            const rest = Readable.from((async function* () {
                yield* head;
                for (;;) {
                    const next = await iterator.next();
                    if (next.done) {
                        return;
                    }

                    yield Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
                }
            })(), { objectMode: false });
            return putIn(key, rest, contentType, false);
        },

        async get(key) {
            for (const tier of rows) {
                const found = await tier.get(key);
                if (found) {
                    return found;
                }
            }

            return large.get(key);
        },

        async stat(key) {
            for (const tier of rows) {
                const found = await tier.stat(key);
                if (found) {
                    return found;
                }
            }

            return large.stat(key);
        },

        async delete(keys) {
            await Promise.all([...rows.map((tier) => tier.delete(keys)), large.delete(keys)]);
        },

        async *listBlobs() {
            // A key in two tiers (a crash between a put and the removal of its old
            // version) is listed once: the first, the one reads see.
            let chunk: { key: string; modifiedAt: number }[] = [];
            const flush = async function* (earlier: SqliteBlobStore[]) {
                const seen = await Promise.all(earlier.map((tier) => tier.existing(chunk.map((b) => b.key))));
                const pending = chunk;
                chunk = [];
                for (const blob of pending) {
                    if (!seen.some((keys) => keys.has(blob.key))) {
                        yield blob;
                    }
                }
            };

            const [first, ...others] = rows;
            yield* first!.listBlobs();
            for (const [n, tier] of others.entries()) {
                for await (const blob of tier.listBlobs()) {
                    chunk.push(blob);
                    if (chunk.length >= LIST_CHECK_CHUNK) {
                        yield* flush(rows.slice(0, n + 1));
                    }
                }

                yield* flush(rows.slice(0, n + 1));
            }

            for await (const blob of large.listBlobs()) {
                chunk.push(blob);
                if (chunk.length >= LIST_CHECK_CHUNK) {
                    yield* flush(rows);
                }
            }

            yield* flush(rows);
        },

        createDownloadLink(key, linkOptions) {
            return large.createDownloadLink(key, linkOptions);
        },

        verifyDownload(key, query) {
            return large.verifyDownload(key, query);
        },

        async close() {
            await Promise.all([...rows.map((tier) => tier.close()), large.close?.()]);
        }
    };

    // Small blobs are staged, not put, where a tier in the records' database offers it
    // (the embedded default): they then share the records' commit.
    const stageSmall = withRecords?.stage?.bind(withRecords);
    if (stageSmall) {
        store.stage = (key, content, contentType) => (content.length <= threshold ? stageSmall(key, content, contentType) : null);
    }

    return store;
}
