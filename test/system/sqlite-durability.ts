import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import knexFactory, { type Knex } from 'knex';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import { createFsBlobStore } from '../../lib/blob-store/fs-blob-store';
import { openEmbeddedBlobStore, openEmbeddedRecordStore } from '../../lib/service/embedded-stores';
import { BLOBS_DIRNAME, BLOBS_SQLITE_FILENAME, SQLITE_FILENAME } from '../../lib/defaults';
import { openSqliteKnex, sqliteKnexConfig } from '../../lib/sqlite/knex';
import { readBlob } from '../helpers/blob-contents';
import { childPids, isRunning, run, spawnNode, waitForOutput, type Spawned } from '../helpers/child-process';
import { tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const CHILD = Path.join(__dirname, '..', 'helpers', 'ingest-child.js');

/** PRAGMA synchronous value of FULL (0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA). */
const SYNCHRONOUS_FULL = 2;
/**
 * Processes killed right after their acknowledgement, each with a message of its own:
 * the first creates the file, the others find earlier commits still only in the
 * write-ahead log (nothing checkpoints before a kill) and add theirs. Three show that;
 * each more is another process start (docs/testing.md, "Where the time goes").
 */
const KILLED_PROCESSES = 3;

/** The raw node-sqlite3 connection Knex pools, as far as these tests use it. */
interface RawConnection {
    get(sql: string, callback: (err: Error | null, row: Record<string, unknown>) => void): void;
}

function pragma(connection: RawConnection, name: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
        connection.get(`PRAGMA ${name}`, (err, row) => (err ? reject(err) : resolve(Object.values(row)[0])));
    });
}

/** Every connection a pool of `max` hands out at once, checked, then given back. */
async function inspectPool(knex: Knex, max: number): Promise<Array<Record<string, unknown>>> {
    const connections = await Promise.all(Array.from({ length: max }, () => knex.client.acquireConnection() as Promise<RawConnection>));
    try {
        expect(new Set(connections).size).to.equal(max);
        return await Promise.all(connections.map(async (connection) => ({
            synchronous: await pragma(connection, 'synchronous'),
            journal_mode: await pragma(connection, 'journal_mode'),
            busy_timeout: await pragma(connection, 'busy_timeout'),
            foreign_keys: await pragma(connection, 'foreign_keys')
        })));
    }
    finally {
        for (const connection of connections) {
            knex.client.releaseConnection(connection);
        }
    }
}

/** A message with an attachment, distinct per `n`. */
function message(n: number): Buffer {
    return Buffer.from([
        'From: durable@durable.test',
        'To: durable@durable.test',
        `Subject: durable ${n}`,
        `Message-ID: <durable-${n}@durable.test>`,
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b"',
        '',
        '--b',
        'Content-Type: text/plain',
        '',
        `Acknowledged message ${n}.`,
        '--b',
        `Content-Type: application/octet-stream; name="a${n}.bin"`,
        `Content-Disposition: attachment; filename="a${n}.bin"`,
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.alloc(1000 + n, n).toString('base64').replace(/.{1,76}/g, '$&\r\n'),
        '--b--',
        ''
    ].join('\r\n'));
}

/** The blob stores a killed process is tried with: the embedded default, and the plain file store (every blob a file). */
const BLOB_STORES: { name: string; tag: string; env: Record<string, string>; open(dataDir: string): Promise<BlobStore> }[] = [
    { name: 'embedded default blobs', tag: 'default', env: {}, open: (dataDir) => openEmbeddedBlobStore({ dataDir, signingSecret: 'durability test signing secret' }) },
    {
        name: 'file store',
        tag: 'files',
        env: { INGEST_CHILD_BLOB_STORE: 'fs' },
        open: async (dataDir) => createFsBlobStore({ root: Path.join(dataDir, BLOBS_DIRNAME), signingSecret: 'durability test signing secret' })
    }
];

