import * as Code from '@hapi/code';
import { isInboxCaptureError } from '../../lib/errors';
import type { RecordStore } from '../../lib/record-store/record-store';
import type { InboxPosition, InboxQuery, InboxSummary } from '../../lib/types';
import { BASE_TIME, draft } from '../helpers/email-draft';
import type { ContractScript, OpenedRecordStore } from './record-store-contract';

const { expect } = Code;

/** Every inbox of the store, page after page, and the pages' sizes. */
export async function walkInboxes(store: RecordStore, query: Omit<InboxQuery, 'after'>): Promise<{ inboxes: InboxSummary[]; pages: number[] }> {
    const inboxes: InboxSummary[] = [];
    const pages: number[] = [];
    let after: InboxPosition | undefined;
    for (;;) {
        const page = await store.listInboxes({ ...query, ...(after ? { after } : {}) });
        inboxes.push(...page.inboxes);
        pages.push(page.inboxes.length);
        const last = page.inboxes[page.inboxes.length - 1];
        if (!page.hasMore || !last) {
            return { inboxes, pages };
        }

        after = { lastReceivedAt: last.lastReceivedAt, name: last.name };
    }
}

/** The inbox list at the store (docs/api.md, "GET /v1/inboxes"): listInboxes() on the summary the triggers keep, for every record store. */
export function recordStoreInboxesContract(lab: ContractScript, kind: string, open: () => Promise<OpenedRecordStore>): void {
    const { describe, it, before, after } = lab;

    describe(`RecordStore listInboxes() (${kind})`, () => {
        let opened: OpenedRecordStore;
        let store: RecordStore;

        before(async () => {
            opened = await open();
            store = opened.store;
        });

        after(() => opened.cleanup());

        // Each test uses inboxes of its own prefix: the store is shared.
        const save = async (inbox: string, n: number) => (await store.saveEmails([draft(inbox, n)])).saved[0]!;
        const names = (list: InboxSummary[]) => list.map((i) => i.name);

        it('lists each inbox once with its count and newest receivedAt, most recent first, ties by name', async () => {
            await save('order-b', 1);
            await save('order-b', 5);
            await save('order-a', 5);
            await save('order-c', 9);
            await save('order-d', 2);
            const page = await store.listInboxes({ limit: 10, prefix: 'order-' });
            expect(page).to.equal({
                inboxes: [
                    { name: 'order-c', count: 1, lastReceivedAt: BASE_TIME + 9 },
                    { name: 'order-a', count: 1, lastReceivedAt: BASE_TIME + 5 },
                    { name: 'order-b', count: 2, lastReceivedAt: BASE_TIME + 5 },
                    { name: 'order-d', count: 1, lastReceivedAt: BASE_TIME + 2 }
                ],
                hasMore: false
            });
        });

        it('counts every copy of a multi-inbox delivery in its own inbox', async () => {
            await store.saveEmails([draft('multi-x', 3), draft('multi-y', 3), draft('multi-x', 4)]);
            expect((await store.listInboxes({ limit: 10, prefix: 'multi-' })).inboxes).to.equal([
                { name: 'multi-x', count: 2, lastReceivedAt: BASE_TIME + 4 },
                { name: 'multi-y', count: 1, lastReceivedAt: BASE_TIME + 3 }
            ]);
        });

        it('walks every inbox exactly once through the pages, with and without a prefix', async () => {
            // 23 inboxes, receivedAt in pairs so that ties on time cross page boundaries.
            const all = Array.from({ length: 23 }, (_, i) => `walk-${i % 2 ? 'odd' : 'even'}-${String(i).padStart(2, '0')}`);
            await Promise.all(all.map((inbox, i) => save(inbox, Math.floor(i / 2))));
            const expected = [...all].sort((a, b) => {
                const ta = Math.floor(all.indexOf(a) / 2);
                const tb = Math.floor(all.indexOf(b) / 2);
                return tb - ta || (a < b ? -1 : 1);
            });
            const walk = await walkInboxes(store, { limit: 5, prefix: 'walk-' });
            expect(names(walk.inboxes)).to.equal(expected);
            expect(walk.pages).to.equal([5, 5, 5, 5, 3]);

            const odd = await walkInboxes(store, { limit: 4, prefix: 'walk-odd-' });
            expect(names(odd.inboxes)).to.equal(expected.filter((n) => n.startsWith('walk-odd-')));
            expect(odd.pages).to.equal([4, 4, 3]);
        });

        it('says hasMore exactly when another inbox follows', async () => {
            await save('more-a', 1);
            await save('more-b', 2);
            expect((await store.listInboxes({ limit: 2, prefix: 'more-' })).hasMore).to.be.false();
            const first = await store.listInboxes({ limit: 1, prefix: 'more-' });
            expect(first.hasMore).to.be.true();
            expect(names(first.inboxes)).to.equal(['more-b']);
        });

        it('matches a prefix as a prefix, every allowed character literally', async () => {
            for (const inbox of ['pre.x', 'pre_x', 'pre-x', 'prex', 'pre.', 'pre', 'apre.x', 'prf']) {
                await save(inbox, 1);
            }

            expect(names((await store.listInboxes({ limit: 100, prefix: 'pre.' })).inboxes)).to.equal(['pre.', 'pre.x']);
            expect(names((await store.listInboxes({ limit: 100, prefix: 'pre_' })).inboxes)).to.equal(['pre_x']);
            expect(names((await store.listInboxes({ limit: 100, prefix: 'pre' })).inboxes)).to.equal(['pre', 'pre-x', 'pre.', 'pre.x', 'pre_x', 'prex']);
            expect((await store.listInboxes({ limit: 100, prefix: 'prez' })).inboxes).to.equal([]);
        });

        it('follows deletes: the next newest email becomes the inbox\'s time, the last one removes it', async () => {
            const older = await save('del-a', 1);
            const newest = await save('del-a', 7);
            await save('del-b', 4);
            expect((await store.listInboxes({ limit: 10, prefix: 'del-' })).inboxes).to.equal([
                { name: 'del-a', count: 2, lastReceivedAt: BASE_TIME + 7 },
                { name: 'del-b', count: 1, lastReceivedAt: BASE_TIME + 4 }
            ]);

            expect(await store.deleteEmail(newest.messageId)).to.not.be.null();
            expect((await store.listInboxes({ limit: 10, prefix: 'del-' })).inboxes).to.equal([
                { name: 'del-b', count: 1, lastReceivedAt: BASE_TIME + 4 },
                { name: 'del-a', count: 1, lastReceivedAt: BASE_TIME + 1 }
            ]);

            expect(await store.deleteEmail(older.messageId)).to.not.be.null();
            expect(names((await store.listInboxes({ limit: 10, prefix: 'del-' })).inboxes)).to.equal(['del-b']);
        });

        it('keeps the time when an older email is deleted, and follows bulk deletes to the end', async () => {
            const oldest = await save('bulk', 1);
            for (let n = 2; n <= 30; ++n) {
                await save('bulk', n);
            }

            await store.deleteEmail(oldest.messageId);
            expect((await store.listInboxes({ limit: 1, prefix: 'bulk' })).inboxes).to.equal([{ name: 'bulk', count: 29, lastReceivedAt: BASE_TIME + 30 }]);
            expect(await store.deleteInboxBatch('bulk', 25)).to.have.length(25);
            expect((await store.listInboxes({ limit: 1, prefix: 'bulk' })).inboxes).to.equal([{ name: 'bulk', count: 4, lastReceivedAt: BASE_TIME + 30 }]);
            expect(await store.deleteInboxBatch('bulk', 25)).to.have.length(4);
            expect((await store.listInboxes({ limit: 1, prefix: 'bulk' })).inboxes).to.equal([]);
        });

        it('counts a replaced copy once and takes the replacement\'s time', async () => {
            const first = draft('resend', 3);
            await store.saveEmails([first]);
            await store.saveEmails([{ ...first, receivedAt: BASE_TIME + 8 }]);
            expect((await store.listInboxes({ limit: 1, prefix: 'resend' })).inboxes).to.equal([{ name: 'resend', count: 1, lastReceivedAt: BASE_TIME + 8 }]);
        });

        it('refuses a limit that is no positive integer and a prefix no inbox could start with', async () => {
            for (const query of [{ limit: 0 }, { limit: 1.5 }, { limit: 1, prefix: 'A' }, { limit: 1, prefix: 'a%' }, { limit: 1, prefix: 'a'.repeat(65) }]) {
                const err = await expect(store.listInboxes(query)).to.reject();
                expect(isInboxCaptureError(err, 'INVALID_INPUT'), JSON.stringify(query)).to.be.true();
            }
        });
    });
}
