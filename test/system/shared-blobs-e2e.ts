import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { randomBytes } from 'node:crypto';
import { openEmbeddedStores } from '../../lib/service/embedded-stores';
import type { EmailRecord } from '../../lib/types';
import { blobKeys } from '../helpers/blob-contents';
import { followDownload } from '../helpers/downloads';
import { countEmbeddedBlobs } from '../helpers/embedded-blobs';
import { buildMail } from '../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../helpers/provision-server';
import { postgresS3Stores } from '../helpers/test-stores';
import { removeDir, tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

type Flags = Lab.script.Flags;

/** Over the 256 KiB that go into SQLite with the embedded default: this attachment, and the raw message holding it, are files there. */
const LARGE = randomBytes(300 * 1024);
const SMALL = Buffer.from('a small attachment, kept in the records\' database by the embedded default');

/** One message with a small and a large attachment: 3 blobs in all. */
function message(messageId: string): Buffer {
    return Buffer.from(buildMail({
        messageId,
        attachments: [
            { filename: 'small.txt', contentType: 'text/plain', content: SMALL },
            { filename: 'large.bin', contentType: 'application/octet-stream', content: LARGE }
        ]
    }));
}

/** A backend: its server, and what it holds counted where the blobs live. */
interface Backend {
    name: string;
    /** Keeps shared servers up across the tests; answers the release. */
    hold?(): Promise<() => Promise<void>>;
    provision(): Promise<{ server: ProvisionedServer; blobs(): Promise<number>; where?: () => Promise<unknown> }>;
}

const BACKENDS: Backend[] = [
    {
        // The standalone service's default: small blobs in inbox-capture.sqlite, larger ones as files.
        name: 'embedded (SQLite + files)',
        async provision() {
            const dataDir = await tempDir('shared-blobs');
            const stores = await openEmbeddedStores({ dataDir });
            const server = await provisionServer({ recordStore: stores.recordStore, blobStore: stores.blobStore });
            const cleanup = server.cleanup;
            server.cleanup = async () => {
                await cleanup();
                await stores.recordStore.close();
                await stores.blobStore.close?.();
                await removeDir(dataDir);
            };

            return {
                server,
                async blobs() {
                    const count = await countEmbeddedBlobs(dataDir);
                    return count.files + count.withRecords + count.separate;
                },
                where: () => countEmbeddedBlobs(dataDir)
            };
        }
    },
    {
        name: 'Postgres + S3',
        hold: () => postgresS3Stores().hold!(),
        async provision() {
            const server = await provisionServer({ stores: postgresS3Stores() });
            // Objects in the bucket, listed by the S3 store.
            return { server, blobs: async () => (await blobKeys(server.stores.blobStore)).length };
        }
    }
];

/** Ingests `raw` for `inboxes` through the service; the stored copies. */
async function deliver(server: ProvisionedServer, raw: Buffer, inboxes: string[]): Promise<EmailRecord[]> {
    return server.api.capture.ingestRawEmail(raw, { recipients: inboxes.map((inbox) => `${inbox}@shared.test`) });
}

/** The raw message and both attachments of `messageId`, downloaded as a client would (302, then the link). */
async function downloads(server: ProvisionedServer, messageId: string): Promise<Buffer[]> {
    const bodies: Buffer[] = [];
    const id = encodeURIComponent(messageId);
    for (const path of [`/v1/emails/${id}/raw`, `/v1/emails/${id}/attachments/0-small.txt`, `/v1/emails/${id}/attachments/1-large.bin`]) {
        const res = await server.server.inject({ method: 'GET', url: path, headers: server.auth });
        expect(res.statusCode, path).to.equal(302);
        const download = await followDownload(server.server, res.headers.location as string);
        expect(download.statusCode, path).to.equal(200);
        bodies.push(download.body);
    }

    return bodies;
}

function keysOf(record: EmailRecord): string[] {
    return [record.rawKey, ...record.attachments.map((a) => a.blobKey)];
}

async function deleteOne(server: ProvisionedServer, messageId: string): Promise<number> {
    return (await server.server.inject({ method: 'DELETE', url: `/v1/emails/${encodeURIComponent(messageId)}`, headers: server.auth })).statusCode;
}

// The copies of one delivery share its blobs; each copy goes on its own and the last takes
// them (docs/design.md, "What happens to a message › Deletes and shared blobs").
describe('shared blobs: the copies of one delivery', () => {

    for (const backend of BACKENDS) {
        describe(backend.name, () => {

            let release: (() => Promise<void>) | undefined;

            before(async () => {
                release = await backend.hold?.();
            });

            after(async () => {
                await release?.();
            });

            const provision = async (flags: Flags) => {
                const p = await backend.provision();
                flags.onCleanup = () => p.server.cleanup();
                return p;
            };

            it('stores a delivery to 100 inboxes as one raw blob and one blob per attachment, referenced by every copy', async (flags: Flags) => {
                const p = await provision(flags);
                const inboxes = Array.from({ length: 100 }, (_, i) => `fan${i}`);
                const copies = await deliver(p.server, message('fan-out@shared.test'), inboxes);
                expect(copies).to.have.length(100);
                const keys = keysOf(copies[0]!);
                for (const copy of copies) {
                    expect(keysOf(copy)).to.equal(keys);
                }

                expect(await p.blobs()).to.equal(3);
                if (p.where) {
                    // The raw message and the large attachment as files, the small one in the records' database.
                    expect(await p.where()).to.equal({ files: 2, withRecords: 1, separate: 0 });
                }
            });

            it('keeps the blobs while any copy uses them: deleting one, an inbox, then the last two at once', async (flags: Flags) => {
                const p = await provision(flags);
                const raw = message('delete-copies@shared.test');
                const [a, b, c, d] = await deliver(p.server, raw, ['a', 'b', 'c', 'd']);

                expect(await deleteOne(p.server, a!.messageId)).to.equal(200);
                expect(await downloads(p.server, b!.messageId)).to.equal([raw, SMALL, LARGE]);

                const bulk = await p.server.server.inject({ method: 'DELETE', url: '/v1/emails?inbox=b', headers: p.server.auth });
                expect(bulk.result).to.equal({ deleted: 1 });
                expect(await downloads(p.server, c!.messageId)).to.equal([raw, SMALL, LARGE]);
                expect(await downloads(p.server, d!.messageId)).to.equal([raw, SMALL, LARGE]);
                expect(await p.blobs()).to.equal(3);

                // Two deletes racing: whichever commits last sees no reference and removes the blobs.
                expect(await Promise.all([deleteOne(p.server, c!.messageId), deleteOne(p.server, d!.messageId)])).to.equal([200, 200]);
                expect(await p.blobs()).to.equal(0);
            });

            it('keeps the blobs the other copies use when a redelivery replaces one copy, and removes them with the last', async (flags: Flags) => {
                const p = await provision(flags);
                const raw = message('redelivered@shared.test');
                const [a, b] = await deliver(p.server, raw, ['a', 'b']);

                const [again] = await deliver(p.server, raw, ['a']);
                expect(again!.messageId).to.equal(a!.messageId);
                expect(again!.rawKey).to.not.equal(a!.rawKey);
                expect(await p.blobs()).to.equal(6);
                expect(await downloads(p.server, b!.messageId)).to.equal([raw, SMALL, LARGE]);
                expect(await downloads(p.server, a!.messageId)).to.equal([raw, SMALL, LARGE]);

                // The first delivery's blobs go with its last copy; the two redeliveries' stay.
                const [last] = await deliver(p.server, raw, ['b']);
                expect(await p.blobs()).to.equal(6);
                expect(await blobKeys(p.server.api.capture.blobStore)).to.equal([...keysOf(again!), ...keysOf(last!)].sort());
                expect(await downloads(p.server, b!.messageId)).to.equal([raw, SMALL, LARGE]);
            });

            it('gc after deleting some copies removes nothing still referenced, and sweeps what nothing references', async (flags: Flags) => {
                const p = await provision(flags);
                const raw = message('swept@shared.test');
                const [a, b, c] = await deliver(p.server, raw, ['a', 'b', 'c']);
                expect(await deleteOne(p.server, a!.messageId)).to.equal(200);
                expect(await deleteOne(p.server, b!.messageId)).to.equal(200);

                // An orphan: a blob no record references (what a crash between blob and record leaves).
                const { blobStore } = p.server.api.capture;
                await blobStore.put('orphan0000000000000000000/raw.eml', Buffer.from('orphan'), 'message/rfc822');
                expect(await p.server.api.capture.sweepOrphanBlobs({ graceMs: 0 })).to.equal(1);
                expect(await p.blobs()).to.equal(3);
                expect(await downloads(p.server, c!.messageId)).to.equal([raw, SMALL, LARGE]);

                // Once the last copy is gone nothing is left for the sweep either.
                expect(await deleteOne(p.server, c!.messageId)).to.equal(200);
                expect(await p.server.api.capture.sweepOrphanBlobs({ graceMs: 0 })).to.equal(0);
                expect(await p.blobs()).to.equal(0);
            });
        });
    }
});
