import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { existsSync } from 'node:fs';
import * as Fs from 'node:fs/promises';
import * as Os from 'node:os';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import { createFsBlobStore } from '../../lib/blob-store/fs-blob-store';
import { openEmbeddedBlobStore, openEmbeddedRecordStore } from '../../lib/service/embedded-stores';
import { BLOBS_DIRNAME, BLOBS_SQLITE_FILENAME } from '../../lib/defaults';
import { createKnexRecordStore } from '../../lib/record-store/knex-record-store';
import { openPostgresKnex } from '../../lib/record-store/postgres/postgres-knex';
import type { RecordStore } from '../../lib/record-store/record-store';
import type { EmailRecord } from '../../lib/types';
import { blobKeys, readBlob } from '../helpers/blob-contents';
import { runNode, spawnNode, waitForOutput, type RunResult, type Spawned } from '../helpers/child-process';
import { startPostgres, type PostgresServer } from '../helpers/postgres';
import { tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
/** The process under test: the SMTP listener of the compiled package, configured like the standalone. */
const CHILD = Path.join(__dirname, '..', 'helpers', 'ingest-child.js');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');

/** Messages delivered to the default backend. */
const MESSAGES = 200;
/** SIGKILLs of the default backend, each at a point the seeded generator picks. */
const KILLS = 8;
/**
 * Kills and messages of the two other backends. Each shares its code with one that
 * takes all eight kills or with the other: SQLite + files has the default's record
 * store, Postgres + files the file blob store of SQLite + files. What each adds (the
 * file store's orphans, Postgres' transactions) shows at any kill that cuts a delivery
 * off, so three of them, the first three of the same seeded plan, keep the proof at
 * about half the cost: every kill is a process start and a catch-up (docs/testing.md,
 * "Where the time goes").
 */
const FEWER = { kills: 3, messages: 100 };
/** SMTP clients sending at once, so that every kill lands among ingests in flight. */
const SENDERS = 8;
/** Seed of the kill points and of the message contents: a failure can be replayed. */
const SEED = 0x1c0ffee;
/** Inboxes the messages are spread over. */
const INBOXES = 4;

/** mulberry32: a small seeded generator, uniform in [0, 1). */
function seeded(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

interface TestMessage {
    index: number;
    messageId: string;
    recipient: string;
    inbox: string;
    raw: Buffer;
    attachments: Buffer[];
}

/** Message `index`: the same bytes on every run; 0-2 binary attachments of up to 48 KiB. */
function buildMessage(index: number): TestMessage {
    const random = seeded(SEED ^ (index * 7919));
    const inbox = `crash-${index % INBOXES}`;
    const messageId = `crash-${index}@crash.test`;
    const words = Array.from({ length: 20 + Math.floor(random() * 200) }, () => Math.floor(random() * 1e9).toString(36));
    const body = words.join(' ').replace(/(.{1,70})( |$)/g, '$1\r\n');
    const attachments = Array.from({ length: index % 3 }, () => {
        const bytes = Buffer.alloc(1 + Math.floor(random() * 48 * 1024));
        for (let i = 0; i < bytes.length; i++) {
            bytes[i] = Math.floor(random() * 256);
        }

        return bytes;
    });

    const boundary = `crash-boundary-${index}`;
    const lines = [
        'From: crash@crash.test',
        `To: ${inbox}@crash.test`,
        `Subject: crash test ${index}`,
        `Message-ID: <${messageId}>`,
        'MIME-Version: 1.0',
        `Content-Type: multipart/mixed; boundary="${boundary}"`,
        '',
        `--${boundary}`,
        'Content-Type: text/plain; charset=utf-8',
        '',
        body,
        ...attachments.flatMap((content, n) => [
            `--${boundary}`,
            `Content-Type: application/octet-stream; name="part-${n}.bin"`,
            `Content-Disposition: attachment; filename="part-${n}.bin"`,
            'Content-Transfer-Encoding: base64',
            '',
            content.toString('base64').replace(/.{1,76}/g, '$&\r\n')
        ]),
        `--${boundary}--`,
        ''
    ];
    return { index, messageId, recipient: `${inbox}@crash.test`, inbox, raw: Buffer.from(lines.join('\r\n')), attachments };
}

/** Environment of the service and the CLI: only the variables under test. */
function serviceEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['DATABASE_URL', 'S3_BUCKET', 'S3_ENDPOINT', 'INBOX_CAPTURE_SIGNING_SECRET', 'HOST', 'PORT', 'SMTP_PORT', 'INBOX_CAPTURE_DATA_DIR']) {
        delete env[name];
    }

    return { ...env, ...vars };
}

