import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { toEmailPage } from '../../../adapters/hapi/email-view';
import { serialiseEmailPage, SLICE_CHARS, toJsonChunks } from '../../../adapters/hapi/list-page-body';
import type { EmailRecord } from '../../../lib/types';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

function record(n: number, body: string): EmailRecord {
    return {
        messageId: `m${n}@x`, sourceId: `m${n}@x`, inbox: 'box', sender: 's@x', recipient: 'box@x', subject: `s${n}`,
        body, htmlBody: '', receivedAt: 1_750_000_000_000 - n, rawKey: `k${n}`, rawSize: 1, attachments: [], links: [], codes: [], tags: [], senderName: ''
    };
}

const bytesOf = (chunks: Buffer[]) => Buffer.concat(chunks);

describe('list-page-body', () => {
    describe('await serialiseEmailPage()', () => {
        it('serialises the whole page as toEmailPage() would when it fits', async () => {
            const records = { records: [record(1, 'a'), record(2, 'é\u0000"')], hasMore: true };
            const { page, chunks } = await serialiseEmailPage(records, '/mail', 1_000_000);
            expect(page).to.equal(toEmailPage(records, '/mail'));
            expect(JSON.parse(bytesOf(chunks).toString())).to.equal(page);
            // One chunk per email (and commas): never one string of the whole page.
            expect(chunks.length).to.equal(5);
        });

        it('ends the page at the last email that keeps the JSON within the budget', async () => {
            const records = { records: [1, 2, 3, 4].map((n) => record(n, 'x'.repeat(1000))), hasMore: false };
            const whole = bytesOf((await serialiseEmailPage(records, '', 1_000_000)).chunks).length;
            for (const budget of [2400, 3300, whole - 1]) {
                const { page, chunks } = await serialiseEmailPage(records, '', budget);
                const sent = bytesOf(chunks);
                expect(sent.length).to.be.at.most(budget);
                expect(JSON.parse(sent.toString())).to.equal(page);
                expect(page.hasMore).to.be.true();
                expect(page.nextCursor).to.equal(`${page.emails.at(-1)!.receivedAt}#${page.emails.at(-1)!.messageId}`);
                // One more email would not have fitted.
                const more = await serialiseEmailPage({ records: records.records.slice(0, page.emails.length + 1), hasMore: false }, '', 1_000_000);
                expect(bytesOf(more.chunks).length).to.be.above(budget);
            }

            expect((await serialiseEmailPage(records, '', whole)).page.emails).to.have.length(4);
        });

        it('sends the first email even when it alone is larger than the budget', async () => {
            const { page, chunks } = await serialiseEmailPage({ records: [record(1, 'x'.repeat(5000)), record(2, 'y')], hasMore: false }, '', 100);
            expect(page.emails.map((e) => e.messageId)).to.equal(['m1@x']);
            expect(page.hasMore).to.be.true();
            expect(JSON.parse(bytesOf(chunks).toString())).to.equal(page);
        });

        it('answers an empty page', async () => {
            const { page, chunks } = await serialiseEmailPage({ records: [], hasMore: false }, '', 10);
            expect(bytesOf(chunks).toString()).to.equal('{"emails":[],"hasMore":false}');
            expect(page).to.equal({ emails: [], hasMore: false });
        });
    });

    describe('toJsonChunks()', () => {
        it('equals JSON.stringify, slicing long strings without splitting escapes or surrogate pairs', async () => {
            // A pair straddles the first slice boundary; quotes, controls and lone halves around it.
            const body = `${'a'.repeat(SLICE_CHARS - 1)}\u{1F600}"\n\u0001\ud800${'é'.repeat(SLICE_CHARS)}`;
            const value = { messageId: 'm@x', body, htmlBody: '<p>x</p>'.repeat(SLICE_CHARS / 4), nested: [{ a: 1 }], skipped: undefined, last: 'end' };
            const chunks = await toJsonChunks(value);
            expect(bytesOf(chunks).toString()).to.equal(JSON.stringify(value));
            expect(chunks.length).to.be.above(4);
            expect(Math.max(...chunks.map((c) => c.length))).to.be.below(3 * SLICE_CHARS);
        });

        it('serialises small objects in one chunk', async () => {
            expect(await toJsonChunks({ a: 'b', n: 1 })).to.equal([Buffer.from('{"a":"b","n":1}')]);
            expect(await toJsonChunks({})).to.equal([Buffer.from('{}')]);
        });
    });
});
