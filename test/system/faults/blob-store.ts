import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { Readable } from 'node:stream';
import * as Nodemailer from 'nodemailer';
import { createSmtpListener } from '../../../adapters/smtp';
import type { BlobStore } from '../../../lib/blob-store/blob-store';
import { createFsBlobStore } from '../../../lib/blob-store/fs-blob-store';
import { createS3BlobStore } from '../../../lib/blob-store/s3-blob-store';
import { isInboxCaptureError } from '../../../lib/errors';
import { createInboxCapture } from '../../../lib/service/inbox-capture';
import type { IngestOptions } from '../../../lib/ingest/ingest';
import { DEFAULT_BLOB_STORE_TIMEOUT_MS } from '../../../lib/defaults';
import { createKnexRecordStore } from '../../../lib/record-store/knex-record-store';
import type { RecordStore } from '../../../lib/record-store/record-store';
import { openSqliteKnex } from '../../../lib/sqlite/knex';
import { blobKeys, readBlob } from '../../helpers/blob-contents';
import { ingestOnce } from '../../helpers/ingest-context';
import { startS3, type S3Fixture } from '../../helpers/s3';
import { stubCapture } from '../../helpers/smtp-capture';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

type Flags = Lab.script.Flags;

/** Write timeout of these tests, ms: short, so a hanging store fails the ingest quickly, yet long enough that a real fsync'd put on a loaded 2-core CI machine never hits it. */
const TEST_WRITE_TIMEOUT_MS = 1_000;

/** How a blob write goes wrong. */
type Fault = 'error' | 'enospc' | 'hang';

const FAULTS: Array<{ fault: Fault; title: string }> = [
    { fault: 'error', title: 'a write that fails with an error' },
    { fault: 'enospc', title: 'a full disk (ENOSPC halfway through the write)' },
    { fault: 'hang', title: 'a write that never finishes' }
];

/** The error a full disk gives, as Node reports it. */
function enospc(): NodeJS.ErrnoException {
    return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
}

/**
 * The real store with one write (the `failAt`-th put, counting from 0) going wrong.
 * ENOSPC goes through the real store: it gets a body that breaks off halfway, so
 * the store itself must clean up the part it already wrote.
 */
function faulty(store: BlobStore, fault: Fault, failAt: number): BlobStore & { puts: () => number } {
    let puts = 0;
    return {
        ...store,
        puts: () => puts,
        put(key, body, contentType) {
            if (puts++ !== failAt) {
                return store.put(key, body, contentType);
            }

            if (fault === 'error') {
                return Promise.reject(new Error('the blob store is broken'));
            }

            if (fault === 'hang') {
                return new Promise<never>(() => undefined);
            }

            const bytes = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
            const half = bytes.subarray(0, Math.max(1, bytes.length >> 1));
            let sent = false;
            const breaking = new Readable({
                read() {
                    if (!sent) {
                        sent = true;
                        this.push(half);
                        setImmediate(() => this.destroy(enospc()));
                    }
                }
            });
            return store.put(key, breaking, contentType);
        }
    };
}

/** A message to two inboxes with two attachments: six blob writes in all. */
function message(id: string): Buffer {
    const boundary = `bnd-${id}`;
    return Buffer.from([
        'From: sender@faults.test',
        'To: first@faults.test, second@faults.test',
        `Subject: blob faults ${id}`,
        `Message-ID: <${id}@faults.test>`,
        'MIME-Version: 1.0',
        `Content-Type: multipart/mixed; boundary="${boundary}"`,
        '',
        `--${boundary}`,
        'Content-Type: text/plain; charset=utf-8',
        '',
        'The body.',
        `--${boundary}`,
        'Content-Type: application/octet-stream; name="one.bin"',
        'Content-Disposition: attachment; filename="one.bin"',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.alloc(3000, 1).toString('base64').replace(/.{76}/g, '$&\r\n'),
        `--${boundary}`,
        'Content-Type: text/plain; name="two.txt"',
        'Content-Disposition: attachment; filename="two.txt"',
        '',
        'second attachment',
        `--${boundary}--`,
        ''
    ].join('\r\n'));
}

/** Blob writes of `message()`: raw + 2 attachments, shared by its copies in 2 inboxes. */
const PUTS_PER_MESSAGE = 3;

/** Keys of every blob the stored records reference, each once. */
async function referencedKeys(recordStore: RecordStore, inboxes: string[]): Promise<string[]> {
    const keys: string[] = [];
    for (const inbox of inboxes) {
        const page = await recordStore.listEmails({ inbox, limit: 100 });
        for (const record of page.records) {
            keys.push(record.rawKey, ...record.attachments.map((a) => a.blobKey));
        }
    }

    return [...new Set(keys)].sort();
}