/** Runs the child in `once` mode under `prefix` (e.g. strace); resolves with its stdout once it died by SIGKILL. */
async function ingestThenDie(dataDir: string, raw: Buffer, prefix: string[] = [], extraEnv: Record<string, string> = {}): Promise<string> {
    const [command, ...args] = [...prefix, process.execPath, CHILD, 'once', 'durable@durable.test'];
    // libuv's io_uring would hide file syscalls from strace; the product does not depend on it.
    const env = { ...process.env, INBOX_CAPTURE_DATA_DIR: dataDir, DATABASE_URL: '', S3_BUCKET: '', UV_USE_IO_URING: '0', ...extraEnv };
    const { code, signal, stdout, stderr } = await run(command, args, { cwd: ROOT, env, input: raw });
    // Under strace the tracer exits with the tracee's signal as a status.
    if (signal === 'SIGKILL' || code === 128 + 9) {
        return stdout;
    }

    throw new Error(`the child was not killed (code ${code}, signal ${signal}): ${stderr}`);
}

function straceWorks(): boolean {
    const probe = spawnSync('strace', ['-f', '-qq', '-e', 'trace=none', process.execPath, '-e', '0'], { stdio: 'ignore' });
    return probe.status === 0;
}

/** One completed system call from `strace -f -y` output, in completion order. */
interface Syscall {
    name: string;
    /** Path of the first argument's fd (`-y`), or the first string argument. */
    path: string;
    /** Second string argument (the target of a rename). */
    target?: string;
    line: string;
}

