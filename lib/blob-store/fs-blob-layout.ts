import { isValidBlobKey } from './blob-key';

/**
 * Where the filesystem store keeps a key: `<shard>/<file name>` under its root.
 *
 * A directory per email would cost a mkdir and two directory fsyncs on every
 * ingest. Instead there are at most 256 shard directories, each created once; a
 * key becomes a single file name in one of them, its `/` written as `+`, a
 * character no key contains, so the mapping is reversible and the name no longer
 * than the key (200 characters, under every file system's 255). The shard comes
 * from the key's first segment, so the blobs of one email share a directory and
 * one directory fsync can cover them all.
 */

/** Number of shard directories: 256, named `00`–`ff`; ~4,000 emails per directory at a million. */
export const SHARD_COUNT = 256;

/** What a key's `/` becomes in its file name: not in a key's alphabet, safe on every file system. */
export const SEPARATOR_IN_NAME = '+';

const SHARD_NAME = /^[0-9a-f]{2}$/;

/** The shard directory name of a (valid) key: FNV-1a of its first segment, as two hex digits. */
export function shardOf(key: string): string {
    const end = key.indexOf('/');
    const segment = end === -1 ? key : key.slice(0, end);
    let hash = 0x811c9dc5;
    for (let i = 0; i < segment.length; i++) {
        hash = Math.imul(hash ^ segment.charCodeAt(i), 0x01000193);
    }

    return ((hash >>> 0) % SHARD_COUNT).toString(16).padStart(2, '0');
}

/** The file name of a (valid) key inside its shard. */
export function fileNameOf(key: string): string {
    return key.replaceAll('/', SEPARATOR_IN_NAME);
}

/** The path of a key relative to the store's root, `/`-separated, or null for a key that is not one of ours. */
export function relativePathOf(key: string): string | null {
    return isValidBlobKey(key) ? `${shardOf(key)}/${fileNameOf(key)}` : null;
}

/** True for a directory name that is one of the shards. */
export function isShardName(name: string): boolean {
    return SHARD_NAME.test(name);
}

/**
 * The key stored as `name` in shard `shard`, or null when the file is not one of
 * ours: a name that does not decode to a valid key, or one filed under another
 * shard (which get() would never find, so it must not be listed either).
 */
export function keyOfFile(shard: string, name: string): string | null {
    if (name.includes('/')) {
        return null;
    }

    const key = name.replaceAll(SEPARATOR_IN_NAME, '/');
    return isValidBlobKey(key) && shardOf(key) === shard ? key : null;
}
