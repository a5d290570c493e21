import { randomBytes } from 'node:crypto';
import * as Code from '@hapi/code';
import { isInboxCaptureError } from '../../lib/errors';
import { linksAndCodesOf } from '../../lib/extract/links-and-codes';
import type { RecordStore } from '../../lib/record-store/record-store';
import { SEARCH_WINDOW } from '../../lib/record-store/sql/search-page';
import { parseSearchQuery } from '../../lib/search/parse-query';
import type { EmailDraft, EmailRecord, ListQuery } from '../../lib/types';
import { BASE_TIME, draft } from '../helpers/email-draft';
import { SEARCH_CASES, SEARCH_MAILS, type SearchMail } from '../helpers/search-cases';
import type { ContractScript, OpenedRecordStore } from './record-store-contract';

const { expect } = Code;

let counter = 0;

function newInbox(prefix: string): string {
    return `${prefix}${++counter}-${randomBytes(4).toString('hex')}`;
}

/** The draft ingest would make of a mail of the query table. */
function tableDraft(inbox: string, mail: SearchMail, t0: number): EmailDraft {
    const named = /^(.*) <(.*)>$/.exec(mail.from);
    const attachments = (mail.attachments ?? []).map((a, i) => ({ filename: `${i}-${a.filename}`, contentType: a.contentType, size: a.bytes, blobKey: `att-${mail.key}-${inbox}` }));
    // Links and codes as ingest works them out (a store keeps what it is given).
    const text = { subject: mail.subject, body: mail.text, htmlBody: mail.html ?? '' };
    return draft(inbox, 0, {
        ...linksAndCodesOf(text),
        sourceId: `${mail.key}-${inbox}@search.test`,
        sender: named ? named[2]! : mail.from,
        senderName: named ? named[1]! : '',
        subject: mail.subject,
        body: mail.text,
        htmlBody: mail.html ?? '',
        receivedAt: t0 + mail.offset,
        rawSize: 1000 + attachments.reduce((sum, a) => sum + a.size, 0),
        attachments,
        tags: mail.tags ?? []
    });
}

/** Saves each draft as a delivery of its own (one delivery of several drafts derives their ids), all at once. */
async function saveEach(store: RecordStore, drafts: EmailDraft[]): Promise<EmailRecord[]> {
    return (await Promise.all(drafts.map((d) => store.saveEmails([d])))).map((r) => r.saved[0]!);
}

/** Every record of a search, page after page of `limit`. */
export async function searchAll(store: RecordStore, inbox: string, q: string, limit = 100): Promise<EmailRecord[]> {
    const records: EmailRecord[] = [];
    let after: ListQuery['after'];
    for (;;) {
        // '' is no search at all (the API refuses it as `q`; the store takes no terms).
        const page = await store.listEmails({ inbox, limit, q: q === '' ? [] : parseSearchQuery(q), ...(after ? { after } : {}) });
        records.push(...page.records);
        const last = page.records[page.records.length - 1];
        if (!page.hasMore || !last) {
            return records;
        }

        after = { receivedAt: last.receivedAt, messageId: last.messageId };
    }
}

