import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { constants as fsConstants, createReadStream } from 'node:fs';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { InboxCaptureError } from '../errors';
import { isValidBlobKey } from './blob-key';
import type { BlobStore, LinkOptions } from './blob-store';
import { createDirectorySync } from './directory-sync';
import { isShardName, keyOfFile, relativePathOf } from './fs-blob-layout';

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

/** Attempts at creating a temp file, or moving a finished one into place, when a directory was removed from under the store. */
const MISSING_DIRECTORY_ATTEMPTS = 3;

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

/** Creates a blob store that keeps each blob as one file under `root`, in one of 256 shard directories (fs-blob-layout.ts). */
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
    // Puts finishing together share the fsync of their shard directory.
    const directorySync = createDirectorySync();

    // The path of a key (see fs-blob-layout.ts), or null when the key is not one of ours.
    const pathOf = (key: string): string | null => {
        const relative = relativePathOf(key);
        if (relative === null) {
            return null;
        }

        const path = Path.join(root, ...relative.split('/'));
        return path.startsWith(root + Path.sep) ? path : null;
    };

    const sign = (key: string, expires: string, filename: string, contentType: string): Buffer => {
        return createHmac('sha256', secret).update(`${key}\n${expires}\n${filename}\n${contentType}`, 'utf8').digest();
    };

    // The root, the temp dir and each shard are made (and made durable) once per store
    // instead of on every put. A failed attempt is forgotten, so the next put tries again;
    // so is a directory found removed from under the store.
    let rootReady: Promise<void> | null = null;
    let tempReady: Promise<void> | null = null;
    const shardsReady = new Map<string, Promise<void>>();

    // Starts `make` and has `forget` called with it if it fails (handled here, so never unhandled).
    const once = (make: () => Promise<void>, forget: (failed: Promise<void>) => void): Promise<void> => {
        const ready = make();
        ready.catch(() => forget(ready));
        return ready;
    };

    const ensureRoot = (): Promise<void> => rootReady ??= once(async () => {
        const created = await Fs.mkdir(root, { recursive: true, mode: DIR_MODE });
        // Each directory made here has its entry in its parent: sync those, top down.
        const made: string[] = [];
        for (let dir = root; created !== undefined && dir.startsWith(created); dir = Path.dirname(dir)) {
            made.unshift(dir);
        }

        for (const dir of made) {
            await directorySync.sync(Path.dirname(dir));
        }
    }, (failed) => {
        rootReady = rootReady === failed ? null : rootReady;
    });

    // The temp file's own directory entry need not be durable: only the renamed one counts.
    const ensureTempDir = (): Promise<void> => tempReady ??= once(async () => {
        await ensureRoot();
        await mkdirIfMissing(tempDir);
    }, (failed) => {
        tempReady = tempReady === failed ? null : tempReady;
    });

    const ensureShard = (shardDir: string): Promise<void> => {
        let ready = shardsReady.get(shardDir);
        if (!ready) {
            ready = once(async () => {
                await ensureRoot();
                await mkdirIfMissing(shardDir);
                // A symlink planted as a shard would take every blob filed there out of the root.
                if (!(await Fs.lstat(shardDir)).isDirectory()) {
                    throw new Error(`blob shard ${shardDir} is not a directory`);
                }

                // Synced even when it existed: whoever made it may have stopped before its sync.
                await directorySync.sync(root);
            }, (failed) => {
                if (shardsReady.get(shardDir) === failed) {
                    shardsReady.delete(shardDir);
                }
            });
            shardsReady.set(shardDir, ready);
        }

        return ready;
    };

    // Directories found missing (removed from under the store) are made again by the next attempt.
    const forgetDirectories = () => {
        rootReady = null;
        tempReady = null;
        shardsReady.clear();
    };

    // A new temp file under the temp dir.
    const openTemp = async (): Promise<{ temp: string; file: Fs.FileHandle }> => {
        for (let attempt = 1; ; attempt++) {
            const temp = Path.join(tempDir, randomBytes(16).toString('hex'));
            try {
                await ensureTempDir();
                return { temp, file: await Fs.open(temp, 'wx', FILE_MODE) };
            }
            catch (err) {
                if (errorCode(err) !== 'ENOENT' || attempt >= MISSING_DIRECTORY_ATTEMPTS) {
                    throw err;
                }

                forgetDirectories();
            }
        }
    };

    // Renames a finished (fsync'd) temp file to its key's path and waits for an fsync of
    // the shard directory that began after the rename. rename() replaces an existing blob atomically.
    const moveIntoPlace = async (temp: string, target: string): Promise<void> => {
        const shardDir = Path.dirname(target);
        for (let attempt = 1; ; attempt++) {
            await ensureShard(shardDir);
            try {
                await Fs.rename(temp, target);
                break;
            }
            catch (err) {
                if (errorCode(err) !== 'ENOENT' || attempt >= MISSING_DIRECTORY_ATTEMPTS) {
                    throw err;
                }

                forgetDirectories();
            }
        }

        await directorySync.sync(shardDir);
    };

    const store: FsBlobStore = {
        async put(key, body, _contentType) {
            const target = pathOf(key);
            if (!target) {
                throw new InboxCaptureError('INVALID_INPUT', `invalid blob key ${JSON.stringify(String(key).slice(0, 64))}`);
            }

            const { temp, file } = await openTemp();
            let size = 0;
            try {
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

                await moveIntoPlace(temp, target);
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
                }
            };

            await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, paths.length) }, worker));
        },

        async *listBlobs() {
            // The orphan sweep is what calls this; temp files of crashed writes are our own orphans.
            await removeStaleTempFiles(tempDir, now() - STALE_TEMP_MS);
            for (const shard of await readDirectory(root)) {
                if (!shard.isDirectory() || !isShardName(shard.name)) {
                    continue;
                }

                const shardDir = Path.join(root, shard.name);
                for (const entry of await readDirectory(shardDir)) {
                    // A file that does not decode to a key filed in this shard is not ours.
                    const key = entry.isFile() ? keyOfFile(shard.name, entry.name) : null;
                    if (key === null) {
                        continue;
                    }

                    try {
                        yield { key, modifiedAt: (await Fs.lstat(Path.join(shardDir, entry.name))).mtimeMs };
                    }
                    catch (err) {
                        // Deleted since the directory was read.
                        if (!isAbsent(err)) {
                            throw err;
                        }
                    }
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

// mkdir that is content to find the directory there already (made by an earlier process, or a concurrent one).
async function mkdirIfMissing(dir: string): Promise<void> {
    try {
        await Fs.mkdir(dir, { mode: DIR_MODE });
    }
    catch (err) {
        if (errorCode(err) !== 'EEXIST') {
            throw err;
        }
    }
}

// The entries of a directory; none when it does not exist (the root before the first put).
async function readDirectory(dir: string): Promise<import('node:fs').Dirent[]> {
    try {
        return await Fs.readdir(dir, { withFileTypes: true });
    }
    catch (err) {
        if (isAbsent(err)) {
            return [];
        }

        throw err;
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