interface Running extends Spawned {
    smtpPort: number;
}

/** Starts the SMTP service process; resolves once it accepts mail. */
async function startService(env: Record<string, string>): Promise<Running> {
    const spawned = spawnNode([CHILD, 'smtp'], { cwd: ROOT, env: serviceEnv(env) });
    const match = await waitForOutput(spawned, /^listening (\d+)$/m);
    return { ...spawned, smtpPort: Number(match![1]) };
}

interface CrashRun {
    /** Messages answered 250, by index. */
    acknowledged: Set<number>;
    /** Deliveries cut off by a kill after the client had connected (in flight). */
    interrupted: number;
    /** Service processes started. */
    starts: number;
}

/**
 * Delivers every message, SIGKILLing the service `kills` times (each `acks` 250s after a
 * start plus a few ms), restarting it each time, and resending whatever got no 250, as
 * an MTA would. Ends with a SIGKILL right after the last 250.
 */
async function deliverThroughCrashes(messages: TestMessage[], kills: number, env: Record<string, string>): Promise<CrashRun> {
    const random = seeded(SEED);
    const plan = Array.from({ length: kills }, () => ({ acks: 1 + Math.floor(random() * 30), delayMs: Math.floor(random() * 10) }));
    const result: CrashRun = { acknowledged: new Set(), interrupted: 0, starts: 0 };
    let queue = [...messages];

    for (let run = 0; queue.length > 0; run++) {
        expect(run, 'deliveries did not finish').to.be.below(kills + 5);
        const service = await startService(env);
        result.starts++;
        const kill = plan[run];
        let killed = false;
        let acks = 0;
        const failed: TestMessage[] = [];
        const killNow = () => {
            if (!killed) {
                killed = true;
                service.child.kill('SIGKILL');
            }
        };

        const sender = async () => {
            // One connection per sender, reused: smtp-server holds its greeting back 100 ms.
            const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: service.smtpPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity });
            try {
                await sendAll(transport);
            }
            finally {
                transport.close();
            }
        };

        const sendAll = async (transport: Nodemailer.Transporter) => {
            while (!killed && queue.length > 0) {
                const message = queue.shift()!;
                try {
                    await transport.sendMail({ envelope: { from: 'crash@crash.test', to: [message.recipient] }, raw: message.raw });
                    result.acknowledged.add(message.index);
                    if (kill && ++acks === kill.acks) {
                        setTimeout(killNow, kill.delayMs);
                    }
                }
                catch (err) {
                    // Only the kill may cost a delivery; anything else is a failure of the service.
                    if (!killed) {
                        throw err;
                    }

                    failed.push(message);
                    if ((err as { code?: string }).code !== 'ECONNECTION' || !/ECONNREFUSED/.test(String(err))) {
                        result.interrupted++;
                    }
                }
            }
        };

        try {
            await Promise.all(Array.from({ length: SENDERS }, sender));
        }
        finally {
            // The last run (no kill planned, or the queue ran dry first) also ends with kill -9.
            killNow();
            await service.exited;
        }

        queue = [...failed, ...queue];
    }

    return result;
}

async function allRecords(recordStore: RecordStore): Promise<EmailRecord[]> {
    const records: EmailRecord[] = [];
    for (let n = 0; n < INBOXES; n++) {
        let after: { receivedAt: number; messageId: string } | undefined;
        for (;;) {
            const page = await recordStore.listEmails({ inbox: `crash-${n}`, limit: 100, ...(after ? { after } : {}) });
            records.push(...page.records);
            if (!page.hasMore) {
                break;
            }

            const last = page.records[page.records.length - 1];
            after = { receivedAt: last.receivedAt, messageId: last.messageId };
        }
    }

    return records;
}