/** `q` at the store (the search language, lib/search/): the query table, pages, the index's way in, and every write the index must follow. */
export function recordStoreSearchContract(lab: ContractScript, kind: string, open: () => Promise<OpenedRecordStore>): void {
    const { describe, it, before, after } = lab;

    describe(`RecordStore search (${kind})`, () => {
        let opened: OpenedRecordStore;
        let store: RecordStore;

        before(async () => {
            opened = await open();
            store = opened.store;
        });

        after(() => opened.cleanup());

        const search = async (inbox: string, q: string, limit = 100) => (await searchAll(store, inbox, q, limit)).map((r) => r.messageId);

        describe('the query table', () => {
            const inbox = newInbox('table');
            const t0 = BASE_TIME + 1_000_000;
            const idOf = (key: string) => `${key}-${inbox}@search.test`;

            before(async () => {
                await saveEach(store, SEARCH_MAILS.map((mail) => tableDraft(inbox, mail, t0)));
                // Mail of another inbox that matches everything must never show.
                const other = newInbox('table-other');
                await saveEach(store, SEARCH_MAILS.map((mail) => tableDraft(other, mail, t0)));
            });

            for (const [query, keys] of SEARCH_CASES) {
                const shown = typeof query === 'string' ? query : query.toString();
                it(`finds ${JSON.stringify(keys)} for ${shown}`, async () => {
                    const q = typeof query === 'string' ? query : query(t0, inbox);
                    expect(await search(inbox, q)).to.equal(keys.map(idOf));
                    // Page by page, one at a time, the same answer.
                    expect(await search(inbox, q, 1)).to.equal(keys.map(idOf));
                });
            }

            it('combines q with the other filters by AND', async () => {
                const page = await store.listEmails({ inbox, limit: 10, q: parseSearchQuery('has:attachment'), sender: 'bank', receivedAfter: t0 });
                expect(page.records.map((r) => r.messageId)).to.equal([idOf('code')]);
            });

            it('keeps the page byte budget', async () => {
                const page = await store.listEmails({ inbox, limit: 10, q: parseSearchQuery('-welcome'), maxBytes: 1 });
                expect(page.records.map((r) => r.messageId)).to.equal([idOf('quote')]);
                expect(page.hasMore).to.be.true();
            });

            it('reads the tags and sender name back', async () => {
                const [order] = (await store.listEmails({ inbox, limit: 1, q: parseSearchQuery('tag:shop') })).records;
                expect(order).to.include({ tags: ['orders', 'shop'], senderName: 'Shop Newsletter', sender: 'orders@shop.example' });
            });
        });

        describe('past the newest emails', () => {
            const inbox = newInbox('window');
            const older = Array.from({ length: 3 }, (_, i) => `older-${i}-${inbox}@search.test`);
            const newest = `newest-${inbox}@search.test`;

            before(async () => {
                // Three matches older than SEARCH_WINDOW others, and one among the newest.
                // The last of them sent by a display name no other email holds.
                const drafts: EmailDraft[] = older.map((id, i) => draft(inbox, i, { sourceId: id, body: `the needle xq${i} is here`, ...(i === 2 ? { senderName: 'Xylo Quartzmann' } : {}) }));
                for (let i = 0; i < SEARCH_WINDOW + 100; i++) {
                    drafts.push(draft(inbox, 10 + i, { sourceId: `hay-${i}-${inbox}@search.test`, body: `hay ${i} and more hay` }));
                }

                drafts.push(draft(inbox, SEARCH_WINDOW + 200, { sourceId: newest, body: 'a needle xq9 too' }));
                await saveEach(store, drafts);
            });

            it('finds them all, page after page', async () => {
                const expected = [newest, ...[...older].reverse()];
                expect(await search(inbox, 'needle')).to.equal(expected);
                expect(await search(inbox, 'needle', 1)).to.equal(expected);
                expect(await search(inbox, 'body:"needle xq"', 2)).to.equal(expected);
            });

            it('finds one only the oldest holds', async () => {
                expect(await search(inbox, 'xq0')).to.equal([older[0]]);
                expect(await search(inbox, 'needle xq1')).to.equal([older[1]]);
            });

            it('finds one only the oldest holds by its sender\'s display name', async () => {
                expect(await search(inbox, 'from:"xylo quartz"')).to.equal([older[2]]);
                expect(await search(inbox, 'QUARTZMANN needle')).to.equal([older[2]]);
            });

            it('finds what the index cannot narrow: a term of two characters, a negation', async () => {
                expect(await search(inbox, 'q1')).to.equal([older[1]]);
                expect(await search(inbox, '-hay', 3)).to.equal([newest, ...[...older].reverse()]);
            });

            it('answers none past the window as it answers none within it', async () => {
                expect(await search(inbox, 'needle xq7')).to.equal([]);
            });

            it('deletes by search, in batches, only what matches', async () => {
                const copy = newInbox('window-delete');
                await saveEach(store, Array.from({ length: 60 }, (_, i) => draft(copy, i, { body: i % 3 === 0 ? 'remove me' : 'keep me' })));
                let deleted = 0;
                for (;;) {
                    const batch = await store.deleteInboxBatch(copy, 7, parseSearchQuery('body:remove'));
                    if (batch.length === 0) {
                        break;
                    }

                    expect(batch.every((r) => r.body === 'remove me')).to.be.true();
                    deleted += batch.length;
                }

                expect(deleted).to.equal(20);
                expect(await search(copy, '')).to.have.length(40);
                expect(await search(copy, 'remove')).to.equal([]);
            });
        });

        describe('the index follows every write', () => {
            it('finds a replaced copy by its new text only', async () => {
                const inbox = newInbox('replace');
                const first = draft(inbox, 1, { body: 'first version alpha7' });
                const [stored] = (await store.saveEmails([first])).saved;
                expect(await search(inbox, 'alpha7')).to.equal([stored!.messageId]);
                await store.saveEmails([{ ...draft(inbox, 2, { body: 'second version beta7' }), sourceId: first.sourceId }]);
                expect(await search(inbox, 'alpha7')).to.equal([]);
                expect(await search(inbox, 'beta7')).to.equal([stored!.messageId]);
            });

            it('forgets a deleted email', async () => {
                const inbox = newInbox('delete');
                const [stored] = (await store.saveEmails([draft(inbox, 1, { body: 'gamma7 text' })])).saved;
                expect(await store.deleteEmail(stored!.messageId)).to.exist();
                expect(await search(inbox, 'gamma7')).to.equal([]);
                // A new email with the same text is found, and only it.
                const [again] = (await store.saveEmails([draft(inbox, 2, { body: 'gamma7 text' })])).saved;
                expect(await search(inbox, 'gamma7')).to.equal([again!.messageId]);
            });

            it('forgets what the retention passes delete', async () => {
                const inbox = newInbox('retention');
                const t0 = BASE_TIME - 10_000_000;
                const saved = await saveEach(store, Array.from({ length: 4 }, (_, i) => draft(inbox, i, { body: `delta7 ${i}`, receivedAt: t0 + i })));
                // Oldest first, the first one by age.
                let removed = await store.deleteReceivedBeforeBatch(t0 + 1, 10);
                expect(removed.map((r) => r.messageId)).to.equal([saved[0]!.messageId]);
                removed = await store.deleteBeyondNewestBatch(inbox, 2, 10);
                expect(removed.map((r) => r.messageId)).to.equal([saved[1]!.messageId]);
                expect(await search(inbox, 'delta7')).to.equal([saved[3]!.messageId, saved[2]!.messageId]);
            });

            it('forgets an emptied inbox', async () => {
                const inbox = newInbox('empty');
                await saveEach(store, [draft(inbox, 1, { body: 'epsilon7' }), draft(inbox, 2, { body: 'epsilon7' })]);
                while ((await store.deleteInboxBatch(inbox, 1)).length > 0) {
                    // One at a time.
                }

                expect(await search(inbox, 'epsilon7')).to.equal([]);
            });
        });

        describe('setTags()', () => {
            it('replaces the tags, answers the record, and tag: follows', async () => {
                const inbox = newInbox('tags');
                const [stored] = (await store.saveEmails([draft(inbox, 1, { tags: ['old'] })])).saved;
                const updated = await store.setTags(stored!.messageId, ['new', 'b.c_d-1']);
                expect(updated).to.equal({ ...stored!, tags: ['new', 'b.c_d-1'] });
                expect(await store.getEmail(stored!.messageId)).to.equal(updated);
                expect(await search(inbox, 'tag:old')).to.equal([]);
                expect(await search(inbox, 'tag:b.c_d-1')).to.equal([stored!.messageId]);
                expect((await store.setTags(stored!.messageId, []))?.tags).to.equal([]);
                expect(await search(inbox, 'tag:new')).to.equal([]);
            });

            it('keeps each tag once', async () => {
                const [stored] = (await store.saveEmails([draft(newInbox('tags-once'), 1)])).saved;
                expect((await store.setTags(stored!.messageId, ['a', 'b', 'a']))?.tags).to.equal(['a', 'b']);
            });

            it('leaves the version and the order alone', async () => {
                const inbox = newInbox('tags-version');
                const [stored] = (await store.saveEmails([draft(inbox, 1)])).saved;
                const version = await store.inboxVersion(inbox);
                await store.setTags(stored!.messageId, ['x']);
                expect(await store.inboxVersion(inbox)).to.equal(version);
            });

            it('answers null for an unknown email', async () => {
                expect(await store.setTags(`nope-${randomBytes(4).toString('hex')}@x`, ['a'])).to.be.null();
            });

            it('with inboxPrefix, changes an email of an inbox inside it and leaves one outside as it was (null)', async () => {
                const inbox = newInbox('tags-prefix');
                const [stored] = (await store.saveEmails([draft(inbox, 1, { tags: ['old'] })])).saved;
                expect(await store.setTags(stored!.messageId, ['new'], { inboxPrefix: `${inbox}-other` })).to.be.null();
                expect((await store.getEmail(stored!.messageId))?.tags).to.equal(['old']);
                expect((await store.setTags(stored!.messageId, ['new'], { inboxPrefix: inbox.slice(0, 4) }))?.tags).to.equal(['new']);
                expect((await store.setTags(stored!.messageId, ['newer'], { inboxPrefix: null }))?.tags).to.equal(['newer']);
            });

            for (const [name, tags] of [['an uppercase tag', ['Ok']], ['a tag with a space', ['a b']], ['a tag of 33 characters', ['x'.repeat(33)]], ['21 tags', Array.from({ length: 21 }, (_, i) => `t${i}`)]] as const) {
                it(`refuses ${name} with INVALID_INPUT`, async () => {
                    const [stored] = (await store.saveEmails([draft(newInbox('tags-bad'), 1)])).saved;
                    const err = await expect(store.setTags(stored!.messageId, [...tags])).to.reject();
                    expect(isInboxCaptureError(err, 'INVALID_INPUT')).to.be.true();
                    expect((await store.getEmail(stored!.messageId))?.tags).to.equal([]);
                });
            }

            it('keeps only valid tags of a draft', async () => {
                const [stored] = (await store.saveEmails([draft(newInbox('tags-draft'), 1, { tags: ['ok', 'Not ok', 'ok'] })])).saved;
                expect(stored!.tags).to.equal(['ok']);
                expect((await store.getEmail(stored!.messageId))?.tags).to.equal(['ok']);
            });
        });
    });
}
