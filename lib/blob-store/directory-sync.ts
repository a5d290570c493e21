import { constants as fsConstants } from 'node:fs';
import * as Fs from 'node:fs/promises';
import { errorCode } from '../util/error-code';

/** Makes a directory's entries durable: an fsync of the directory itself. */
export type SyncDirectory = (dir: string) => Promise<void>;

/**
 * Group commit for directory entries. Each caller has just created, renamed or
 * removed an entry in `dir` and needs it on disk; one fsync of the directory covers
 * every change made before that fsync started, so callers share fsyncs.
 */
export interface DirectorySync {
    /**
     * Resolves once an fsync of `dir` that started after this call has finished
     * (rejects with its error). A sync already running when the call arrives may
     * have started before the caller's change, so the caller waits for the next one,
     * which every caller arriving meanwhile shares.
     */
    sync(dir: string): Promise<void>;
}

// Errors of platforms that cannot fsync a directory (Windows): the rename is still atomic there.
const UNSUPPORTED_DIRECTORY_SYNC = new Set(['EISDIR', 'EINVAL', 'EPERM', 'EBADF']);

/** fsync of one directory: open, fsync, close. */
export async function fsyncDirectory(dir: string): Promise<void> {
    const handle = await Fs.open(dir, fsConstants.O_RDONLY);
    try {
        await handle.sync();
    }
    catch (err) {
        if (!UNSUPPORTED_DIRECTORY_SYNC.has(errorCode(err) ?? '')) {
            throw err;
        }
    }
    finally {
        await handle.close();
    }
}

interface DirectoryState {
    /** An fsync of the directory is running. */
    running: boolean;
    /** Callers that arrived while it ran: they share the fsync that starts when it ends. */
    next: { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } | null;
}

/** Creates a coalescer of directory fsyncs; `syncDirectory` does one real fsync (tests wrap it to observe). */
export function createDirectorySync(syncDirectory: SyncDirectory = fsyncDirectory): DirectorySync {
    // Only directories with a sync running or waiting are kept: idle ones cost nothing.
    const states = new Map<string, DirectoryState>();

    const start = (dir: string, state: DirectoryState): Promise<void> => {
        state.running = true;
        // A function that throws instead of rejecting fails its callers the same way.
        const done = (async () => syncDirectory(dir))();
        const settled = () => {
            state.running = false;
            const waiting = state.next;
            if (!waiting) {
                states.delete(dir);
                return;
            }

            // Every waiter asked before this point, so a sync starting now covers them all.
            state.next = null;
            start(dir, state).then(waiting.resolve, waiting.reject);
        };

        done.then(settled, settled);
        return done;
    };

    return {
        sync(dir) {
            let state = states.get(dir);
            if (!state) {
                state = { running: false, next: null };
                states.set(dir, state);
            }

            if (!state.running) {
                return start(dir, state);
            }

            if (!state.next) {
                let resolve!: () => void;
                let reject!: (err: unknown) => void;
                const promise = new Promise<void>((res, rej) => {
                    resolve = res;
                    reject = rej;
                });
                state.next = { promise, resolve, reject };
            }

            return state.next.promise;
        }
    };
}
