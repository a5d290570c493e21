import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { BlobStore } from '../../../lib/blob-store/blob-store';
import { createInboxCapture, DELETE_BATCH_SIZE } from '../../../lib/service/inbox-capture';
import type { RecordStore } from '../../../lib/record-store/record-store';
import type { EmailRecord } from '../../../lib/types';
import { buildMail } from '../../helpers/mail';
import { sqliteFsStores } from '../../helpers/test-stores';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** A stored copy with one attachment, enough for deleteInbox() to remove its blobs. */
function record(n: number): EmailRecord {
    return {
        messageId: `m${n}@x`,
        seen: false,
        sourceId: `m${n}@x`,
        inbox: 'bulk',
        sender: '',
        recipient: 'bulk@x',
        subject: '',
        body: '',
        htmlBody: '',
        receivedAt: n,
        rawKey: `k${n}/raw.eml`,
        rawSize: 1,
        rawSha256: 'a'.repeat(64),
        attachments: [{ filename: '0-a.txt', contentType: 'text/plain', size: 1, blobKey: `k${n}/att/0` }],
        links: [],
        codes: [],
        tags: [],
        senderName: ''
    };
}

/**
 * A service over a record store holding `count` emails whose batch deletes follow
 * `script` ('fail' throws, 'ok' deletes a batch), then always succeed.
 */
function provision(count: number, script: Array<'fail' | 'ok'> = []) {
    let left = count;
    let next = 0;
    const calls: Array<{ at: number; limit: number; failed: boolean }> = [];
    const deletedKeys: string[] = [];
    const logged: string[] = [];
    const recordStore = {
        deleteInboxBatch(inbox: string, limit: number): Promise<EmailRecord[]> {
            expect(inbox).to.equal('bulk');
            const step = script.shift() ?? 'ok';
            calls.push({ at: Date.now(), limit, failed: step === 'fail' });
            if (step === 'fail') {
                return Promise.reject(new Error('database is busy'));
            }

            const batch = Array.from({ length: Math.min(limit, left) }, () => record(next++));
            left -= batch.length;
            return Promise.resolve(batch);
        },
        // Every copy here is alone: none of its blobs is referenced once it is deleted.
        referencedBlobKeys: () => Promise.resolve(new Set<string>())
    } as unknown as RecordStore;
    const blobStore = {
        delete(keys: string[]) {
            deletedKeys.push(...keys);
            return Promise.resolve();
        }
    } as unknown as BlobStore;
    const capture = createInboxCapture({ recordStore, blobStore, log: (message) => logged.push(message) });
    return { capture, calls, deletedKeys, logged };
}

describe('inbox-capture', () => {

    describe('deleteInbox()', () => {

        it('deletes in batches of 25 until a batch comes back empty, with the blobs of each', async () => {
            const p = provision(60);
            expect(await p.capture.deleteInbox('bulk')).to.equal(60);
            expect(DELETE_BATCH_SIZE).to.equal(25);
            expect(p.calls.map((c) => c.limit)).to.equal([25, 25, 25, 25]);
            expect(p.deletedKeys).to.have.length(120);
            expect(p.deletedKeys.slice(0, 2)).to.equal(['k0/raw.eml', 'k0/att/0']);
            expect(p.logged).to.equal([]);
        });

        it('retries a failing batch five times, waiting twice as long each time, and logs each retry', async () => {
            const p = provision(30, ['ok', 'fail', 'fail', 'fail', 'fail', 'fail']);
            expect(await p.capture.deleteInbox('bulk')).to.equal(30);
            expect(p.calls.map((c) => c.failed)).to.equal([false, true, true, true, true, true, false, false]);
            const waits = p.calls.slice(2, 7).map((c, i) => c.at - p.calls[i + 1].at);
            [50, 100, 200, 400, 800].forEach((ms, i) => expect(waits[i]).to.be.at.least(ms - 5));
            expect(waits[4]).to.be.below(1600);
            expect(p.logged).to.equal(Array(5).fill('delete batch failed; backing off'));
        });

        it('gives each batch its retries afresh after a good one', async () => {
            const p = provision(30, ['fail', 'fail', 'fail', 'ok', 'fail', 'fail', 'fail', 'ok']);
            expect(await p.capture.deleteInbox('bulk')).to.equal(30);
            expect(p.logged).to.have.length(6);
            // The first retry after a good batch waits the first step again, not the fourth.
            expect(p.calls[5].at - p.calls[4].at).to.be.below(200);
        });

        it('gives up after the sixth failure of one batch, with the last error', async () => {
            const p = provision(30, ['ok', 'fail', 'fail', 'fail', 'fail', 'fail', 'fail']);
            await expect(p.capture.deleteInbox('bulk')).to.reject('database is busy');
            expect(p.calls).to.have.length(7);
            expect(p.logged).to.have.length(5);
            expect(p.deletedKeys).to.have.length(2 * DELETE_BATCH_SIZE);
        });
    });

    describe('routeDeliveries()', () => {

        it('saves a delivery per copy and wanted URL in the commit, wakes the sender, and closes it before the stores', async () => {
            const stores = await sqliteFsStores().create();
            const capture = createInboxCapture({ recordStore: { ...stores.recordStore, close: () => Promise.resolve() }, blobStore: stores.blobStore });
            const events: string[] = [];
            try {
                await capture.start();
                capture.routeDeliveries('webhook', {
                    targetsFor: ({ inbox }) => (inbox === 'hooked' ? ['http://receiver.test/a', 'http://receiver.test/b'] : []),
                    wake: () => events.push('wake'),
                    async close() {
                        // Still open: a sender's last writes (sent deliveries) need the store.
                        const left = await stores.recordStore.claimDeliveries!('webhook', ['http://receiver.test/a'], 10, 60_000);
                        events.push(`close with ${left.length} left`);
                    }
                });
                const [copy] = await capture.ingestRawEmail(buildMail({ to: ['hooked@test.example', 'quiet@test.example'] }));
                expect(events).to.equal(['wake']);
                await capture.ingestRawEmail(buildMail({ to: 'quiet@test.example' }));
                expect(events).to.equal(['wake']);
                const [delivery] = await stores.recordStore.claimDeliveries!('webhook', ['http://receiver.test/b'], 10, 60_000);
                expect(delivery!.messageId).to.equal(copy!.messageId);
                expect(() => capture.routeDeliveries('webhook', { targetsFor: () => [], wake: () => undefined, close: () => Promise.resolve() })).to.throw(/already routed/);
                await capture.close();
                expect(events).to.equal(['wake', 'close with 1 left']);
            }
            finally {
                await stores.cleanup();
            }
        });

        it('answers a stop that ends the routing and closes the sender once', async () => {
            const stores = await sqliteFsStores().create();
            const capture = createInboxCapture({ recordStore: { ...stores.recordStore, close: () => Promise.resolve() }, blobStore: stores.blobStore });
            let closes = 0;
            try {
                await capture.start();
                const stop = capture.routeDeliveries('webhook', { targetsFor: () => ['http://receiver.test/a'], wake: () => undefined, close: async () => void closes++ });
                await stop();
                await stop();
                await capture.ingestRawEmail(buildMail({ to: 'after@test.example' }));
                expect(await stores.recordStore.claimDeliveries!('webhook', ['http://receiver.test/a'], 10, 60_000)).to.equal([]);
                await capture.close();
                expect(closes).to.equal(1);
            }
            finally {
                await stores.cleanup();
            }
        });
    });
});
