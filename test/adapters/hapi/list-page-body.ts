import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { toEmailPage } from '../../../adapters/hapi/email-view';
import { createEmailJsonSource } from '../../../adapters/hapi/email-json';
import { serialiseEmailPage } from '../../../adapters/hapi/list-page-body';
import { createMessageBudget } from '../../../lib/util/message-budget';
import type { EmailRecord } from '../../../lib/types';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

function record(n: number, body: string): EmailRecord {
    return {
        messageId: `m${n}@x`, sourceId: `m${n}@x`, inbox: 'box', sender: 's@x', recipient: 'box@x', subject: `s${n}`,
        body, htmlBody: '', receivedAt: 1_750_000_000_000 - n, rawKey: `k${n}`, rawSize: 1, rawSha256: 'a'.repeat(64), attachments: [], links: [], codes: [],
        tags: [], senderName: '', seen: false
    };
}

const bytesOf = (chunks: Buffer[]) => Buffer.concat(chunks);
/** Emails' JSON under `prefix`, with a budget nothing here comes near. */
const json = (prefix: string) => createEmailJsonSource(createMessageBudget(2 ** 30), prefix);

describe('list-page-body', () => {
    describe('await serialiseEmailPage()', () => {
        it('serialises the whole page as toEmailPage() would when it fits', async () => {
            const records = { records: [record(1, 'a'), record(2, 'é\u0000"')], hasMore: true };
            const { page, chunks } = await serialiseEmailPage(records, json('/mail'), 1_000_000);
            expect(page).to.equal(toEmailPage(records, '/mail'));
            expect(JSON.parse(bytesOf(chunks).toString())).to.equal(page);
            // One chunk per email (and commas): never one string of the whole page.
            expect(chunks.length).to.equal(5);
        });

        it('ends the page at the last email that keeps the JSON within the budget', async () => {
            const records = { records: [1, 2, 3, 4].map((n) => record(n, 'x'.repeat(1000))), hasMore: false };
            const whole = bytesOf((await serialiseEmailPage(records, json(''), 1_000_000)).chunks).length;
            for (const budget of [2400, 3300, whole - 1]) {
                const { page, chunks } = await serialiseEmailPage(records, json(''), budget);
                const sent = bytesOf(chunks);
                expect(sent.length).to.be.at.most(budget);
                expect(JSON.parse(sent.toString())).to.equal(page);
                expect(page.hasMore).to.be.true();
                expect(page.nextCursor).to.equal(`${page.emails.at(-1)!.receivedAt}#${page.emails.at(-1)!.messageId}`);
                // One more email would not have fitted.
                const more = await serialiseEmailPage({ records: records.records.slice(0, page.emails.length + 1), hasMore: false }, json(''), 1_000_000);
                expect(bytesOf(more.chunks).length).to.be.above(budget);
            }

            expect((await serialiseEmailPage(records, json(''), whole)).page.emails).to.have.length(4);
        });

        it('sends the first email even when it alone is larger than the budget', async () => {
            const { page, chunks } = await serialiseEmailPage({ records: [record(1, 'x'.repeat(5000)), record(2, 'y')], hasMore: false }, json(''), 100);
            expect(page.emails.map((e) => e.messageId)).to.equal(['m1@x']);
            expect(page.hasMore).to.be.true();
            expect(JSON.parse(bytesOf(chunks).toString())).to.equal(page);
        });

        it('answers an empty page', async () => {
            const { page, chunks } = await serialiseEmailPage({ records: [], hasMore: false }, json(''), 10);
            expect(bytesOf(chunks).toString()).to.equal('{"emails":[],"hasMore":false}');
            expect(page).to.equal({ emails: [], hasMore: false });
        });
    });
});
