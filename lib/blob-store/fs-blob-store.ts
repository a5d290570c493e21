import { randomBytes } from 'node:crypto';
import { constants as fsConstants, createReadStream } from 'node:fs';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { forEachLimited } from '../util/concurrency-limit';
import { errorCode } from '../util/error-code';
import { InboxCaptureError } from '../errors';
import type { SelfServedBlobStore } from './blob-store';
import { createDirectorySync } from './directory-sync';
import { isShardName, keyOfFile, relativePathOf } from './fs-blob-layout';
import { isAbsent, isDirectory, mkdirIfMissing, O_NOFOLLOW, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, readDirectory, removeStaleTempFiles } from '../util/node-fs';
import { createLinkSigner } from './signed-links';

/** Directory under the root for writes in progress; never a valid key (leading dot). */
const TEMP_DIR = '.tmp';

/** Temp files older than this, ms, are leftovers of a crashed write: listBlobs removes them. */
const STALE_TEMP_MS = 60 * 60_000;

/** Files unlinked at once by delete(), so a 10,000-key delete does not exhaust file descriptors. */
const DELETE_CONCURRENCY = 16;

/** Attempts at creating a temp file, or moving a finished one into place, when a directory was removed from under the store. */
const MISSING_DIRECTORY_ATTEMPTS = 3;

/** Options of the filesystem blob store. */
export interface FsBlobStoreOptions {
    /** Directory holding the blobs; created if missing. */
    root: string;
    /** HMAC-SHA256 key for download links, at least 16 bytes (see loadOrCreateSigningSecret()). */
    signingSecret: Buffer | string;
    /** Clock, Unix ms (tests inject one to expire links). */
    now?: () => number;
}

/** The filesystem store: its links are signed targets the embedding server serves and checks itself. */
export type FsBlobStore = SelfServedBlobStore;

/** Creates a blob store that keeps each blob as one file under `root`, in one of 256 shard directories (fs-blob-layout.ts). */
export function createFsBlobStore(options: FsBlobStoreOptions): FsBlobStore {
    if (typeof options?.root !== 'string' || options.root.length === 0) {
        throw new TypeError('createFsBlobStore: options.root must be a directory path');
    }

    const now = options.now ?? Date.now;
    const links = createLinkSigner({ signingSecret: options.signingSecret, now });
    const root = Path.resolve(options.root);
    const tempDir = Path.join(root, TEMP_DIR);
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
        const created = await Fs.mkdir(root, { recursive: true, mode: PRIVATE_DIR_MODE });
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
                return { temp, file: await Fs.open(temp, 'wx', PRIVATE_FILE_MODE) };
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
            await forEachLimited(paths, DELETE_CONCURRENCY, async (path) => {
                try {
                    await Fs.unlink(path);
                }
                catch (err) {
                    // A directory where a blob should be is no blob: some systems refuse its unlink() with EPERM.
                    if (!isAbsent(err) && !(errorCode(err) === 'EPERM' && await isDirectory(path))) {
                        throw err;
                    }
                }
            });
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

        createDownloadLink: links.createDownloadLink,
        verifyDownload: links.verifyDownload,

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
