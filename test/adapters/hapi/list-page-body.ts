import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { toEmailPage } from '../../../adapters/hapi/email-view';
import { serialiseEmailPage } from '../../../adapters/hapi/list-page-body';
import type { EmailRecord } from '../../../lib/types';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

function record(n: number, body: string): EmailRecord {
    return {
        messageId: `m${n}@x`, sourceId: `m${n}@x`, inbox: 'box', sender: 's@x', recipient: 'box@x', subject: `s${n}`,
        body, htmlBody: '', receivedAt: 1_750_000_000_000 - n, rawKey: `k${n}`, rawSize: 1, attachments: [], links: [], codes: []
    };
}

const bytesOf = (chunks: Buffer[]) => Buffer.concat(chunks);

describe('list-page-body', () => {
    describe('serialiseEmailPage()', () => {
        it('serialises the whole page as toEmailPage() would when it fits', () => {
            const records = { records: [record(1, 'a'), record(2, 'é\u0000"')], hasMore: true };
            const { page, chunks } = serialiseEmailPage(records, '/mail', 1_000_000);
            expect(page).to.equal(toEmailPage(records, '/mail'));
            expect(JSON.parse(bytesOf(chunks).toString())).to.equal(page);
            // One chunk per email (and commas): never one string of the whole page.
            expect(chunks.length).to.equal(5);
        });

        it('ends the page at the last email that keeps the JSON within the budget', () => {
            const records = { records: [1, 2, 3, 4].map((n) => record(n, 'x'.repeat(1000))), hasMore: false };
            const whole = bytesOf(serialiseEmailPage(records, '', 1_000_000).chunks).length;
            for (const budget of [2500, 3300, whole - 1]) {
                const { page, chunks } = serialiseEmailPage(records, '', budget);
                const sent = bytesOf(chunks);
                expect(sent.length).to.be.at.most(budget);
                expect(JSON.parse(sent.toString())).to.equal(page);
                expect(page.hasMore).to.be.true();
                expect(page.nextCursor).to.equal(`${page.emails.at(-1)!.receivedAt}#${page.emails.at(-1)!.messageId}`);
                // One more email would not have fitted.
                const more = serialiseEmailPage({ records: records.records.slice(0, page.emails.length + 1), hasMore: false }, '', 1_000_000);
                expect(bytesOf(more.chunks).length).to.be.above(budget);
            }

            expect(serialiseEmailPage(records, '', whole).page.emails).to.have.length(4);
        });

        it('sends the first email even when it alone is larger than the budget', () => {
            const { page, chunks } = serialiseEmailPage({ records: [record(1, 'x'.repeat(5000)), record(2, 'y')], hasMore: false }, '', 100);
            expect(page.emails.map((e) => e.messageId)).to.equal(['m1@x']);
            expect(page.hasMore).to.be.true();
            expect(JSON.parse(bytesOf(chunks).toString())).to.equal(page);
        });

        it('answers an empty page', () => {
            const { page, chunks } = serialiseEmailPage({ records: [], hasMore: false }, '', 10);
            expect(bytesOf(chunks).toString()).to.equal('{"emails":[],"hasMore":false}');
            expect(page).to.equal({ emails: [], hasMore: false });
        });
    });
});
