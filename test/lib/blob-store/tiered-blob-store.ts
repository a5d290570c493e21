import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { randomBytes } from 'node:crypto';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { relativePathOf } from '../../../lib/blob-store/fs-blob-layout';
import { createFsBlobStore, type FsBlobStore } from '../../../lib/blob-store/fs-blob-store';
import { createSqliteBlobStore, type SqliteBlobStore } from '../../../lib/blob-store/sqlite-blob-store';
import { createTieredBlobStore, DEFAULT_TIER_THRESHOLD_BYTES } from '../../../lib/blob-store/tiered-blob-store';
import { openEmbeddedBlobStore, openEmbeddedRecordStore } from '../../../lib/service/embedded-stores';
import { BLOBS_DIRNAME, BLOBS_SQLITE_FILENAME } from '../../../lib/defaults';
import { blobStoreContract } from '../../contracts/blob-store-contract';
import { readBlob } from '../../helpers/blob-contents';
import { chunked } from '../../helpers/streams';
import { buildMail } from '../../helpers/mail';
import { provisionServer } from '../../helpers/provision-server';
import { TEST_SIGNING_SECRET } from '../../helpers/test-stores';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** Threshold of the routing tests, bytes: small enough to cross with tiny blobs. */
const THRESHOLD = 1000;


/** The two tiers and the tiered store on them, in `dir`. */
function openTiers(dir: string, thresholdBytes?: number): { small: SqliteBlobStore; large: FsBlobStore; store: FsBlobStore } {
    const large = createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: TEST_SIGNING_SECRET });
    const small = createSqliteBlobStore({ filename: Path.join(dir, 'blobs.sqlite'), links: large });
    return { small, large, store: createTieredBlobStore({ small, large, thresholdBytes }) };
}

async function fileExists(dir: string, key: string): Promise<boolean> {
    try {
        return (await Fs.stat(Path.join(dir, 'blobs', ...relativePathOf(key)!.split('/')))).isFile();
    }
    catch {
        return false;
    }
}

async function listed(store: FsBlobStore): Promise<string[]> {
    const keys: string[] = [];
    for await (const { key } of store.listBlobs()) {
        keys.push(key);
    }

    return keys.sort();
}

blobStoreContract({ describe, it, before, after }, {
    name: 'tiered',
    async provision() {
        const dir = await tempDir('tiered-blobs');
        return {
            store: openTiers(dir).store,
            cleanup: () => Fs.rm(dir, { recursive: true, force: true })
        };
    }
});