/** Runs the built CLI with the service's environment. */
function cli(args: string[], env: Record<string, string>): Promise<RunResult> {
    return runNode([BIN, ...args], { cwd: ROOT, env: serviceEnv(env) });
}

interface Backend {
    name: string;
    /** Environment of the service and the CLI for a fresh data dir, and how to open its record store here. */
    prepare(dataDir: string): Promise<{ env: Record<string, string>; openRecordStore(): Promise<RecordStore>; release(): Promise<void> }>;
    /** The blob store the service writes, opened here on its data dir. */
    openBlobStore(dataDir: string): Promise<BlobStore>;
    /**
     * Every blob of these messages (all small) commits in the transaction of its record:
     * a kill can leave no orphan, and nothing is written to a blobs.sqlite of its own.
     */
    blobsCommitWithRecords?: boolean;
    /** Kills and messages, when fewer than the default backend's. */
    fewer?: { kills: number; messages: number };
}

// The file store alone (every blob a file): its own crash behaviour stays under test.
const FILES_ONLY = { INGEST_CHILD_BLOB_STORE: 'fs' };
const openFiles = async (dataDir: string): Promise<BlobStore> => createFsBlobStore({ root: Path.join(dataDir, BLOBS_DIRNAME), signingSecret: 'crash test signing secret' });

const BACKENDS: Backend[] = [
    {
        name: 'SQLite + files',
        async prepare(dataDir) {
            return {
                env: { INBOX_CAPTURE_DATA_DIR: dataDir, ...FILES_ONLY },
                openRecordStore: () => openEmbeddedRecordStore({ dataDir }),
                release: async () => undefined
            };
        },
        openBlobStore: openFiles,
        fewer: FEWER
    },
    {
        name: 'SQLite + embedded blobs (small in SQLite, large as files: the default)',
        async prepare(dataDir) {
            return {
                env: { INBOX_CAPTURE_DATA_DIR: dataDir },
                openRecordStore: () => openEmbeddedRecordStore({ dataDir }),
                release: async () => undefined
            };
        },
        openBlobStore: (dataDir) => openEmbeddedBlobStore({ dataDir, signingSecret: 'crash test signing secret' }),
        blobsCommitWithRecords: true
    },
    {
        name: 'Postgres + files',
        async prepare(dataDir) {
            const pg: PostgresServer = await startPostgres();
            return {
                env: { INBOX_CAPTURE_DATA_DIR: dataDir, DATABASE_URL: pg.connectionString, ...FILES_ONLY },
                openRecordStore: async () => createKnexRecordStore({ knex: openPostgresKnex(pg.connectionString), destroyKnexOnClose: true }),
                release: () => pg.stop()
            };
        },
        openBlobStore: openFiles,
        fewer: FEWER
    }
];