/** Parses `strace -f -y` output; calls split by other threads ("unfinished"/"resumed") are joined. */
function parseStrace(text: string): Syscall[] {
    const pending = new Map<string, string>();
    const calls: Syscall[] = [];
    for (const raw of text.split('\n')) {
        let line = raw;
        const unfinished = /^(\d+)\s+(.*) <unfinished \.\.\.>$/.exec(line);
        if (unfinished) {
            pending.set(unfinished[1], unfinished[2]);
            continue;
        }

        const resumed = /^(\d+)\s+<\.\.\. \w+ resumed>(.*)$/.exec(line);
        if (resumed) {
            line = `${resumed[1]} ${pending.get(resumed[1]) ?? ''}${resumed[2]}`;
            pending.delete(resumed[1]);
        }

        const call = /^\d+\s+(\w+)\((.*)$/.exec(line);
        if (!call) {
            continue;
        }

        const [, name, rest] = call;
        const fdPath = /^-?\d+<([^>]*)>/.exec(rest);
        const strings = [...rest.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
        calls.push({ name, path: fdPath ? fdPath[1] : strings[0] ?? '', target: strings[1], line });
    }

    return calls;
}

const SYNCS = new Set(['fsync', 'fdatasync']);

/** `node args` under `strace -f -y` (writes, syncs, renames and socket sends to `log`). */
function spawnTraced(log: string, args: string[], env: NodeJS.ProcessEnv): Spawned {
    return spawnNode(args, {
        cwd: ROOT,
        env,
        prefix: [
            'strace', '-f', '-qq', '-y', '-s', String(PAGE_DUMP_BYTES), '-o', log,
            '-e', 'trace=write,writev,sendto,sendmsg,pwrite64,pwritev,pwritev2,fsync,fdatasync,rename,renameat,renameat2'
        ]
    });
}

/** Bytes strace shows of each write (`-s`): a whole SQLite page, so a row's text can be found in the WAL writes. */
const PAGE_DUMP_BYTES = 8192;

/**
 * Checks the system calls before the acknowledgement of message(n): the records' WAL
 * was written and then fsynced, and that one commit (the WAL writes since the fsync
 * before it) holds the raw message's own header line, which only its blob row
 * carries: the blob is a row of the transaction of its record, durable before the ack.
 * Nothing else is made durable for it: no blobs.sqlite, no blob file.
 */
function expectOneCommitBefore(beforeAck: Syscall[], dataDir: string, n: number): void {
    const lastIndex = (test: (c: Syscall) => boolean) => beforeAck.reduce((found, c, i) => (test(c) ? i : found), -1);
    const recordWal = `${Path.join(dataDir, SQLITE_FILENAME)}-wal`;
    const lastWalWrite = lastIndex((c) => c.name.startsWith('pwrite') && c.path === recordWal);
    expect(lastWalWrite, 'a write to the record WAL').to.be.above(-1);
    const commitSync = lastIndex((c) => SYNCS.has(c.name) && c.path === recordWal);
    expect(commitSync, 'fsync of the record WAL after its last write, before the ack').to.be.above(lastWalWrite);

    const previousSync = beforeAck.slice(0, commitSync).reduce((found, c, i) => (SYNCS.has(c.name) ? i : found), -1);
    const committed = beforeAck.slice(previousSync + 1, commitSync).filter((c) => c.name.startsWith('pwrite') && c.path === recordWal);
    expect(committed.some((c) => c.line.includes(`Message-ID: <durable-${n}@durable.test>`)), 'the raw message in the commit before the ack').to.be.true();

    expect(beforeAck.some((c) => c.path.startsWith(Path.join(dataDir, BLOBS_SQLITE_FILENAME))), 'nothing written to blobs.sqlite').to.be.false();
    expect(beforeAck.some((c) => c.name.startsWith('rename') && c.target?.startsWith(Path.join(dataDir, BLOBS_DIRNAME))), 'no blob file').to.be.false();
}

describe('SQLite durability', () => {
    let dir: string;

    before(async () => {
        dir = await tempDir('durability');
        if (!existsSync(Path.join(ROOT, 'dist', 'lib', 'service', 'inbox-capture.js'))) {
            throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
        }
    });

    after(async () => {
        await Fs.rm(dir, { recursive: true, force: true });
    });

    describe('openSqliteKnex()', () => {

        it('opens every pooled connection with synchronous=FULL, WAL, a busy timeout and foreign keys', async () => {
            const file = Path.join(dir, 'pragmas.sqlite');
            const config = sqliteKnexConfig(file);
            const productMax = (config.pool as { max: number }).max;

            // The product's own opener, as many connections as its pool holds...
            const product = openSqliteKnex(file);
            // ... and the same configuration with a bigger pool: the settings are made per
            // connection (synchronous is not stored in the file), not once per database.
            const wider = knexFactory({ ...config, pool: { ...config.pool, max: 4 } });
            try {
                const inspected = [...await inspectPool(product, productMax), ...await inspectPool(wider, 4)];
                expect(inspected).to.have.length(productMax + 4);
                for (const settings of inspected) {
                    expect(settings).to.equal({ synchronous: SYNCHRONOUS_FULL, journal_mode: 'wal', busy_timeout: 5000, foreign_keys: 1 });
                }
            }
            finally {
                await product.destroy();
                await wider.destroy();
            }
        });
    });

    for (const blobs of BLOB_STORES) {
        describe(`a process killed (SIGKILL) right after it acknowledged a message (${blobs.name})`, () => {

            it(`leaves each of ${KILLED_PROCESSES} messages readable by a new process, blobs byte for byte (ingestRawEmail resolved, then kill -9)`, async () => {
                const dataDir = Path.join(dir, `killed-after-resolve-${blobs.tag}`);
                for (let n = 0; n < KILLED_PROCESSES; n++) {
                    const stdout = await ingestThenDie(dataDir, message(n), [], blobs.env);
                    expect(stdout).to.equal(`stored durable-${n}@durable.test\n`);
                    // The commit is still in the write-ahead log: the next opener recovers it from there.
                    expect((await Fs.stat(Path.join(dataDir, `${SQLITE_FILENAME}-wal`))).size).to.be.above(0);
                }

                const recordStore = await openEmbeddedRecordStore({ dataDir });
                const blobStore = await blobs.open(dataDir);
                try {
                    const page = await recordStore.listEmails({ inbox: 'durable', limit: 100 });
                    expect(page.records.map((r) => r.subject).sort()).to.equal(Array.from({ length: KILLED_PROCESSES }, (_, n) => `durable ${n}`));
                    for (let n = 0; n < KILLED_PROCESSES; n++) {
                        const record = (await recordStore.getEmail(`durable-${n}@durable.test`))!;
                        expect((await readBlob(blobStore, record.rawKey))!.equals(message(n))).to.be.true();
                        expect((await readBlob(blobStore, record.attachments[0].blobKey))!.equals(Buffer.alloc(1000 + n, n))).to.be.true();
                    }
                }
                finally {
                    await recordStore.close();
                    await blobStore.close?.();
                }
            });

            it('leaves a message readable that got 250 over SMTP just before the kill', async () => {
                const dataDir = Path.join(dir, `killed-after-250-${blobs.tag}`);
                const service = spawnNode([CHILD, 'smtp'], {
                    cwd: ROOT,
                    env: { ...process.env, INBOX_CAPTURE_DATA_DIR: dataDir, DATABASE_URL: '', S3_BUCKET: '', ...blobs.env }
                });
                const { child, exited } = service;
                try {
                    const port = Number((await waitForOutput(service, /^listening (\d+)$/m))![1]);
                    const transport = Nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
                    const info = await transport.sendMail({ envelope: { from: 'durable@durable.test', to: ['durable@durable.test'] }, raw: message(42) });
                    child.kill('SIGKILL');
                    transport.close();
                    expect(info.response).to.startWith('250 ');
                }
                finally {
                    child.kill('SIGKILL');
                    await exited;
                }

                const recordStore = await openEmbeddedRecordStore({ dataDir });
                const blobStore = await blobs.open(dataDir);
                try {
                    const record = await recordStore.getEmail('durable-42@durable.test');
                    expect(record).to.not.be.null();
                    expect((await readBlob(blobStore, record!.rawKey))!.equals(message(42))).to.be.true();
                }
                finally {
                    await recordStore.close();
                    await blobStore.close?.();
                }
            });
        });
    }

    describe('before it acknowledges a message (power loss: what reached the disk)', () => {
        // A real power cut cannot be staged here. What can be checked is the order of the
        // system calls: everything the acknowledgement promises must be fsync()ed before it.
        const strace = straceWorks();

        it('fsyncs the blob files, their directories and then the committed WAL before the ack (file store, under strace)', { skip: !strace }, async () => {
            const dataDir = Path.join(dir, 'traced');
            const log = Path.join(dir, 'strace.log');
            // A first message creates the database and the schema, untraced.
            await ingestThenDie(dataDir, message(100), [], { INGEST_CHILD_BLOB_STORE: 'fs' });
            await ingestThenDie(dataDir, message(101), [
                'strace', '-f', '-qq', '-y', '-o', log,
                '-e', 'trace=write,pwrite64,pwritev,pwritev2,fsync,fdatasync,rename,renameat,renameat2'
            ], { INGEST_CHILD_BLOB_STORE: 'fs' });
            const calls = parseStrace(await Fs.readFile(log, 'utf8'));

            const ack = calls.findIndex((c) => c.name === 'write' && c.line.includes('"stored durable-101@durable.test\\n"'));
            expect(ack, 'the acknowledgement').to.be.above(-1);
            const beforeAck = calls.slice(0, ack);
            const lastIndex = (test: (c: Syscall, i: number) => boolean) => beforeAck.reduce((found, c, i) => (test(c, i) ? i : found), -1);

            // The record: the last write to the WAL is followed by its fsync.
            const wal = `${Path.join(dataDir, SQLITE_FILENAME)}-wal`;
            const lastWalWrite = lastIndex((c) => c.name.startsWith('pwrite') && c.path === wal);
            expect(lastWalWrite, 'a write to the WAL').to.be.above(-1);
            const walSync = lastIndex((c) => SYNCS.has(c.name) && c.path === wal);
            expect(walSync, 'fsync of the WAL after its last write, before the ack').to.be.above(lastWalWrite);

            // The blobs: each file synced before its rename, and its directory synced after it,
            // all before the commit (a record never points at a blob a power cut could lose).
            const blobsRoot = Path.join(dataDir, BLOBS_DIRNAME);
            const renames = beforeAck.map((c, i) => ({ c, i })).filter(({ c }) => c.name.startsWith('rename') && c.target?.startsWith(blobsRoot));
            expect(renames.map(({ c }) => Path.basename(c.target!).replace(/^[0-9a-f]{28}\+/, ''))).to.equal(['raw.eml', 'att+0']);
            for (const { c: rename, i } of renames) {
                const fileSync = beforeAck.findIndex((c) => SYNCS.has(c.name) && c.path === rename.path);
                expect(fileSync, `fsync of ${rename.path}`).to.be.within(0, i - 1);
                const dirSync = beforeAck.findIndex((c, j) => j > i && SYNCS.has(c.name) && c.path === Path.dirname(rename.target!));
                expect(dirSync, `fsync of ${Path.dirname(rename.target!)} after the rename`).to.be.above(i);
                expect(dirSync, 'blob durable before the record commit').to.be.below(lastWalWrite);
            }
        });

        it('commits the small blobs and the record in one WAL write and one fsync, before the ack (embedded default, under strace)', { skip: !strace }, async () => {
            const dataDir = Path.join(dir, 'traced-default');
            const log = Path.join(dir, 'strace-default.log');
            await ingestThenDie(dataDir, message(200));
            await ingestThenDie(dataDir, message(201), [
                'strace', '-f', '-qq', '-y', '-s', String(PAGE_DUMP_BYTES), '-o', log,
                '-e', 'trace=write,pwrite64,pwritev,pwritev2,fsync,fdatasync,rename,renameat,renameat2'
            ]);
            const calls = parseStrace(await Fs.readFile(log, 'utf8'));

            const ack = calls.findIndex((c) => c.name === 'write' && c.line.includes('"stored durable-201@durable.test\\n"'));
            expect(ack, 'the acknowledgement').to.be.above(-1);
            expectOneCommitBefore(calls.slice(0, ack), dataDir, 201);
        });

        it('sends the SMTP 250 only after the commit that holds the message and its blobs is fsynced (embedded default, under strace)', { skip: !strace }, async () => {
            const dataDir = Path.join(dir, 'traced-smtp');
            const log = Path.join(dir, 'strace-smtp.log');
            await ingestThenDie(dataDir, message(300));
            const service = spawnTraced(log, [CHILD, 'smtp'], { ...process.env, INBOX_CAPTURE_DATA_DIR: dataDir, DATABASE_URL: '', S3_BUCKET: '', UV_USE_IO_URING: '0' });
            let traced: number[] = [];
            try {
                const port = Number((await waitForOutput(service, /^listening (\d+)$/m, { timeoutMs: 60_000 }))![1]);
                traced = childPids(service.child.pid!);
                const transport = Nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
                const info = await transport.sendMail({ envelope: { from: 'durable@durable.test', to: ['durable@durable.test'] }, raw: message(301) });
                transport.close();
                expect(info.response).to.startWith('250 ');
            }
            finally {
                // strace and the service it traces: killed alone, strace would leave the service running.
                service.kill('SIGKILL');
                await service.exited;
            }

            expect(traced, 'the service strace started').to.have.length(1);
            for (let i = 0; i < 100 && isRunning(traced[0]!); i++) {
                await new Promise((resolve) => setTimeout(resolve, 20));
            }

            expect(isRunning(traced[0]!), 'the traced service after the kill').to.be.false();

            const calls = parseStrace(await Fs.readFile(log, 'utf8'));
            // The 250 that ends DATA (not the 250s of EHLO, MAIL and RCPT).
            const acks = calls.map((c, i) => ({ c, i })).filter(({ c }) => /^(write|writev|sendto|sendmsg)$/.test(c.name) && c.line.includes('"250 OK: message stored'));
            expect(acks.length, 'the 250 answer to DATA').to.equal(1);
            expectOneCommitBefore(calls.slice(0, acks[0]!.i), dataDir, 301);
        });
    });
});