describe('TieredBlobStore', () => {
    let dir: string;
    let small: SqliteBlobStore;
    let store: FsBlobStore;

    before(async () => {
        dir = await tempDir('tiered-blobs');
        ({ small, store } = openTiers(dir, THRESHOLD));
    });

    after(async () => {
        await store.close!();
        await Fs.rm(dir, { recursive: true, force: true });
    });

    describe('put()', () => {

        const cases = [
            { name: 'a Buffer', body: (data: Buffer) => data },
            { name: 'a Readable', body: (data: Buffer) => chunked(data, 300) }
        ];

        for (const { name, body } of cases) {
            it(`keeps ${name} of at most the threshold in SQLite and a larger one as a file`, async () => {
                const tag = name.endsWith('Buffer') ? 'buf' : 'stream';
                const atThreshold = randomBytes(THRESHOLD);
                const above = randomBytes(THRESHOLD + 1);

                expect(await store.put(`${tag}/small`, body(atThreshold), 'text/plain')).to.equal({ size: THRESHOLD });
                expect(await store.put(`${tag}/large`, body(above), 'text/plain')).to.equal({ size: THRESHOLD + 1 });

                expect(await small.stat(`${tag}/small`)).to.include({ size: THRESHOLD });
                expect(await fileExists(dir, `${tag}/small`)).to.be.false();
                expect(await small.stat(`${tag}/large`)).to.be.null();
                expect(await fileExists(dir, `${tag}/large`)).to.be.true();
                expect((await readBlob(store, `${tag}/small`))!.equals(atThreshold)).to.be.true();
                expect((await readBlob(store, `${tag}/large`))!.equals(above)).to.be.true();
                expect(await store.stat(`${tag}/large`)).to.include({ size: THRESHOLD + 1 });
            });
        }

        it('moves a key rewritten with another size to its new tier, leaving no old version', async () => {
            await store.put('move/raw.eml', randomBytes(THRESHOLD * 2), 'message/rfc822');
            await store.put('move/raw.eml', Buffer.from('small now'), 'message/rfc822');

            expect(await fileExists(dir, 'move/raw.eml')).to.be.false();
            expect((await readBlob(store, 'move/raw.eml'))!.toString()).to.equal('small now');

            const large = randomBytes(THRESHOLD * 2);
            await store.put('move/raw.eml', chunked(large, 100), 'message/rfc822');
            expect(await small.stat('move/raw.eml')).to.be.null();
            expect((await readBlob(store, 'move/raw.eml'))!.equals(large)).to.be.true();
        });

        it('writes a new large blob without a transaction in the SQLite tier', async () => {
            const own = await tempDir('tiered-blobs');
            const commits: number[] = [];
            const large = createFsBlobStore({ root: Path.join(own, 'blobs'), signingSecret: TEST_SIGNING_SECRET });
            const sqlite = createSqliteBlobStore({ filename: Path.join(own, 'blobs.sqlite'), links: large, onCommit: (items) => commits.push(items) });
            const tiered = createTieredBlobStore({ small: sqlite, large, thresholdBytes: THRESHOLD });
            await tiered.put('fresh/small', Buffer.from('small'), 'text/plain');
            expect(commits).to.equal([1]);
            await tiered.put('fresh/large', randomBytes(THRESHOLD * 2), 'application/octet-stream');
            expect(commits).to.equal([1]);
            await tiered.close?.();
            await Fs.rm(own, { recursive: true, force: true });
        });

        it('uses a threshold of 256 KiB by default', () => {
            expect(DEFAULT_TIER_THRESHOLD_BYTES).to.equal(256 * 1024);
        });
    });

    describe('delete()', () => {

        it('removes a key from both tiers', async () => {
            const own = await Fs.mkdtemp(Path.join(dir, 'both-'));
            const tiers = openTiers(own, THRESHOLD);
            try {
                // Both tiers hold the key, as after a crash between a put and the removal of its old version.
                await tiers.small.put('both/raw.eml', Buffer.from('row'), 'message/rfc822');
                await tiers.large.put('both/raw.eml', Buffer.from('file'), 'message/rfc822');

                await tiers.store.delete(['both/raw.eml']);
                expect(await tiers.small.get('both/raw.eml')).to.be.null();
                expect(await tiers.large.get('both/raw.eml')).to.be.null();
                expect(await tiers.store.get('both/raw.eml')).to.be.null();
            }
            finally {
                await tiers.store.close!();
            }
        });
    });

    describe('listBlobs()', () => {

        it('lists both tiers, a key held by both once', async () => {
            const own = await Fs.mkdtemp(Path.join(dir, 'list-'));
            const tiers = openTiers(own, THRESHOLD);
            try {
                await tiers.store.put('l/small', Buffer.from('s'), 'text/plain');
                await tiers.store.put('l/large', randomBytes(THRESHOLD + 1), 'text/plain');
                await tiers.small.put('l/both', Buffer.from('row'), 'text/plain');
                await tiers.large.put('l/both', Buffer.from('file'), 'text/plain');

                expect(await listed(tiers.store)).to.equal(['l/both', 'l/large', 'l/small']);
                // The row is what reads see.
                expect((await readBlob(tiers.store, 'l/both'))!.toString()).to.equal('row');
            }
            finally {
                await tiers.store.close!();
            }
        });
    });

    describe('openEmbeddedBlobStore()', () => {

        it('serves, lists and deletes the blob files of a data dir written before the SQLite tier', async () => {
            const dataDir = await Fs.mkdtemp(Path.join(dir, 'old-data-'));
            // The data dir as earlier versions wrote it: records in SQLite, every blob a file.
            const oldRecords = await openEmbeddedRecordStore({ dataDir });
            const oldBlobs = createFsBlobStore({ root: Path.join(dataDir, BLOBS_DIRNAME), signingSecret: TEST_SIGNING_SECRET });
            const raw = buildMail({ messageId: 'old@x', attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'old attachment' }] });
            const old = await provisionServer({ recordStore: oldRecords, blobStore: oldBlobs });
            const [view] = await old.api.ingestForApi(raw, { recipients: ['old@x'] });
            await old.cleanup();
            await oldRecords.close();
            const files = await Fs.readdir(Path.join(dataDir, BLOBS_DIRNAME), { recursive: true });
            expect(files.length).to.be.above(2);
            await expect(Fs.stat(Path.join(dataDir, BLOBS_SQLITE_FILENAME))).to.reject();

            const recordStore = await openEmbeddedRecordStore({ dataDir });
            const blobStore = await openEmbeddedBlobStore({ dataDir, signingSecret: TEST_SIGNING_SECRET });
            const p = await provisionServer({ recordStore, blobStore });
            try {
                const location = (await p.server.inject({ url: `/v1/emails/old%40x/raw`, headers: p.auth })).headers.location as string;
                expect(location).to.startWith('/v1/blobs/');
                const res = await p.server.inject(location);
                expect(res.statusCode).to.equal(200);
                expect(res.rawPayload.equals(Buffer.from(raw))).to.be.true();
                expect(res.headers['content-length']).to.equal(Buffer.byteLength(raw));

                const attachment = (await p.server.inject({ url: view.attachments[0].url, headers: p.auth })).headers.location as string;
                expect((await p.server.inject(attachment)).payload).to.equal('old attachment');

                const keys = await listed(blobStore);
                expect(keys).to.have.length(2);
                expect((await p.server.inject({ method: 'DELETE', url: '/v1/emails/old%40x', headers: p.auth })).statusCode).to.equal(200);
                expect(await listed(blobStore)).to.equal([]);
                expect((await p.server.inject(location)).statusCode).to.equal(404);
                // New small blobs that are put go to the SQLite file beside the old files.
                await blobStore.put('new/raw.eml', Buffer.from('new'), 'message/rfc822');
                expect((await Fs.stat(Path.join(dataDir, BLOBS_SQLITE_FILENAME))).isFile()).to.be.true();
                expect(await fileExists(dataDir, 'new/raw.eml')).to.be.false();
                expect((await readBlob(blobStore, 'new/raw.eml'))!.toString()).to.equal('new');
            }
            finally {
                await p.cleanup();
                await blobStore.close!();
                await recordStore.close();
            }
        });
    });
});