/** Waits until `check` holds; a state reached eventually, not a timing assertion. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
    for (let waited = 0; !(await check()); waited += 20) {
        if (waited > 10_000) {
            throw new Error(`never happened: ${what}`);
        }

        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}

interface Backend {
    name: string;
    /** A fresh, empty store and how to remove it. */
    create(): Promise<{ store: BlobStore; tempDir?: string; cleanup(): Promise<void> }>;
}

const fsBackend: Backend = {
    name: 'fs',
    async create() {
        const dir = await tempDir('blob-faults');
        const root = Path.join(dir, 'blobs');
        return {
            store: createFsBlobStore({ root, signingSecret: 'blob faults test signing secret' }),
            tempDir: Path.join(root, '.tmp'),
            cleanup: () => Fs.rm(dir, { recursive: true, force: true })
        };
    }
};

let s3: S3Fixture | null = null;
const s3Backend: Backend = {
    name: 's3',
    async create() {
        s3 ??= await startS3();
        const bucket = await s3.createBucket();
        return { store: createS3BlobStore({ client: s3.createClient(), bucket }), cleanup: async () => undefined };
    }
};

describe('blob store faults', () => {

    after(async () => {
        await s3?.stop();
        s3 = null;
    });

    it('bounds a blob write to 30 s by default', () => {
        expect(DEFAULT_BLOB_STORE_TIMEOUT_MS).to.equal(30_000);
    });

    it('refuses a write timeout that is not a positive integer of ms when the service is built', async () => {
        const dir = await tempDir('blob-faults-options');
        const recordStore = createKnexRecordStore({ knex: openSqliteKnex(Path.join(dir, 'options.sqlite')), destroyKnexOnClose: true });
        try {
            const blobStore = createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: 'blob faults test signing secret' });
            for (const bad of [0, -1, 1.5]) {
                expect(() => createInboxCapture({ recordStore, blobStore, blobStoreTimeoutMs: bad })).to.throw(TypeError, /blobStoreTimeoutMs must be a positive integer/);
            }
        }
        finally {
            await recordStore.close();
            await Fs.rm(dir, { recursive: true, force: true });
        }
    });

    for (const backend of [fsBackend, s3Backend]) {
        describe(`${backend.name} store`, () => {
            let dir: string;
            let recordStore: RecordStore;

            before(async () => {
                dir = await tempDir('blob-faults-db');
            });

            after(async () => {
                await Fs.rm(dir, { recursive: true, force: true });
            });

            /** Fresh stores with one message already stored, and the faulty wrapper's factory. */
            const provision = async (flags: Flags) => {
                const blobs = await backend.create();
                recordStore = createKnexRecordStore({ knex: openSqliteKnex(Path.join(dir, `${Math.random().toString(36).slice(2)}.sqlite`)), destroyKnexOnClose: true });
                await recordStore.migrate();
                flags.onCleanup = async () => {
                    await recordStore.close();
                    await blobs.cleanup();
                };

                const ingest = (raw: Buffer | Readable, blobStore: BlobStore, options: IngestOptions = {}) => ingestOnce(raw, {
                    ...options,
                    recordStore,
                    blobStore,
                    blobStoreTimeoutMs: TEST_WRITE_TIMEOUT_MS
                });

                // Mail stored before the fault must come through it untouched.
                const earlier = message('earlier');
                await ingest(earlier, blobs.store);
                const before = await blobKeys(blobs.store);
                expect(before).to.have.length(PUTS_PER_MESSAGE);

                const expectOnlyTheEarlierMail = async () => {
                    expect(await blobKeys(blobs.store)).to.equal(before);
                    expect(await referencedKeys(recordStore, ['first', 'second'])).to.equal(before);
                    for (const inbox of ['first', 'second']) {
                        const page = await recordStore.listEmails({ inbox, limit: 10 });
                        expect(page.records.map((r) => r.subject)).to.equal(['blob faults earlier']);
                        expect(await readBlob(blobs.store, page.records[0].rawKey)).to.equal(earlier);
                    }

                    if (blobs.tempDir) {
                        // No half-written file of the failed write is left either.
                        expect(await Fs.readdir(blobs.tempDir).catch(() => [])).to.equal([]);
                    }
                };

                const sweep = () => createInboxCapture({ recordStore, blobStore: blobs.store }).sweepOrphanBlobs({ graceMs: 0 });
                return { store: blobs.store, earlier, before, ingest, expectOnlyTheEarlierMail, sweep };
            };

            for (const { fault, title } of FAULTS) {
                describe(title, () => {

                    it('makes an ingest throw BLOB_STORE_FAILED and leaves no record and no blob, whichever write it hits', async (flags: Flags) => {
                        const p = await provision(flags);
                        for (let failAt = 0; failAt < PUTS_PER_MESSAGE; failAt++) {
                            const store = faulty(p.store, fault, failAt);
                            const err = await expect(p.ingest(message(`failing-${failAt}`), store)).to.reject();
                            expect(isInboxCaptureError(err, 'BLOB_STORE_FAILED'), `write ${failAt}: ${String(err)}`).to.be.true();
                            expect(store.puts()).to.equal(failAt + 1);
                            await p.expectOnlyTheEarlierMail();
                        }
                    });

                    it('answers 451 over SMTP and stores nothing', async (flags: Flags) => {
                        const p = await provision(flags);
                        // The second attachment: the raw message and the first attachment are already written.
                        const store = faulty(p.store, fault, 2);
                        const listener = createSmtpListener({
                            capture: stubCapture((raw, options) => p.ingest(raw as Readable, store, options)),
                            host: '127.0.0.1',
                            port: 0
                        });
                        const { port } = await listener.listen();
                        const transport = Nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
                        try {
                            const err = await expect(transport.sendMail({
                                envelope: { from: 'sender@faults.test', to: ['first@faults.test', 'second@faults.test'] },
                                raw: message('over-smtp')
                            })).to.reject();
                            expect((err as { responseCode?: number }).responseCode).to.equal(451);
                            expect(store.puts()).to.equal(3);
                            await p.expectOnlyTheEarlierMail();
                        }
                        finally {
                            transport.close();
                            await listener.close();
                        }
                    });
                });
            }

            it('still answers when the store stops answering altogether (writes and deletes hang), leaving what it wrote to the orphan sweep', async (flags: Flags) => {
                const p = await provision(flags);
                // The first attachment's write hangs, and so does the cleanup of the raw message.
                const dead: BlobStore = { ...faulty(p.store, 'hang', 1), delete: () => new Promise<never>(() => undefined) };
                const err = await expect(p.ingest(message('dead'), dead)).to.reject();
                expect(isInboxCaptureError(err, 'BLOB_STORE_FAILED')).to.be.true();
                expect(await referencedKeys(recordStore, ['first', 'second'])).to.equal(p.before);
                expect(await blobKeys(p.store)).to.have.length(p.before.length + 1);

                expect(await p.sweep()).to.equal(1);
                await p.expectOnlyTheEarlierMail();
            });

            it('acknowledges a delivery that replaced earlier copies even when deleting their blobs hangs', async (flags: Flags) => {
                const p = await provision(flags);
                const stuck: BlobStore = { ...p.store, delete: () => new Promise<never>(() => undefined) };
                const views = await p.ingest(p.earlier, stuck);
                expect(views.map((v) => v.inbox)).to.equal(['first', 'second']);
                const now = await referencedKeys(recordStore, ['first', 'second']);
                expect(now).to.have.length(PUTS_PER_MESSAGE);
                expect(now.filter((key) => p.before.includes(key))).to.equal([]);

                // The replaced copies' blobs are orphans now, for the sweep.
                expect(await p.sweep()).to.equal(PUTS_PER_MESSAGE);
                expect(await blobKeys(p.store)).to.equal(now);
            });

            it('removes a blob whose write finished only after its timeout', async (flags: Flags) => {
                const p = await provision(flags);
                let finished!: Promise<unknown>;
                const slow: BlobStore = {
                    ...p.store,
                    put(key, body, contentType) {
                        // Answers long after the deadline, and then really writes.
                        finished = new Promise((resolve) => setTimeout(resolve, TEST_WRITE_TIMEOUT_MS * 3))
                            .then(() => p.store.put(key, body, contentType));
                        return finished as ReturnType<BlobStore['put']>;
                    }
                };

                const err = await expect(p.ingest(message('late'), slow)).to.reject();
                expect(isInboxCaptureError(err, 'BLOB_STORE_FAILED')).to.be.true();
                await finished;
                const earlier = await referencedKeys(recordStore, ['first', 'second']);
                await eventually(async () => (await blobKeys(p.store)).length === earlier.length, 'the late blob was removed');
                await p.expectOnlyTheEarlierMail();
            });
        });
    }
});
