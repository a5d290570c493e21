import { constants as fsConstants, type Dirent } from 'node:fs';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { errorCode } from './error-code';

// Small file-system helpers shared by the stores that keep files and by the signing
// secret: private modes, which errors mean "absent", and mkdir and readdir that
// tolerate what another process did first.

/** Mode of every file holding mail or secrets: mail is private, only the service's own user reads it. */
export const PRIVATE_FILE_MODE = 0o600;
/** Mode of every directory holding mail or secrets, for the same reason. */
export const PRIVATE_DIR_MODE = 0o700;

/** open() flag that refuses a symlink planted as the last path component (POSIX only; 0 elsewhere). */
export const O_NOFOLLOW = fsConstants.O_NOFOLLOW ?? 0;

// Errors that mean "this path names nothing of ours" rather than "the disk is broken".
const ABSENT_CODES = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'ELOOP']);

/** True for an error that means the path does not exist (or is not what a blob path must be). */
export function isAbsent(err: unknown): boolean {
    return ABSENT_CODES.has(errorCode(err) ?? '');
}

/** True when `path` is a directory itself (a symlink to one is not); false when absent or unreadable. */
export async function isDirectory(path: string): Promise<boolean> {
    try {
        return (await Fs.lstat(path)).isDirectory();
    }
    catch {
        return false;
    }
}

/** mkdir (private mode) that is content to find the directory there already, made by an earlier or a concurrent process. */
export async function mkdirIfMissing(dir: string): Promise<void> {
    try {
        await Fs.mkdir(dir, { mode: PRIVATE_DIR_MODE });
    }
    catch (err) {
        if (errorCode(err) !== 'EEXIST') {
            throw err;
        }
    }
}

/** The entries of a directory; none when it does not exist (a store's root before its first write). */
export async function readDirectory(dir: string): Promise<Dirent[]> {
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

/** Removes the entries of `tempDir` last modified before `cutoff` (Unix ms): leftovers of writes that crashed. */
export async function removeStaleTempFiles(tempDir: string, cutoff: number): Promise<void> {
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