describe('crash recovery', () => {
    const allMessages = Array.from({ length: MESSAGES }, (_, i) => buildMessage(i));

    before(() => {
        if (!existsSync(BIN)) {
            throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
        }
    });

    it('refuses a --grace-seconds that is not a whole number of seconds, before opening any store', async () => {
        const dataDir = Path.join(Os.tmpdir(), 'ic-crash-never-created');
        for (const value of ['-1', '1.5', 'soon', '']) {
            const result = await cli(['gc', `--grace-seconds=${value}`], { INBOX_CAPTURE_DATA_DIR: dataDir });
            expect(result.code).to.equal(1);
            expect(result.stdout).to.equal('');
            expect(result.stderr).to.match(/^inbox-capture: gc: --grace-seconds must be a whole number of seconds/);
            expect(result.stderr.trimEnd().split('\n')).to.have.length(1);
        }

        expect(existsSync(dataDir)).to.be.false();
    });

    for (const backend of BACKENDS) {
        const { kills, messages: count } = backend.fewer ?? { kills: KILLS, messages: MESSAGES };
        const messages = allMessages.slice(0, count);

        describe(backend.name, () => {
            let dataDir: string;
            let prepared: Awaited<ReturnType<Backend['prepare']>>;
            let run: CrashRun;

            before(async () => {
                dataDir = await tempDir('crash');
                prepared = await backend.prepare(dataDir);
                run = await deliverThroughCrashes(messages, kills, prepared.env);
            });

            after(async () => {
                await prepared?.release();
                await Fs.rm(dataDir, { recursive: true, force: true });
            });

            it(`delivers all ${count} messages through ${kills} kill -9s (seed ${SEED.toString(16)}), some of them cut off mid-delivery`, () => {
                expect(run.starts).to.equal(kills + 1);
                expect(run.acknowledged.size).to.equal(count);
                // Otherwise the kills missed every ingest and proved nothing.
                expect(run.interrupted).to.be.above(0);
            });

            it('has every acknowledged message once, raw message and attachments byte for byte, and no record without its blobs', async () => {
                const recordStore = await prepared.openRecordStore();
                const blobStore = await backend.openBlobStore(dataDir);
                try {
                    for (const message of messages.filter((m) => run.acknowledged.has(m.index))) {
                        const record = await recordStore.getEmail(message.messageId);
                        expect(record, message.messageId).to.not.be.null();
                        expect(record!.inbox).to.equal(message.inbox);
                        expect((await readBlob(blobStore, record!.rawKey))!.equals(message.raw), `raw of ${message.messageId}`).to.be.true();
                        expect(record!.attachments).to.have.length(message.attachments.length);
                        for (const [n, attachment] of record!.attachments.entries()) {
                            expect((await readBlob(blobStore, attachment.blobKey))!.equals(message.attachments[n]), `attachment ${n} of ${message.messageId}`).to.be.true();
                        }
                    }

                    const records = await allRecords(recordStore);
                    expect(records.map((r) => r.messageId).sort()).to.equal(messages.map((m) => m.messageId).sort());
                    for (const record of records) {
                        for (const key of [record.rawKey, ...record.attachments.map((a) => a.blobKey)]) {
                            const stream = await blobStore.get(key);
                            expect(stream, `blob ${key} of ${record.messageId}`).to.not.be.null();
                            stream!.destroy();
                        }
                    }
                }
                finally {
                    await recordStore.close();
                    await blobStore.close?.();
                }
            });

            it('keeps orphans younger than `gc --grace-seconds` (they may belong to a delivery in flight)', async () => {
                const result = await cli(['gc', '--grace-seconds', '3600'], prepared.env);
                expect(result.code).to.equal(0);
                expect(result.stdout).to.equal('removed 0 orphan blobs\n');
            });

            it('removes exactly the orphan blobs with `inbox-capture gc --grace-seconds 0` and says how many', async () => {
                const recordStore = await prepared.openRecordStore();
                const blobStore = await backend.openBlobStore(dataDir);
                try {
                    const referenced = new Set((await allRecords(recordStore)).flatMap((r) => [r.rawKey, ...r.attachments.map((a) => a.blobKey)]));
                    const orphans = (await blobKeys(blobStore)).filter((key) => !referenced.has(key));
                    if (backend.blobsCommitWithRecords) {
                        expect(orphans, 'blobs of deliveries cut off by a kill').to.equal([]);
                        expect(existsSync(Path.join(dataDir, BLOBS_SQLITE_FILENAME))).to.be.false();
                    }

                    const result = await cli(['gc', '--grace-seconds', '0'], prepared.env);
                    expect(result.stderr).to.equal('');
                    expect(result.code).to.equal(0);
                    expect(result.stdout).to.equal(`removed ${orphans.length} orphan blob${orphans.length === 1 ? '' : 's'}\n`);
                    expect(await blobKeys(blobStore)).to.equal([...referenced].sort());
                }
                finally {
                    await recordStore.close();
                    await blobStore.close?.();
                }
            });
        });
    }
});
