import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { constants as fsConstants, createReadStream } from 'node:fs';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { InboxCaptureError } from '../errors';
import { isValidBlobKey } from './blob-key';
import type { BlobStore, LinkOptions } from './blob-store';

/** Where links point by default: the route the Hapi plugin serves fs blobs on. */
export const DEFAULT_LINK_PATH = '/v1/blobs';

/** Directory under the root for writes in progress; never a valid key (leading dot). */
const TEMP_DIR = '.tmp';

/** Temp files older than this, ms, are leftovers of a crashed write: listBlobs removes them. */
const STALE_TEMP_MS = 60 * 60_000;

/** Files unlinked at once by delete(), so a 10,000-key delete does not exhaust file descriptors. */
const DELETE_CONCURRENCY = 16;

/** Longest filename or media type a link may carry, characters: bounds the HMAC input. */
const MAX_LINK_FIELD_LENGTH = 1024;

/** Attempts at moving a finished temp file into place when a concurrent delete removes its directory. */
const RENAME_ATTEMPTS = 3;

// Mail is private: only the service's own user reads it.
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

// A symlink planted as the last component of a blob path is not followed (POSIX only).
const O_NOFOLLOW = fsConstants.O_NOFOLLOW ?? 0;

// Errors that mean "this key names no blob" rather than "the disk is broken".
const ABSENT_CODES = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'ELOOP']);

/** Options of the filesystem blob store. */
export interface FsBlobStoreOptions {
    /** Directory holding the blobs; created if missing. */
    root: string;
    /** HMAC-SHA256 key for download links (see loadOrCreateSigningSecret()). */
    signingSecret: Buffer | string;
    /** Path the embedding server serves blobs on (default `/v1/blobs`). */
    linkPath?: string;
    /** Clock, Unix ms (tests inject one to expire links). */
    now?: () => number;
}

/** What a verified download link says about how to serve its blob. */
export interface VerifiedDownload {
    filename: string;
    contentType: string;
}

/** The filesystem store: a BlobStore whose links the embedding server serves and checks itself. */
export interface FsBlobStore extends BlobStore {
    /** The signed filename and media type when the link's query is genuine and unexpired, else null. */
    verifyDownload(key: string, query: Record<string, string | undefined>): VerifiedDownload | null;

    /** Size in bytes and last write time (Unix ms) of a blob, or null when absent. */
    stat(key: string): Promise<{ size: number; modifiedAt: number } | null>;
}

