import * as Fs from 'node:fs/promises';
import * as Os from 'node:os';
import * as Path from 'node:path';

/** A fresh temp directory under the OS temp dir, named `inbox-capture-<label>-XXXXXX`. */
export function tempDir(label = 'hapi'): Promise<string> {
    return Fs.mkdtemp(Path.join(Os.tmpdir(), `inbox-capture-${label}-`));
}

/** Removes a directory and everything in it; absent is fine. */
export function removeDir(dir: string): Promise<void> {
    return Fs.rm(dir, { recursive: true, force: true });
}
