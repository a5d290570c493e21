import { randomBytes } from 'node:crypto';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';

/** Name of the file in the data dir that holds the link-signing secret. */
export const SIGNING_SECRET_FILE = 'signing-secret';

/** Bytes of a generated secret: the HMAC-SHA256 key length. */
const SECRET_BYTES = 32;

/** Shortest secret accepted from the file, bytes: anything shorter is a damaged or hand-made file. */
const MIN_SECRET_BYTES = 16;

/**
 * The HMAC key for filesystem download links, read from `<dataDir>/signing-secret`
 * or created there once (32 random bytes, mode 0600). Processes starting together
 * end up with the same secret: the file is only ever linked into place complete,
 * never overwritten, and everyone re-reads the winner.
 */
export async function loadOrCreateSigningSecret(dataDir: string): Promise<Buffer> {
    const file = Path.join(dataDir, SIGNING_SECRET_FILE);
    const existing = await readSecret(file);
    if (existing) {
        return existing;
    }

    await Fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
    const temp = Path.join(dataDir, `.${SIGNING_SECRET_FILE}.${randomBytes(8).toString('hex')}.tmp`);
    try {
        const handle = await Fs.open(temp, 'wx', 0o600);
        try {
            // The mode given to open() passes through the umask; this does not.
            await handle.chmod(0o600);
            await handle.writeFile(randomBytes(SECRET_BYTES));
            await handle.sync();
        }
        finally {
            await handle.close();
        }

        try {
            // link() never replaces an existing file, unlike rename(): the first process wins.
            await Fs.link(temp, file);
        }
        catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
                throw err;
            }
        }
    }
    finally {
        await Fs.rm(temp, { force: true });
    }

    await syncDirectory(dataDir);
    const secret = await readSecret(file);
    if (!secret) {
        throw new Error(`signing secret ${file} vanished while being created`);
    }

    return secret;
}

async function readSecret(file: string): Promise<Buffer | null> {
    let secret: Buffer;
    try {
        secret = await Fs.readFile(file);
    }
    catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
            return null;
        }

        throw err;
    }

    if (secret.length < MIN_SECRET_BYTES) {
        throw new Error(`signing secret ${file} holds ${secret.length} bytes; at least ${MIN_SECRET_BYTES} are needed (delete it to generate a new one)`);
    }

    return secret;
}

async function syncDirectory(dir: string): Promise<void> {
    const handle = await Fs.open(dir, 'r');
    try {
        await handle.sync();
    }
    catch {
        // Not every platform can fsync a directory; the link is atomic regardless.
    }
    finally {
        await handle.close();
    }
}
