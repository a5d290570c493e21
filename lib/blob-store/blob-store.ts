import type { Readable } from 'node:stream';

/** How a download link should present the blob. */
export interface LinkOptions {
    /** Seconds the link stays valid (spec: 900). */
    expiresInSeconds: number;
    /** File name for `Content-Disposition: attachment`. */
    filename: string;
    /** Media type the target is served with. */
    contentType: string;
}

/**
 * Where raw messages and attachments live. Keys come from our own ids only.
 * Reads stream; deletes are idempotent; absent blobs are `null`, never an error.
 */
export interface BlobStore {
    /** Writes a blob atomically (complete or not at all) and durably; returns its size. */
    put(key: string, body: Buffer | Readable, contentType: string): Promise<{ size: number }>;

    /** Streams a blob, or null when absent. */
    get(key: string): Promise<Readable | null>;

    /** Removes blobs; keys that do not exist are ignored. */
    delete(keys: string[]): Promise<void>;

    /** Every blob in the store with its last write time, Unix ms (for the orphan sweep). */
    listBlobs(): AsyncIterable<{ key: string; modifiedAt: number }>;

    /**
     * A time-limited download link. Absolute for object storage; a path starting
     * with `/` for stores whose links the embedding server serves itself.
     */
    createDownloadLink(key: string, options: LinkOptions): Promise<string>;

    /** Releases clients. */
    close?(): Promise<void>;
}
