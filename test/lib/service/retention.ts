import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { BlobStore } from '../../../lib/blob-store/blob-store';
import { createInboxCapture, DELETE_BATCH_SIZE, type InboxCapture } from '../../../lib/service/inbox-capture';
import type { RecordStore } from '../../../lib/record-store/record-store';
import type { EmailDraft, EmailRecord } from '../../../lib/types';
import { blobKeys } from '../../helpers/blob-contents';
import { BASE_TIME, draft } from '../../helpers/email-draft';
import { buildMail } from '../../helpers/mail';
import { postgresS3Stores, sqliteFsStores, type TestStores } from '../../helpers/test-stores';

const { expect } = Code;
const { describe, it, before, after, beforeEach, afterEach } = exports.lab = Lab.script();

const HOUR = 3_600_000;

/** Ingests one message with an attachment into `inbox`, received at `receivedAt`. */
async function ingestAt(capture: InboxCapture, inbox: string, receivedAt: number, subject = 'hello'): Promise<EmailRecord> {
    const raw = buildMail({ to: `${inbox}@test.example`, subject, attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: subject }] });
    const [record] = await capture.ingestRawEmail(raw, { receivedAt });
    return record!;
}

/** The keys of a record's blobs. */
const keysOf = (record: EmailRecord) => [record.rawKey, ...record.attachments.map((a) => a.blobKey)];

/** Stores drafts straight through the record store (no blobs), 50 per save. */
async function saveDrafts(store: RecordStore, drafts: EmailDraft[]): Promise<void> {
    for (let i = 0; i < drafts.length; i += 50) {
        await store.saveEmails(drafts.slice(i, i + 50));
    }
}

/** The subjects an inbox lists, newest first. */
async function subjects(capture: InboxCapture, inbox: string): Promise<string[]> {
    const page = await capture.listEmails({ inbox, limit: 100 });
    return page.records.map((r) => r.subject);
}

