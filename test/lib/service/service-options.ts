import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { BlobStore } from '../../../lib/blob-store/blob-store';
import { isInboxCaptureError } from '../../../lib/errors';
import { defaultInboxFromAddress } from '../../../lib/identity/recipients';
import type { RecordStore } from '../../../lib/record-store/record-store';
import {
    DEFAULT_BLOB_STORE_TIMEOUT_MS, DEFAULT_DOWNLOAD_TTL_SECONDS, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MESSAGE_BUDGET_BYTES,
    DEFAULT_RETENTION_INTERVAL_MS
} from '../../../lib/defaults';
import { createInboxCapture } from '../../../lib/service/inbox-capture';
import { resolveServiceOptions, type InboxCaptureOptions } from '../../../lib/service/service-options';
import { buildMail } from '../../helpers/mail';
import { sqliteFsStores } from '../../helpers/test-stores';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

// Stand-ins: resolving the options touches no store.
const stores = { recordStore: {} as RecordStore, blobStore: {} as BlobStore };

describe('service-options', () => {

    describe('resolveServiceOptions()', () => {

        it('applies every default of defaults.ts', () => {
            const settings = resolveServiceOptions({ ...stores, retention: { maxAgeMs: 60_000 } });
            expect(settings.maxMessageBytes).to.equal(DEFAULT_MAX_MESSAGE_BYTES);
            expect(settings.maxMessageBytesInFlight).to.equal(DEFAULT_MESSAGE_BUDGET_BYTES);
            expect(settings.blobStoreTimeoutMs).to.equal(DEFAULT_BLOB_STORE_TIMEOUT_MS);
            expect(settings.downloadTtlSeconds).to.equal(DEFAULT_DOWNLOAD_TTL_SECONDS);
            expect(settings.inboxFromAddress).to.shallow.equal(defaultInboxFromAddress);
            expect(settings.retention).to.equal({ maxAgeMs: 60_000, maxPerInbox: undefined, intervalMs: DEFAULT_RETENTION_INTERVAL_MS });
            expect(settings.orphanSweep).to.be.undefined();
        });

        it('keeps what the caller gave', () => {
            const inboxFromAddress = () => 'one';
            const settings = resolveServiceOptions({
                ...stores,
                maxMessageBytes: 1024,
                maxMessageBytesInFlight: 4096,
                blobStoreTimeoutMs: 5,
                downloadTtlSeconds: 60,
                inboxFromAddress,
                retention: { maxPerInbox: 3, intervalMs: 1000 },
                orphanSweep: { intervalMs: 10, graceMs: 0 }
            });
            expect(settings).to.include({ maxMessageBytes: 1024, maxMessageBytesInFlight: 4096, blobStoreTimeoutMs: 5, downloadTtlSeconds: 60 });
            expect(settings.inboxFromAddress).to.shallow.equal(inboxFromAddress);
            expect(settings.retention).to.equal({ maxAgeMs: undefined, maxPerInbox: 3, intervalMs: 1000 });
            expect(settings.orphanSweep).to.equal({ intervalMs: 10, graceMs: 0 });
        });

        const WRONG: Array<[string, Partial<InboxCaptureOptions>, RegExp]> = [
            ['a maxMessageBytes of 0', { maxMessageBytes: 0 }, /maxMessageBytes must be a positive integer, not 0/],
            ['a fractional maxMessageBytesInFlight', { maxMessageBytesInFlight: 1.5 }, /maxMessageBytesInFlight must be a positive integer/],
            ['a maxMessageBytes as a string', { maxMessageBytes: '1000' as never }, /maxMessageBytes must be a positive integer/],
            ['a negative blobStoreTimeoutMs', { blobStoreTimeoutMs: -1 }, /blobStoreTimeoutMs must be a positive integer/],
            ['an infinite downloadTtlSeconds', { downloadTtlSeconds: Infinity }, /downloadTtlSeconds must be a positive integer/],
            ['a retention interval of 0', { retention: { maxAgeMs: 1000, intervalMs: 0 } }, /retention.intervalMs must be a positive integer/],
            ['an orphan sweep without an interval', { orphanSweep: {} as never }, /orphanSweep.intervalMs must be a positive integer/],
            ['a negative orphan grace', { orphanSweep: { intervalMs: 10, graceMs: -1 } }, /orphanSweep.graceMs must be a non-negative integer/],
            ['an inboxFromAddress that is no function', { inboxFromAddress: 'x' as never }, /inboxFromAddress must be a function/],
            ['no record store', { recordStore: undefined }, /recordStore is required/]
        ];

        for (const [name, options, message] of WRONG) {
            it(`refuses ${name} with a TypeError naming it`, () => {
                expect(() => resolveServiceOptions({ ...stores, ...options } as InboxCaptureOptions)).to.throw(TypeError, message);
                expect(() => createInboxCapture({ ...stores, ...options } as InboxCaptureOptions)).to.throw(TypeError, message);
            });
        }
    });

    describe('the settings through createInboxCapture()', () => {

        it('gives each service a memory budget of its own, of maxMessageBytesInFlight or the default size', () => {
            const one = createInboxCapture(stores);
            const two = createInboxCapture(stores);
            const small = createInboxCapture({ ...stores, maxMessageBytesInFlight: 4096 });
            expect(one.messageBudget.limitBytes).to.equal(DEFAULT_MESSAGE_BUDGET_BYTES);
            // No process-wide budget: two services in one process count their own bytes.
            expect(one.messageBudget).to.not.shallow.equal(two.messageBudget);
            expect(small.messageBudget.limitBytes).to.equal(4096);
            expect(one.maxMessageBytes).to.equal(DEFAULT_MAX_MESSAGE_BYTES);
        });

        it('ingests within its own cap and budget', async () => {
            const real = await sqliteFsStores().create();
            // cleanup() closes the record store: the service's close() leaves it open.
            const recordStore: RecordStore = { ...real.recordStore, close: () => Promise.resolve() };
            const capture = createInboxCapture({ recordStore, blobStore: real.blobStore, maxMessageBytes: 2048, maxMessageBytesInFlight: 4096 });
            try {
                await capture.start();
                const tooLarge = await expect(capture.ingestRawEmail(buildMail({ to: 'cap@test.example', text: 'x'.repeat(4096) }))).to.reject();
                expect(isInboxCaptureError(tooLarge, 'TOO_LARGE')).to.be.true();
                const held = capture.messageBudget.reserve(4000)!;
                const busy = await expect(capture.ingestRawEmail(buildMail({ to: 'cap@test.example', text: 'x'.repeat(500) }))).to.reject();
                expect(isInboxCaptureError(busy, 'BUSY')).to.be.true();
                held.release();
                const [stored] = await capture.ingestRawEmail(buildMail({ to: 'cap@test.example', subject: 'fits' }));
                expect(stored!.subject).to.equal('fits');
                expect(capture.messageBudget.heldBytes).to.equal(0);
            }
            finally {
                await capture.close();
                await real.cleanup();
            }
        });
    });
});