/** Creates a blob store that keeps each blob as one file under `root`. */
export function createFsBlobStore(options: FsBlobStoreOptions): FsBlobStore {
    if (typeof options?.root !== 'string' || options.root.length === 0) {
        throw new TypeError('createFsBlobStore: options.root must be a directory path');
    }

    const secret = typeof options.signingSecret === 'string' ? Buffer.from(options.signingSecret, 'utf8') : options.signingSecret;
    if (!Buffer.isBuffer(secret) || secret.length < 16) {
        throw new TypeError('createFsBlobStore: options.signingSecret must be at least 16 bytes');
    }

    const root = Path.resolve(options.root);
    const tempDir = Path.join(root, TEMP_DIR);
    const linkPath = (options.linkPath ?? DEFAULT_LINK_PATH).replace(/\/+$/, '');
    const now = options.now ?? Date.now;

    // The path of a key, or null when the key is not one of ours or would leave the root.
    const pathOf = (key: string): string | null => {
        if (!isValidBlobKey(key)) {
            return null;
        }

        const path = Path.resolve(root, key);
        return path.startsWith(root + Path.sep) ? path : null;
    };

    const sign = (key: string, expires: string, filename: string, contentType: string): Buffer => {
        return createHmac('sha256', secret).update(`${key}\n${expires}\n${filename}\n${contentType}`, 'utf8').digest();
    };

    const store: FsBlobStore = {
        async put(key, body, _contentType) {
            const target = pathOf(key);
            if (!target) {
                throw new InboxCaptureError('INVALID_INPUT', `invalid blob key ${JSON.stringify(String(key).slice(0, 64))}`);
            }

            await Fs.mkdir(tempDir, { recursive: true, mode: DIR_MODE });
            const temp = Path.join(tempDir, randomBytes(16).toString('hex'));
            let size = 0;
            try {
                const file = await Fs.open(temp, 'wx', FILE_MODE);
                try {
                    if (Buffer.isBuffer(body)) {
                        await file.writeFile(body);
                        size = body.length;
                    }
                    else {
                        // Chunk by chunk: the body is never held whole, and a slow disk
                        // slows the reader instead of filling memory.
                        for await (const chunk of body) {
                            const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
                            await file.write(buffer);
                            size += buffer.length;
                        }
                    }

                    await file.sync();
                }
                finally {
                    await file.close();
                }

                await moveIntoPlace(temp, target, root);
            }
            catch (err) {
                await Fs.rm(temp, { force: true });
                throw err;
            }

            return { size };
        },

        async get(key) {
            const path = pathOf(key);
            if (!path) {
                return null;
            }

            let file: Fs.FileHandle;
            try {
                file = await Fs.open(path, fsConstants.O_RDONLY | O_NOFOLLOW);
            }
            catch (err) {
                if (isAbsent(err)) {
                    return null;
                }

                throw err;
            }

            // Opened before returning, so absence is `null` here, never a stream error later.
            try {
                if (!(await file.stat()).isFile()) {
                    await file.close();
                    return null;
                }
            }
            catch (err) {
                await file.close();
                throw err;
            }

            return createReadStream('', { fd: file, autoClose: true });
        },

        async delete(keys) {
            const paths = keys.map(pathOf).filter((p): p is string => p !== null);
            let next = 0;
            const worker = async () => {
                while (next < paths.length) {
                    const path = paths[next++];
                    try {
                        await Fs.unlink(path);
                    }
                    catch (err) {
                        if (isAbsent(err) || errorCode(err) === 'EPERM' && await isDirectory(path)) {
                            continue;
                        }

                        throw err;
                    }

                    await removeEmptyParents(path, root);
                }
            };

            await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, paths.length) }, worker));
        },

        async *listBlobs() {
            // The orphan sweep is what calls this; temp files of crashed writes are our own orphans.
            await removeStaleTempFiles(tempDir, now() - STALE_TEMP_MS);
            for await (const entry of walk(root, '')) {
                if (isValidBlobKey(entry.key)) {
                    yield entry;
                }
            }
        },

        async createDownloadLink(key: string, linkOptions: LinkOptions) {
            const { expiresInSeconds, filename, contentType } = linkOptions;
            if (!isValidBlobKey(key)) {
                throw new InboxCaptureError('INVALID_INPUT', 'invalid blob key');
            }

            if (!Number.isInteger(expiresInSeconds) || expiresInSeconds <= 0) {
                throw new InboxCaptureError('INVALID_INPUT', 'expiresInSeconds must be a positive integer');
            }

            if (!isLinkField(filename) || !isLinkField(contentType)) {
                throw new InboxCaptureError('INVALID_INPUT', 'link filename and contentType must be short and free of control characters');
            }

            const expires = String(Math.floor(now() / 1000) + expiresInSeconds);
            const sig = sign(key, expires, filename, contentType).toString('hex');
            const query = new URLSearchParams({ expires, filename, type: contentType, sig });
            return `${linkPath}/${encodeURIComponent(key)}?${query.toString()}`;
        },

        verifyDownload(key, query) {
            const { expires, filename, type, sig } = query ?? {};
            if (!isValidBlobKey(key) ||
                typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) ||
                !isLinkField(filename) || !isLinkField(type) ||
                typeof sig !== 'string' || !/^[0-9a-f]{64}$/.test(sig)) {
                return null;
            }

            // Checked before the clock so that a forged link learns nothing from timing.
            if (!timingSafeEqual(Buffer.from(sig, 'hex'), sign(key, expires, filename, type))) {
                return null;
            }

            if (now() >= Number(expires) * 1000) {
                return null;
            }

            return { filename, contentType: type };
        },

        async stat(key) {
            const path = pathOf(key);
            if (!path) {
                return null;
            }

            try {
                const stats = await Fs.lstat(path);
                return stats.isFile() ? { size: stats.size, modifiedAt: stats.mtimeMs } : null;
            }
            catch (err) {
                if (isAbsent(err)) {
                    return null;
                }

                throw err;
            }
        },

        async close() {
            // Nothing held open between calls.
        }
    };

    return store;
}

