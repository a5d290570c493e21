import { randomBytes } from 'node:crypto';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { errorCode } from '../util/error-code';
import { fsyncDirectory } from './directory-sync';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../util/node-fs';
import { MIN_SIGNING_SECRET_BYTES } from './signed-links';

/** Name of the file in the data dir that holds the link-signing secret. */
export const SIGNING_SECRET_FILE = 'signing-secret';

/** Bytes of a generated secret: the HMAC-SHA256 key length. */
const SECRET_BYTES = 32;

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

    await Fs.mkdir(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const temp = Path.join(dataDir, `.${SIGNING_SECRET_FILE}.${randomBytes(8).toString('hex')}.tmp`);
    try {
        const handle = await Fs.open(temp, 'wx', PRIVATE_FILE_MODE);
        try {
            // The mode given to open() passes through the umask; this does not.
            await handle.chmod(PRIVATE_FILE_MODE);
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
            if (errorCode(err) !== 'EEXIST') {
                throw err;
            }
        }
    }
    finally {
        await Fs.rm(temp, { force: true });
    }

    // The new name must survive a crash; platforms that cannot fsync a directory are let be (the link is atomic regardless).
    await fsyncDirectory(dataDir);
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
        if (errorCode(err) === 'ENOENT') {
            return null;
        }

        throw err;
    }

    // Anything shorter than the signer accepts is a damaged or hand-made file.
    if (secret.length < MIN_SIGNING_SECRET_BYTES) {
        throw new Error(`signing secret ${file} holds ${secret.length} bytes; at least ${MIN_SIGNING_SECRET_BYTES} are needed (delete it to generate a new one)`);
    }

    return secret;
}
