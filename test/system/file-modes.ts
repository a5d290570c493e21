import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { randomBytes } from 'node:crypto';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { openEmbeddedBlobStore } from '../../lib/service/embedded-stores';
import { BLOBS_SQLITE_FILENAME, SQLITE_FILENAME } from '../../lib/defaults';
import { runNode, spawnNode, waitForOutput, type Spawned } from '../helpers/child-process';
import { buildMail } from '../helpers/mail';
import { freePort, retryWhilePortTaken } from '../helpers/net';
import { isolatedEnv } from '../helpers/service-env';
import { removeDir, tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const STANDALONE = Path.join(ROOT, 'examples', 'standalone.js');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');

/** Every path under `dir` (not `dir` itself) with its permission bits. */
async function modesUnder(dir: string): Promise<Map<string, { mode: number; directory: boolean }>> {
    const modes = new Map<string, { mode: number; directory: boolean }>();
    for (const entry of await Fs.readdir(dir, { recursive: true })) {
        const stat = await Fs.lstat(Path.join(dir, entry));
        modes.set(entry, { mode: stat.mode & 0o777, directory: stat.isDirectory() });
    }

    return modes;
}

/** A started service, its data dir and environment. */
interface Started {
    spawned: Spawned;
    dataDir: string;
    env: NodeJS.ProcessEnv;
    smtpPort: number;
}

/**
 * The service on fresh ports with a new data dir that someone else made 0755; resolves once it
 * listens, or kills it, removes the dir and throws (with what it printed, a port in use among it).
 */
async function startOnce(): Promise<Started> {
    const dataDir = await tempDir('file-modes');
    await Fs.chmod(dataDir, 0o755);
    const port = await freePort();
    const smtpPort = await freePort();
    const env = isolatedEnv({ PORT: String(port), SMTP_PORT: String(smtpPort), INBOX_CAPTURE_DATA_DIR: dataDir });
    const spawned = spawnNode([STANDALONE], { cwd: ROOT, env });
    try {
        await waitForOutput(spawned, /create an API key: [^\n]*\n/, { timeoutMs: 30_000 });
        return { spawned, dataDir, env, smtpPort };
    }
    catch (err) {
        spawned.child.kill('SIGKILL');
        await spawned.exited;
        await removeDir(dataDir);
        throw err;
    }
}

describe('file modes', () => {

    it('keeps every file of a data dir someone else made 0755 at 0600 (directories we make 0700) under umask 022', { timeout: 90_000 }, async () => {
        // Before, the SQLite files (and their -wal and -shm) were 0644 here.
        // The usual umask, for the service (inherited) and for this process' own put() alike.
        const previousUmask = process.umask(0o022);
        let started: Started;
        try {
            // On fresh ports, started again if one was taken meanwhile.
            started = await retryWhilePortTaken(startOnce);
        }
        catch (err) {
            process.umask(previousUmask);
            throw err;
        }

        const { spawned, dataDir, env, smtpPort } = started;
        const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
        try {
            expect((await runNode([BIN, 'keys', 'create', 'modes'], { cwd: ROOT, env })).code).to.equal(0);

            // A large attachment goes to a file blob, a small one to the SQLite file.
            const raw = buildMail({
                to: 'modes@example.test',
                subject: 'modes',
                attachments: [
                    { filename: 'large.bin', contentType: 'application/octet-stream', content: randomBytes(1024 * 1024) },
                    { filename: 'small.txt', contentType: 'text/plain', content: 'small' }
                ]
            });
            const info = await transport.sendMail({ envelope: { from: 'a@example.test', to: ['modes@example.test'] }, raw });
            expect(info.response).to.startWith('250');

            // A direct put() creates blobs.sqlite (in this process, under the same umask).
            const blobStore = await openEmbeddedBlobStore({ dataDir });
            try {
                await blobStore.put('direct/put', Buffer.from('a small blob'), 'text/plain');
            }
            finally {
                await blobStore.close?.();
            }

            const modes = await modesUnder(dataDir);
            // The files the issue names are there, so the check below covers them.
            for (const name of [SQLITE_FILENAME, `${SQLITE_FILENAME}-wal`, `${SQLITE_FILENAME}-shm`, BLOBS_SQLITE_FILENAME, 'signing-secret']) {
                expect(modes.has(name), name).to.be.true();
            }

            const files = [...modes].filter(([, m]) => !m.directory);
            expect(files.length).to.be.at.least(7);
            expect(files.filter(([, m]) => m.mode !== 0o600).map(([name, m]) => `${name} ${m.mode.toString(8)}`)).to.equal([]);
            expect([...modes].filter(([, m]) => m.directory && m.mode !== 0o700).map(([name, m]) => `${name} ${m.mode.toString(8)}`)).to.equal([]);
            // Blob files are among them: the raw message and the large attachment.
            expect(files.filter(([name]) => name.startsWith(`blobs${Path.sep}`)).length).to.be.at.least(2);
        }
        finally {
            transport.close();
            spawned.child.kill('SIGKILL');
            await spawned.exited;
            process.umask(previousUmask);
            await removeDir(dataDir);
        }
    });
});
