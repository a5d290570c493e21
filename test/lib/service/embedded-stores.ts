import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Sqlite3 from 'sqlite3';
import { createFsBlobStore } from '../../../lib/blob-store/fs-blob-store';
import { createSqliteBlobStore } from '../../../lib/blob-store/sqlite-blob-store';
import { createTieredBlobStore, DEFAULT_TIER_THRESHOLD_BYTES } from '../../../lib/blob-store/tiered-blob-store';
import { openEmbeddedRecordStore, openEmbeddedStores } from '../../../lib/service/embedded-stores';
import { BLOBS_DIRNAME, BLOBS_SQLITE_FILENAME, SQLITE_FILENAME } from '../../../lib/defaults';
import { ingestOnce } from '../../helpers/ingest-context';
import type { EmailRecord } from '../../../lib/types';
import { blobKeys } from '../../helpers/blob-contents';
import { buildMail } from '../../helpers/mail';
import { provisionServer } from '../../helpers/provision-server';
import { TEST_SIGNING_SECRET } from '../../helpers/test-stores';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** The keys in the `blobs` table of a SQLite file, read on a connection of its own. */
async function rowKeys(filename: string): Promise<string[]> {
    const db = await new Promise<Sqlite3.Database>((resolve, reject) => {
        const opened = new Sqlite3.Database(filename, Sqlite3.OPEN_READONLY, (err) => (err ? reject(err) : resolve(opened)));
    });
    try {
        const rows = await new Promise<{ key: string }[]>((resolve, reject) => {
            db.all<{ key: string }>('SELECT key FROM blobs ORDER BY key', (err, found) => (err ? reject(err) : resolve(found)));
        });
        return rows.map((r) => r.key);
    }
    finally {
        await new Promise<void>((resolve) => db.close(() => resolve()));
    }
}

function keysOf(record: EmailRecord): string[] {
    return [record.rawKey, ...record.attachments.map((a) => a.blobKey)];
}