// A field may go into the HMAC input only if it cannot contain the `\n` separator:
// otherwise `a\nb` + `c` and `a` + `b\nc` would share one signature.
function isLinkField(value: unknown): value is string {
    return typeof value === 'string' &&
        value.length > 0 &&
        value.length <= MAX_LINK_FIELD_LENGTH &&
        !/[\u0000-\u001f\u007f]/.test(value);
}

function errorCode(err: unknown): string | undefined {
    return (err as NodeJS.ErrnoException | null)?.code;
}

function isAbsent(err: unknown): boolean {
    return ABSENT_CODES.has(errorCode(err) ?? '');
}

async function isDirectory(path: string): Promise<boolean> {
    try {
        return (await Fs.lstat(path)).isDirectory();
    }
    catch {
        return false;
    }
}

// fsync a directory so that an entry created or renamed in it survives a crash.
async function syncDirectory(dir: string): Promise<void> {
    const handle = await Fs.open(dir, fsConstants.O_RDONLY);
    try {
        await handle.sync();
    }
    catch (err) {
        // Some platforms (Windows) cannot fsync a directory; the rename is still atomic.
        if (!['EISDIR', 'EINVAL', 'EPERM', 'EBADF'].includes(errorCode(err) ?? '')) {
            throw err;
        }
    }
    finally {
        await handle.close();
    }
}

// Renames a finished temp file to its key's path, creating (and making durable) the
// directories on the way. rename() replaces an existing blob atomically.
async function moveIntoPlace(temp: string, target: string, root: string): Promise<void> {
    const parent = Path.dirname(target);
    for (let attempt = 1; ; attempt++) {
        const created = await Fs.mkdir(parent, { recursive: true, mode: DIR_MODE });
        if (created) {
            // Each new directory's entry lives in its own parent: sync those, top down.
            const parents: string[] = [];
            for (let dir = parent; dir.length > root.length; dir = Path.dirname(dir)) {
                parents.unshift(Path.dirname(dir));
                if (dir === created) {
                    break;
                }
            }

            for (const dir of parents) {
                await syncDirectory(dir);
            }
        }

        try {
            await Fs.rename(temp, target);
            break;
        }
        catch (err) {
            // A concurrent delete removed the (then empty) directory between mkdir and rename.
            if (errorCode(err) !== 'ENOENT' || attempt >= RENAME_ATTEMPTS) {
                throw err;
            }
        }
    }

    await syncDirectory(parent);
}

// Deleted blobs would otherwise leave one empty directory per email behind, forever.
async function removeEmptyParents(path: string, root: string): Promise<void> {
    for (let dir = Path.dirname(path); dir.startsWith(root + Path.sep); dir = Path.dirname(dir)) {
        try {
            await Fs.rmdir(dir);
        }
        catch {
            // Not empty (or already gone): its ancestors are not empty either.
            return;
        }
    }
}

async function* walk(dir: string, prefix: string): AsyncGenerator<{ key: string; modifiedAt: number }> {
    let entries: import('node:fs').Dirent[];
    try {
        entries = await Fs.readdir(dir, { withFileTypes: true });
    }
    catch (err) {
        // The root before the first put, or a directory emptied by a concurrent delete.
        if (isAbsent(err)) {
            return;
        }

        throw err;
    }

    for (const entry of entries) {
        const key = prefix + entry.name;
        const path = Path.join(dir, entry.name);
        if (prefix === '' && entry.name === TEMP_DIR) {
            continue;
        }

        if (entry.isDirectory()) {
            yield* walk(path, key + '/');
        }
        else if (entry.isFile()) {
            try {
                yield { key, modifiedAt: (await Fs.lstat(path)).mtimeMs };
            }
            catch (err) {
                if (!isAbsent(err)) {
                    throw err;
                }
            }
        }
    }
}

async function removeStaleTempFiles(tempDir: string, cutoff: number): Promise<void> {
    let names: string[];
    try {
        names = await Fs.readdir(tempDir);
    }
    catch (err) {
        if (isAbsent(err)) {
            return;
        }

        throw err;
    }

    for (const name of names) {
        const path = Path.join(tempDir, name);
        try {
            if ((await Fs.lstat(path)).mtimeMs < cutoff) {
                await Fs.rm(path, { force: true });
            }
        }
        catch (err) {
            if (!isAbsent(err)) {
                throw err;
            }
        }
    }
}
