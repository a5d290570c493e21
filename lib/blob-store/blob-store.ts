import type { Readable } from 'node:stream';

/** How a download link should present the blob. */
export interface LinkOptions {
    /** Seconds the link stays valid (900 by default: docs/design.md). */
    expiresInSeconds: number;
    /** File name for `Content-Disposition: attachment`. */
    filename: string;
    /** Media type the target is served with. */
    contentType: string;
}

/** The signed fields of a link, in the order they appear in its query string. */
export type SignedLinkQuery = {
    /** Expiry, Unix seconds. */
    expires: string;
    /** File name the blob is served under. */
    filename: string;
    /** Media type the blob is served with. */
    type: string;
    /** HMAC-SHA256 of key, expiry, filename and type, lower-case hex. */
    sig: string;
};

/** A download link the embedding server serves itself: the blob's key and the signed query. */
export interface SignedLinkTarget {
    key: string;
    query: SignedLinkQuery;
}

/** What a verified link says about how to serve its blob. */
export interface VerifiedDownload {
    filename: string;
    contentType: string;
}

/**
 * Makes and checks signed links. Every store whose links the embedding server serves
 * is one (a store may sign through another: the SQLite store through the file store);
 * createLinkSigner() (signed-links.ts) makes one.
 */
export interface LinkSigner {
    /** A signed, time-limited link to `key`; rejects with INVALID_INPUT for a bad key, expiry, filename or type. */
    createDownloadLink(key: string, options: LinkOptions): Promise<SignedLinkTarget>;

    /**
     * The signed filename and media type when the presented query is genuine and
     * unexpired, else null. Fields other than the signed four are ignored; a missing
     * or repeated (non-string) one fails.
     */
    verifyDownload(key: string, query: Readonly<Record<string, unknown>>): VerifiedDownload | null;
}

/** A download link object storage signed itself: an absolute URL, handed to the client as is. */
export interface UrlLink {
    url: string;
}

/**
 * Where a download link leads: an absolute URL (object storage), or a signed target
 * (key and query) that the embedding server turns into a URL of its own blob route.
 */
export type DownloadLink = UrlLink | SignedLinkTarget;

/**
 * A blob write handed over instead of made: the record store whose
 * `stagedBlobTarget` equals `target` writes it in the transaction that commits the
 * records referencing it, so both are durable in one commit (docs/design.md,
 * "What happens to a message").
 */
export interface StagedBlob {
    /** The database the write belongs to (the SQLite file, resolved). */
    target: string;
    key: string;
    content: Buffer;
    contentType: string;
}

/**
 * Where raw messages and attachments live. Keys come from our own ids only.
 * Reads stream; deletes are idempotent; absent blobs are `null`, never an error.
 */
export interface BlobStore {
    /** Writes a blob atomically (complete or not at all) and durably; returns its size. */
    put(key: string, body: Buffer | Readable, contentType: string): Promise<{ size: number }>;

    /**
     * Optional: offers to stage a blob instead of writing it, when the blob (by its
     * size) belongs in a database a record store can write in its own transaction.
     * Returns null when the blob must be put(); a staged blob is written by nobody
     * until a record store with the same target commits it. Stores that keep blobs
     * elsewhere (files, S3) do not offer it.
     */
    stage?(key: string, content: Buffer, contentType: string): StagedBlob | null;

    /** Streams a blob, or null when absent. */
    get(key: string): Promise<Readable | null>;

    /** Removes blobs; keys that do not exist are ignored. */
    delete(keys: string[]): Promise<void>;

    /** Every blob in the store with its last write time, Unix ms (for the orphan sweep). */
    listBlobs(): AsyncIterable<{ key: string; modifiedAt: number }>;

    /** A time-limited download link: a URL for object storage, a signed target for a SelfServedBlobStore. */
    createDownloadLink(key: string, options: LinkOptions): Promise<DownloadLink>;

    /** Releases clients. */
    close?(): Promise<void>;
}

/**
 * A blob store whose download links the embedding server serves itself (file,
 * SQLite, tiered): its links are signed targets, checked by verifyDownload(), and
 * stat() gives the size to announce.
 */
export interface SelfServedBlobStore extends BlobStore, LinkSigner {
    /** A signed, time-limited link to `key`. */
    createDownloadLink(key: string, options: LinkOptions): Promise<SignedLinkTarget>;

    /** Size in bytes and last write time (Unix ms) of a blob, or null when absent. */
    stat(key: string): Promise<{ size: number; modifiedAt: number } | null>;
}