describe('embedded-stores', () => {
    let dir: string;

    before(async () => {
        dir = await tempDir('embedded-stores');
    });

    after(async () => {
        await Fs.rm(dir, { recursive: true, force: true });
    });

    describe('openEmbeddedStores()', () => {

        it('commits an ingest\'s small blobs in the records\' file, and large ones as files', async () => {
            const dataDir = await Fs.mkdtemp(Path.join(dir, 'one-file-'));
            const stores = await openEmbeddedStores({ dataDir, signingSecret: TEST_SIGNING_SECRET });
            try {
                await stores.recordStore.migrate();
                const large = Buffer.alloc(DEFAULT_TIER_THRESHOLD_BYTES + 1, 7);
                const raw = buildMail({ messageId: 'one@x', attachments: [{ filename: 'small.txt', contentType: 'text/plain', content: 'small' }, { filename: 'large.bin', contentType: 'application/octet-stream', content: large }] });
                const [record] = await ingestOnce(Buffer.from(raw), { ...stores, recipients: ['one@x'] });

                // The raw message is over the threshold too (it holds the large attachment).
                expect(await rowKeys(Path.join(dataDir, SQLITE_FILENAME))).to.equal([record!.attachments[0]!.blobKey]);
                await expect(Fs.stat(Path.join(dataDir, BLOBS_SQLITE_FILENAME))).to.reject();
                const files = await Fs.readdir(Path.join(dataDir, BLOBS_DIRNAME), { recursive: true, withFileTypes: true });
                expect(files.filter((f) => f.isFile())).to.have.length(2);
                expect(await blobKeys(stores.blobStore)).to.equal(keysOf(record!).sort());
            }
            finally {
                await stores.recordStore.close();
                await stores.blobStore.close?.();
            }
        });

        it('deletes a replaced copy\'s blobs once: the small ones in the replacing commit, only the files afterwards', async () => {
            const dataDir = await Fs.mkdtemp(Path.join(dir, 'replaced-once-'));
            const stores = await openEmbeddedStores({ dataDir, signingSecret: TEST_SIGNING_SECRET });
            const deleted: string[][] = [];
            // The real store, its deletes seen: after the commit, only keys it still holds may be asked for.
            const blobStore = { ...stores.blobStore, delete: (keys: string[]) => {
                deleted.push(keys);
                return stores.blobStore.delete(keys);
            } };
            try {
                await stores.recordStore.migrate();
                const context = { recordStore: stores.recordStore, blobStore, recipients: ['again@x'] };
                const large = Buffer.alloc(DEFAULT_TIER_THRESHOLD_BYTES + 1, 7);
                const raw = Buffer.from(buildMail({ messageId: 'again@x', attachments: [{ filename: 'small.txt', contentType: 'text/plain', content: 'small' }, { filename: 'large.bin', contentType: 'application/octet-stream', content: large }] }));
                const [first] = await ingestOnce(raw, context);
                const [second] = await ingestOnce(raw, context);

                // The small attachment's row went with the replaced record; the raw message and the large attachment are files.
                expect(deleted).to.equal([[first!.rawKey, first!.attachments[1]!.blobKey]]);
                expect(await blobKeys(stores.blobStore)).to.equal(keysOf(second!).sort());

                // All small: nothing is left to delete after the commit.
                const small = Buffer.from(buildMail({ messageId: 'small@x', attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'a' }] }));
                deleted.length = 0;
                await ingestOnce(small, context);
                const [latest] = await ingestOnce(small, context);
                expect(deleted).to.equal([]);
                expect(await rowKeys(Path.join(dataDir, SQLITE_FILENAME))).to.equal([...keysOf(latest!), second!.attachments[0]!.blobKey].sort());
            }
            finally {
                await stores.recordStore.close();
                await stores.blobStore.close?.();
            }
        });

        it('writes no blob when the records are not committed (staged blobs roll back with them)', async () => {
            const dataDir = await Fs.mkdtemp(Path.join(dir, 'rolled-back-'));
            const stores = await openEmbeddedStores({ dataDir, signingSecret: TEST_SIGNING_SECRET });
            try {
                await stores.recordStore.migrate();
                // The records' insert fails: the transaction that would hold the blobs rolls back.
                const db = new Sqlite3.Database(Path.join(dataDir, SQLITE_FILENAME));
                await new Promise<void>((resolve, reject) => db.exec(
                    `CREATE TRIGGER refuse_emails AFTER INSERT ON emails BEGIN SELECT RAISE(ABORT, 'no room'); END`,
                    (err) => (err ? reject(err) : resolve())));
                await new Promise<void>((resolve) => db.close(() => resolve()));

                const raw = buildMail({ messageId: 'lost@x', attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'a' }] });
                await expect(ingestOnce(Buffer.from(raw), { ...stores, recipients: ['lost@x'] })).to.reject();
                expect(await rowKeys(Path.join(dataDir, SQLITE_FILENAME))).to.equal([]);
                // Nothing was put beforehand either (and then removed again).
                await expect(Fs.stat(Path.join(dataDir, BLOBS_SQLITE_FILENAME))).to.reject();
                expect(await blobKeys(stores.blobStore)).to.equal([]);
                expect(await stores.recordStore.getEmail('lost@x')).to.be.null();
            }
            finally {
                await stores.recordStore.close();
                await stores.blobStore.close?.();
            }
        });

        it('serves, lists and deletes every blob of a data dir the previous layout wrote (blobs.sqlite and files)', async () => {
            const dataDir = await Fs.mkdtemp(Path.join(dir, 'old-layout-'));
            // The layout of the previous version: records in inbox-capture.sqlite, small blobs
            // in blobs.sqlite (their own commits), large ones as files.
            const oldRecords = await openEmbeddedRecordStore({ dataDir });
            const oldLarge = createFsBlobStore({ root: Path.join(dataDir, BLOBS_DIRNAME), signingSecret: TEST_SIGNING_SECRET });
            const oldSmall = createSqliteBlobStore({ filename: Path.join(dataDir, BLOBS_SQLITE_FILENAME), links: oldLarge });
            const old = await provisionServer({ recordStore: oldRecords, blobStore: createTieredBlobStore({ small: oldSmall, large: oldLarge }) });
            const large = Buffer.alloc(DEFAULT_TIER_THRESHOLD_BYTES + 10, 3);
            const mails = [
                buildMail({ messageId: 'small@x', attachments: [{ filename: 's.txt', contentType: 'text/plain', content: 'old small attachment' }] }),
                buildMail({ messageId: 'large@x', attachments: [{ filename: 'l.bin', contentType: 'application/octet-stream', content: large }] })
            ];
            const oldRecordsStored: EmailRecord[] = [];
            for (const [n, mail] of mails.entries()) {
                await old.api.ingestForApi(mail, { recipients: [`old${n}@x`] });
                oldRecordsStored.push((await oldRecords.getEmail(n === 0 ? 'small@x' : 'large@x'))!);
            }

            await old.cleanup();
            await oldSmall.close();
            await oldRecords.close();
            expect(await rowKeys(Path.join(dataDir, BLOBS_SQLITE_FILENAME))).to.have.length(2);

            const stores = await openEmbeddedStores({ dataDir, signingSecret: TEST_SIGNING_SECRET });
            const p = await provisionServer(stores);
            try {
                const oldKeys = oldRecordsStored.flatMap(keysOf).sort();
                expect(await blobKeys(stores.blobStore)).to.equal(oldKeys);
                for (const [n, mail] of mails.entries()) {
                    const id = n === 0 ? 'small%40x' : 'large%40x';
                    const location = (await p.server.inject({ url: `/v1/emails/${id}/raw`, headers: p.auth })).headers.location as string;
                    const res = await p.server.inject(location);
                    expect(res.statusCode).to.equal(200);
                    expect(res.rawPayload.equals(Buffer.from(mail))).to.be.true();
                    const view = JSON.parse((await p.server.inject({ url: `/v1/emails/${id}`, headers: p.auth })).payload) as { attachments: { url: string }[] };
                    const attachment = (await p.server.inject({ url: view.attachments[0]!.url, headers: p.auth })).headers.location as string;
                    const body = (await p.server.inject(attachment)).rawPayload;
                    expect(body.equals(n === 0 ? Buffer.from('old small attachment') : large)).to.be.true();
                }

                // New mail commits its small blobs with its record: blobs.sqlite is left as it was.
                await p.api.ingestForApi(buildMail({ messageId: 'new@x' }), { recipients: ['new@x'] });
                const fresh = (await stores.recordStore.getEmail('new@x'))!;
                expect(await rowKeys(Path.join(dataDir, SQLITE_FILENAME))).to.equal([fresh.rawKey]);
                expect(await rowKeys(Path.join(dataDir, BLOBS_SQLITE_FILENAME))).to.have.length(2);

                for (const id of ['small%40x', 'large%40x', 'new%40x']) {
                    expect((await p.server.inject({ method: 'DELETE', url: `/v1/emails/${id}`, headers: p.auth })).statusCode).to.equal(200);
                }

                expect(await blobKeys(stores.blobStore)).to.equal([]);
                expect(await rowKeys(Path.join(dataDir, BLOBS_SQLITE_FILENAME))).to.equal([]);
            }
            finally {
                await p.cleanup();
                await stores.blobStore.close?.();
                await stores.recordStore.close();
            }
        });
    });
});
