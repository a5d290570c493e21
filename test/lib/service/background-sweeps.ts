import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { setTimeout as sleep } from 'node:timers/promises';
import { createInboxCapture } from '../../../lib/service/inbox-capture';
import type { RecordStore } from '../../../lib/record-store/record-store';
import { blobKeys } from '../../helpers/blob-contents';
import { BASE_TIME } from '../../helpers/email-draft';
import { buildMail } from '../../helpers/mail';
import { sqliteFsStores, type TestStores } from '../../helpers/test-stores';
import { waitUntil } from '../../helpers/wait-until';

const { expect } = Code;
const { describe, it, beforeEach, afterEach } = exports.lab = Lab.script();

describe('background-sweeps', () => {

    describe('startBackgroundSweeps() through InboxCapture.start() and close()', () => {
        let stores: TestStores;

        beforeEach(async () => {
            stores = await sqliteFsStores().create();
        });

        afterEach(async () => {
            await stores.cleanup();
        });

        it('prunes every intervalMs once started, and not at all before start() or after close()', async () => {
            let passes = 0;
            const recordStore: RecordStore = {
                ...stores.recordStore,
                deleteReceivedBeforeBatch(before, size) {
                    ++passes;
                    return stores.recordStore.deleteReceivedBeforeBatch(before, size);
                },
                close: () => Promise.resolve()
            };
            const capture = createInboxCapture({ recordStore, blobStore: stores.blobStore, retention: { maxAgeMs: 60_000, intervalMs: 5 } });
            await recordStore.migrate();
            const [old] = await capture.ingestRawEmail(buildMail({ to: 'old@test.example' }), { receivedAt: BASE_TIME });
            const [young] = await capture.ingestRawEmail(buildMail({ to: 'young@test.example' }));
            await sleep(30);
            expect(passes).to.equal(0);

            await capture.start();
            await waitUntil('the old email is gone', async () => await capture.getEmail(old!.messageId) === null);
            await waitUntil('a few more passes ran', () => passes >= 6);
            expect(await capture.getEmail(young!.messageId)).to.not.be.null();
            expect(await blobKeys(stores.blobStore)).to.equal([young!.rawKey]);

            await capture.close();
            const seen = passes;
            await sleep(30);
            expect(passes).to.equal(seen);
        });

        it('sweeps orphan blobs older than the grace period every intervalMs', async () => {
            const capture = createInboxCapture({ recordStore: { ...stores.recordStore, close: () => Promise.resolve() }, blobStore: stores.blobStore, orphanSweep: { intervalMs: 5, graceMs: 0 } });
            await capture.start();
            try {
                await stores.blobStore.put('orphan-1/raw.eml', Buffer.from('nobody references me'), 'message/rfc822');
                await waitUntil('the orphan is swept', async () => (await blobKeys(stores.blobStore)).length === 0);
                await stores.blobStore.put('orphan-2/raw.eml', Buffer.from('nor me'), 'message/rfc822');
                await waitUntil('the next orphan is swept', async () => (await blobKeys(stores.blobStore)).length === 0);
            }
            finally {
                await capture.close();
            }
        });

        it('logs a failing pass and goes on with the next one', async () => {
            const logged: Array<[string, unknown]> = [];
            let calls = 0;
            const recordStore: RecordStore = {
                ...stores.recordStore,
                inboxesOver() {
                    ++calls;
                    return Promise.reject(new Error('database is down'));
                },
                close: () => Promise.resolve()
            };
            const capture = createInboxCapture({ recordStore, blobStore: stores.blobStore, retention: { maxPerInbox: 10, intervalMs: 1 }, log: (message, error) => logged.push([message, error]) });
            await capture.start();
            await waitUntil('three passes failed', () => calls >= 3);
            await capture.close();
            expect(logged.length).to.be.at.least(3);
            expect(logged[0]![0]).to.equal('retention pass failed; the next one tries again');
            expect((logged[0]![1] as Error).message).to.equal('database is down');
        });

        it('runs no retention pass without a rule (an interval alone)', async () => {
            let calls = 0;
            const recordStore: RecordStore = {
                ...stores.recordStore,
                deleteReceivedBeforeBatch: () => Promise.resolve(void ++calls).then(() => []),
                inboxesOver: () => Promise.resolve(void ++calls).then(() => []),
                close: () => Promise.resolve()
            };
            const capture = createInboxCapture({ recordStore, blobStore: stores.blobStore, retention: { intervalMs: 1 } });
            await capture.start();
            await sleep(30);
            await capture.close();
            expect(calls).to.equal(0);
        });
    });
});