describe('retention', () => {

    for (const factory of [sqliteFsStores(), postgresS3Stores()]) {

        describe(`runRetentionPass() through InboxCapture.pruneEmails() on ${factory.name}`, () => {
            let release: () => Promise<void>;
            let stores: TestStores;
            let capture: InboxCapture;
            // Batch sizes the record store answered, and for each blob delete whether a record still referenced its keys.
            let batches: number[];
            let blobDeletes: Array<{ keys: string[]; referenced: number }>;

            before(async () => {
                release = await factory.hold?.() ?? (() => Promise.resolve());
            });

            after(async () => {
                await release();
            });

            beforeEach(async () => {
                stores = await factory.create();
                await stores.recordStore.migrate();
                batches = [];
                blobDeletes = [];
                const real = stores.recordStore;
                const recordStore: RecordStore = {
                    ...real,
                    async deleteReceivedBeforeBatch(before, size) {
                        const batch = await real.deleteReceivedBeforeBatch(before, size);
                        batches.push(batch.length);
                        return batch;
                    },
                    async deleteBeyondNewestBatch(inbox, keep, size) {
                        const batch = await real.deleteBeyondNewestBatch(inbox, keep, size);
                        batches.push(batch.length);
                        return batch;
                    }
                };
                const blobStore: BlobStore = {
                    ...stores.blobStore,
                    async delete(keys) {
                        blobDeletes.push({ keys, referenced: (await real.referencedBlobKeys(keys)).size });
                        await stores.blobStore.delete(keys);
                    }
                };
                capture = createInboxCapture({ recordStore, blobStore });
            });

            afterEach(async () => {
                await stores.cleanup();
            });

            it('deletes the emails older than maxAgeMs, keeps the one exactly that old, and removes their blobs after them', async () => {
                const t = BASE_TIME;
                const old = await ingestAt(capture, 'ages', t - 1, 'older');
                const edge = await ingestAt(capture, 'ages', t, 'exactly max age');
                const young = await ingestAt(capture, 'other', t + 1, 'younger');

                expect(await capture.pruneEmails({ maxAgeMs: HOUR }, { now: t + HOUR })).to.equal(1);
                expect(await capture.getEmail(old.messageId)).to.be.null();
                expect(await subjects(capture, 'ages')).to.equal(['exactly max age']);
                expect(await subjects(capture, 'other')).to.equal(['younger']);
                expect(await blobKeys(stores.blobStore)).to.equal([...keysOf(edge), ...keysOf(young)].sort());
                expect(blobDeletes).to.equal([{ keys: keysOf(old), referenced: 0 }]);

                // One ms later the edge is past the maximum age too.
                expect(await capture.pruneEmails({ maxAgeMs: HOUR }, { now: t + HOUR + 1 })).to.equal(1);
                expect(await subjects(capture, 'ages')).to.equal([]);
                expect((await capture.listInboxes({ limit: 10 })).inboxes.map((i) => [i.name, i.count])).to.equal([['other', 1]]);
            });

            it('keeps the newest maxPerInbox of each inbox in the list\'s order (ties by messageId), and only touches inboxes over it', async () => {
                const t = BASE_TIME;
                // Five in `busy`, two of them sharing the newest instant: the list orders those by messageId, descending.
                const drafts = [
                    draft('busy', 0, { subject: 'b0', receivedAt: t }),
                    draft('busy', 1, { subject: 'b1', receivedAt: t + 1 }),
                    draft('busy', 2, { subject: 'b2', receivedAt: t + 2 }),
                    draft('busy', 3, { subject: 'tie-a', receivedAt: t + 3, sourceId: 'tie-a@x' }),
                    draft('busy', 4, { subject: 'tie-b', receivedAt: t + 3, sourceId: 'tie-b@x' }),
                    draft('calm', 0, { subject: 'c0', receivedAt: t }),
                    draft('calm', 1, { subject: 'c1', receivedAt: t + 1 }),
                    draft('full', 0, { subject: 'f0', receivedAt: t }),
                    draft('full', 1, { subject: 'f1', receivedAt: t + 1 }),
                    draft('full', 2, { subject: 'f2', receivedAt: t + 2 })
                ];
                await saveDrafts(stores.recordStore, drafts);
                const before = await subjects(capture, 'busy');
                expect(before).to.equal(['tie-b', 'tie-a', 'b2', 'b1', 'b0']);

                expect(await capture.pruneEmails({ maxPerInbox: 3 })).to.equal(2);
                expect(await subjects(capture, 'busy')).to.equal(before.slice(0, 3));
                expect(await subjects(capture, 'calm')).to.equal(['c1', 'c0']);
                expect(await subjects(capture, 'full')).to.equal(['f2', 'f1', 'f0']);

                expect(await capture.pruneEmails({ maxPerInbox: 1 })).to.equal(5);
                expect(await subjects(capture, 'busy')).to.equal(['tie-b']);
                expect(await subjects(capture, 'calm')).to.equal(['c1']);
                expect(await subjects(capture, 'full')).to.equal(['f2']);
                expect((await capture.listInboxes({ limit: 10 })).inboxes.map((i) => i.count)).to.equal([1, 1, 1]);

                // Nothing over the maximum: a pass deletes nothing.
                expect(await capture.pruneEmails({ maxPerInbox: 1 })).to.equal(0);
            });

            it('applies both rules in one pass, the age first, counting each email once', async () => {
                const t = BASE_TIME;
                await saveDrafts(stores.recordStore, [
                    ...Array.from({ length: 4 }, (_, n) => draft('mixed', n, { subject: `old${n}`, receivedAt: t - HOUR - 1 - n })),
                    ...Array.from({ length: 4 }, (_, n) => draft('mixed', n + 4, { subject: `new${n}`, receivedAt: t + n }))
                ]);

                expect(await capture.pruneEmails({ maxAgeMs: HOUR, maxPerInbox: 3 }, { now: t })).to.equal(5);
                expect(await subjects(capture, 'mixed')).to.equal(['new3', 'new2', 'new1']);
            });

            it(`deletes in batches of ${DELETE_BATCH_SIZE}, each batch's blobs once its records are gone`, async () => {
                const t = BASE_TIME;
                const records: EmailRecord[] = [];
                for (let n = 0; n < 30; ++n) {
                    records.push(await ingestAt(capture, `box${n % 2}`, t + n, `m${n}`));
                }

                expect(await capture.pruneEmails({ maxAgeMs: HOUR }, { now: t + HOUR + 30 })).to.equal(30);
                expect(batches).to.equal([25, 5, 0]);
                expect(blobDeletes.map((d) => d.keys.length)).to.equal([50, 10]);
                expect(blobDeletes.every((d) => d.referenced === 0)).to.be.true();
                expect(await blobKeys(stores.blobStore)).to.equal([]);

                batches = [];
                await saveDrafts(stores.recordStore, Array.from({ length: 60 }, (_, n) => draft('many', n)));
                expect(await capture.pruneEmails({ maxPerInbox: 8 })).to.equal(52);
                expect(batches).to.equal([25, 25, 2, 0]);
                expect((await capture.listInboxes({ limit: 10 })).inboxes.map((i) => i.count)).to.equal([8]);
            });

            it('ends after the batch under way when its signal aborts, counting what went', async () => {
                await saveDrafts(stores.recordStore, Array.from({ length: 100 }, (_, n) => draft('long', n)));
                const controller = new AbortController();
                const aborting: RecordStore = {
                    ...stores.recordStore,
                    async deleteReceivedBeforeBatch(before, size) {
                        controller.abort();
                        return stores.recordStore.deleteReceivedBeforeBatch(before, size);
                    }
                };
                const service = createInboxCapture({ recordStore: aborting, blobStore: stores.blobStore });
                expect(await service.pruneEmails({ maxAgeMs: HOUR }, { signal: controller.signal })).to.equal(25);
                expect((await capture.listInboxes({ limit: 10 })).inboxes.map((i) => i.count)).to.equal([75]);
                // Aborted before it starts: nothing.
                expect(await capture.pruneEmails({ maxAgeMs: HOUR, maxPerInbox: 1 }, { signal: controller.signal })).to.equal(0);
            });

            it('leaves lists and long-polls of the emails it keeps as they were', async () => {
                const t = BASE_TIME;
                await saveDrafts(stores.recordStore, [
                    ...Array.from({ length: 120 }, (_, n) => draft('stale', n, { receivedAt: t - HOUR - 1 - n })),
                    ...Array.from({ length: 30 }, (_, n) => draft('kept', n, { subject: `k${n}`, receivedAt: t + n }))
                ]);
                const kept = await capture.listEmails({ inbox: 'kept', limit: 20 });
                const waiting = capture.waitForEmails({ inbox: 'fresh', limit: 10 }, { timeoutMs: 60_000 });

                const lists: Promise<string[]>[] = [];
                const pass = capture.pruneEmails({ maxAgeMs: HOUR }, { now: t });
                for (let i = 0; i < 5; ++i) {
                    lists.push(capture.listEmails({ inbox: 'kept', limit: 20 }).then((page) => page.records.map((r) => r.messageId)));
                }

                expect(await pass).to.equal(120);
                for (const list of await Promise.all(lists)) {
                    expect(list).to.equal(kept.records.map((r) => r.messageId));
                }

                // The deletes woke nobody: the long-poll answers the next email stored.
                const fresh = await ingestAt(capture, 'fresh', t + 100);
                const page = await waiting;
                expect(page.records.map((r) => r.messageId)).to.equal([fresh.messageId]);
                const second = await capture.listEmails({ inbox: 'kept', limit: 20, after: { receivedAt: kept.records[19]!.receivedAt, messageId: kept.records[19]!.messageId } });
                expect(second.records).to.have.length(10);
            });
        });
    }

    describe('two services sweeping one Postgres at once', () => {
        const factory = postgresS3Stores();
        let stores: TestStores;

        before(async () => {
            stores = await factory.create();
            await stores.recordStore.migrate();
        });

        after(async () => {
            await stores.cleanup();
        });

        it('deletes each email once: the two counts add up to what went, and what stays is exact', async () => {
            const t = BASE_TIME;
            const inboxes = ['p0', 'p1', 'p2', 'p3'];
            // Per inbox: 100 past the maximum age and 60 young ones, of which the newest 10 stay.
            await saveDrafts(stores.recordStore, inboxes.flatMap((inbox) => [
                ...Array.from({ length: 100 }, (_, n) => draft(inbox, n, { receivedAt: t - HOUR - 1 - n })),
                ...Array.from({ length: 60 }, (_, n) => draft(inbox, 100 + n, { subject: `y${n}`, receivedAt: t + n }))
            ]));
            const other = await stores.connectAgain();
            const a = createInboxCapture({ recordStore: stores.recordStore, blobStore: stores.blobStore });
            const b = createInboxCapture({ recordStore: other.recordStore, blobStore: other.blobStore });
            try {
                const policy = { maxAgeMs: HOUR, maxPerInbox: 10 };
                const counts = await Promise.all([a.pruneEmails(policy, { now: t }), b.pruneEmails(policy, { now: t }), a.pruneEmails(policy, { now: t })]);
                expect(counts[0] + counts[1] + counts[2]).to.equal(4 * 150);
                for (const inbox of inboxes) {
                    expect(await subjects(a, inbox)).to.equal(Array.from({ length: 10 }, (_, n) => `y${59 - n}`));
                }

                expect((await a.listInboxes({ limit: 10 })).inboxes.map((i) => i.count)).to.equal([10, 10, 10, 10]);
            }
            finally {
                await other.close();
            }
        });
    });
});
