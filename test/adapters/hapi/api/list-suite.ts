import * as Code from '@hapi/code';
import type { EmailPage, EmailView } from '../../../../adapters/hapi/api-types';
import { concurrently } from '../../../helpers/concurrently';
import { buildMail } from '../../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import type { StoreFactory } from '../../../helpers/test-stores';
import type { SuiteLab } from './lab-types';

const { expect } = Code;

/** A fixed instant the list tests place mail around, Unix ms (2023-11-14T22:13:20Z). */
export const T0 = 1_700_000_000_000;

/** Emails stored at once while setting up: order comes from receivedAt and messageId, never from arrival. */
export const INGEST_CONCURRENCY = 8;

/** GET /v1/emails (docs/api.md, "HTTP API"; docs/design.md, "Listing and long-polling"): validation, precedence, order, pages, filters. */
export function listSuite(lab: SuiteLab, factory: StoreFactory): void {
    const { describe, it, before, after } = lab;

    describe('GET /v1/emails', () => {
        let p: ProvisionedServer;

        const list = async (query: string) => {
            const res = await p.server.inject({ url: `/v1/emails?${query}`, headers: p.auth });
            return { res, page: res.result as EmailPage };
        };

        const ids = (page: EmailPage) => page.emails.map((e) => e.messageId);

        describe('validation precedence', () => {
            before(async () => {
                p = await provisionServer({ stores: factory });
            });

            after(() => p.cleanup());

            const long = 'a'.repeat(65);
            const TABLE: Array<[string, string, string]> = [
                ['no parameter at all', '', 'MISSING_INBOX'],
                ['an empty inbox', 'inbox=', 'MISSING_INBOX'],
                ['no inbox and a bad limit', 'limit=0', 'MISSING_INBOX'],
                ['an empty inbox, a bad limit, a bad cursor and an unknown parameter', 'inbox=&limit=0&cursor=x&nope=1', 'MISSING_INBOX'],
                ['an inbox spelled in capitals (unknown parameter, inbox missing)', 'INBOX=abc', 'MISSING_INBOX'],
                ['an uppercase inbox', 'inbox=Abc', 'INVALID_INBOX'],
                ['an uppercase inbox and a bad limit', 'inbox=ABC&limit=500', 'INVALID_INBOX'],
                ['an inbox with a plus', 'inbox=a%2Bb', 'INVALID_INBOX'],
                ['an inbox with a space', 'inbox=a%20b', 'INVALID_INBOX'],
                ['an inbox with a slash', 'inbox=a%2Fb', 'INVALID_INBOX'],
                ['an inbox with an @', 'inbox=a%40b', 'INVALID_INBOX'],
                ['a non-ASCII inbox', 'inbox=%C3%BC', 'INVALID_INBOX'],
                ['an inbox of 65 characters', `inbox=${long}`, 'INVALID_INBOX'],
                ['two inboxes', 'inbox=a&inbox=b', 'INVALID_INBOX'],
                ['an invalid inbox and an unknown parameter', 'inbox=A&nope=1', 'INVALID_INBOX'],
                ['limit=0', 'inbox=abc&limit=0', 'INVALID_LIMIT'],
                ['limit=101', 'inbox=abc&limit=101', 'INVALID_LIMIT'],
                ['limit=-1', 'inbox=abc&limit=-1', 'INVALID_LIMIT'],
                ['limit=abc', 'inbox=abc&limit=abc', 'INVALID_LIMIT'],
                ['limit=1.5', 'inbox=abc&limit=1.5', 'INVALID_LIMIT'],
                ['an empty limit', 'inbox=abc&limit=', 'INVALID_LIMIT'],
                ['two limits', 'inbox=abc&limit=1&limit=2', 'INVALID_LIMIT'],
                ['a bad limit and a bad cursor', 'inbox=abc&limit=0&cursor=x', 'INVALID_LIMIT'],
                ['a bad limit and an unknown parameter', 'inbox=abc&limit=abc&nope=1', 'INVALID_LIMIT'],
                ['an unknown parameter', 'inbox=abc&nope=1', 'VALIDATION_ERROR'],
                ['a cursor without #', 'inbox=abc&cursor=123', 'VALIDATION_ERROR'],
                ['a cursor with a non-numeric time', 'inbox=abc&cursor=abc%23id', 'VALIDATION_ERROR'],
                ['a cursor without an id', 'inbox=abc&cursor=123%23', 'VALIDATION_ERROR'],
                ['an empty cursor', 'inbox=abc&cursor=', 'VALIDATION_ERROR'],
                ['wait=yes', 'inbox=abc&wait=yes', 'VALIDATION_ERROR'],
                ['wait=TRUE', 'inbox=abc&wait=TRUE', 'VALIDATION_ERROR'],
                ['wait=1', 'inbox=abc&wait=1', 'VALIDATION_ERROR'],
                ['an empty wait', 'inbox=abc&wait=', 'VALIDATION_ERROR'],
                ['timeout=0', 'inbox=abc&timeout=0', 'VALIDATION_ERROR'],
                ['timeout=29', 'inbox=abc&wait=true&timeout=29', 'VALIDATION_ERROR'],
                ['timeout=1.5', 'inbox=abc&timeout=1.5', 'VALIDATION_ERROR'],
                ['timeout=abc', 'inbox=abc&timeout=abc', 'VALIDATION_ERROR'],
                ['hasAttachments=yes', 'inbox=abc&hasAttachments=yes', 'VALIDATION_ERROR'],
                ['an empty hasAttachments', 'inbox=abc&hasAttachments=', 'VALIDATION_ERROR'],
                ['receivedAfter=yesterday', 'inbox=abc&receivedAfter=yesterday', 'VALIDATION_ERROR'],
                ['receivedAfter in month 13', 'inbox=abc&receivedAfter=2024-13-01', 'VALIDATION_ERROR'],
                ['receivedAfter on February 30th', 'inbox=abc&receivedAfter=2024-02-30', 'VALIDATION_ERROR'],
                ['receivedAfter at 24:00', 'inbox=abc&receivedAfter=2024-02-01T24:00Z', 'VALIDATION_ERROR'],
                ['receivedAfter with a fraction of a millisecond count', 'inbox=abc&receivedAfter=1.5', 'VALIDATION_ERROR'],
                ['a negative receivedAfter', 'inbox=abc&receivedAfter=-5', 'VALIDATION_ERROR'],
                ['an empty receivedAfter', 'inbox=abc&receivedAfter=', 'VALIDATION_ERROR'],
                ['a receivedAfter beyond the Date range', 'inbox=abc&receivedAfter=9999999999999999', 'VALIDATION_ERROR'],
                ['an RFC 2822 receivedBefore', 'inbox=abc&receivedBefore=Tue%2C%2021%20Nov%202023', 'VALIDATION_ERROR'],
                ['a receivedBefore with a bad offset', 'inbox=abc&receivedBefore=2024-01-01T00:00%2B25:00', 'VALIDATION_ERROR'],
                ['a sender filter of 257 characters', `inbox=abc&sender=${'s'.repeat(257)}`, 'VALIDATION_ERROR'],
                ['two subjects', 'inbox=abc&subject=a&subject=b', 'VALIDATION_ERROR']
            ];

            for (const [name, query, code] of TABLE) {
                it(`answers 400 ${code} for ${name}`, async () => {
                    const { res } = await list(query);
                    expect(res.statusCode).to.equal(400);
                    expect(res.result).to.equal({ error: code });
                });
            }

            const VALID: Array<[string, string]> = [
                ['limit=1', 'inbox=abc&limit=1'],
                ['limit=100', 'inbox=abc&limit=100'],
                ['an inbox of 64 characters', `inbox=${'a'.repeat(64)}`],
                ['an inbox with . _ -', 'inbox=a.b_c-d'],
                ['wait=false and timeout=28', 'inbox=abc&wait=false&timeout=28'],
                ['an empty sender and subject (match everything)', 'inbox=abc&sender=&subject='],
                ['an ISO date', 'inbox=abc&receivedAfter=2024-01-15'],
                ['an ISO date-time with offset and fraction', 'inbox=abc&receivedBefore=2024-01-15T10:20:30.123456%2B02:00'],
                ['an ISO date-time in minutes without zone', 'inbox=abc&receivedBefore=2024-01-15T10:20'],
                ['Unix milliseconds', `inbox=abc&receivedAfter=${T0}`],
                ['hasAttachments=false', 'inbox=abc&hasAttachments=false']
            ];

            for (const [name, query] of VALID) {
                it(`accepts ${name}`, async () => {
                    const { res } = await list(query);
                    expect(res.statusCode).to.equal(200);
                    expect(res.result).to.equal({ emails: [], hasMore: false });
                });
            }
        });

        describe('order and pages', () => {
            before(async () => {
                p = await provisionServer({ stores: factory });
            });

            after(() => p.cleanup());

            it('lists newest first, ties by messageId descending, only the asked inbox', async () => {
                await p.api.ingestForApi(buildMail({ messageId: 'b@x' }), { recipients: ['order@x'], receivedAt: T0 });
                await p.api.ingestForApi(buildMail({ messageId: 'c@x' }), { recipients: ['order@x'], receivedAt: T0 });
                await p.api.ingestForApi(buildMail({ messageId: 'a@x' }), { recipients: ['order@x'], receivedAt: T0 + 1 });
                await p.api.ingestForApi(buildMail({ messageId: 'd@x' }), { recipients: ['order@x'], receivedAt: T0 - 1 });
                await p.api.ingestForApi(buildMail({ messageId: 'other@x' }), { recipients: ['other-order@x'], receivedAt: T0 + 5 });
                const { res, page } = await list('inbox=order');
                expect(res.statusCode).to.equal(200);
                expect(ids(page)).to.equal(['a@x', 'c@x', 'b@x', 'd@x']);
                expect(page.hasMore).to.be.false();
                expect(Object.keys(page)).to.not.include('nextCursor');
            });

            it('pages through 120 emails with nextCursor, present exactly when hasMore', async () => {
                // Pairs share a timestamp, so the cursor's tie-break is exercised on every page.
                const views = await concurrently(120, INGEST_CONCURRENCY, async (i) => {
                    const [view] = await p.api.ingestForApi(buildMail({ messageId: `m${String(i).padStart(3, '0')}@x` }), { recipients: ['pages@x'], receivedAt: T0 + Math.floor(i / 2) });
                    return view;
                });
                const expected = views.map((v) => v.messageId).sort((a, b) => (a < b ? 1 : -1));
                const seen: string[] = [];
                let cursor: string | undefined;
                let pages = 0;
                for (;;) {
                    const { res, page } = await list(`inbox=pages&limit=25${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
                    expect(res.statusCode).to.equal(200);
                    pages++;
                    seen.push(...ids(page));
                    expect(page.hasMore).to.equal(seen.length < 120);
                    if (!page.hasMore) {
                        expect(Object.keys(page)).to.not.include('nextCursor');
                        break;
                    }

                    const last = page.emails[page.emails.length - 1];
                    expect(page.nextCursor).to.equal(`${last.receivedAt}#${last.messageId}`);
                    cursor = page.nextCursor;
                }

                expect(pages).to.equal(5);
                expect(seen).to.equal(expected);
            });

            it('answers 50 emails by default', async () => {
                const { page } = await list('inbox=pages');
                expect(page.emails.length).to.equal(50);
                expect(page.hasMore).to.be.true();
                expect(page.nextCursor).to.be.a.string();
            });

            it('answers hasMore false when the page holds exactly the rest', async () => {
                const { page } = await list('inbox=pages&limit=100');
                const { page: rest } = await list(`inbox=pages&limit=20&cursor=${encodeURIComponent(page.nextCursor!)}`);
                expect(rest.emails.length).to.equal(20);
                expect(rest.hasMore).to.be.false();
                expect(Object.keys(rest)).to.not.include('nextCursor');
            });

            it('keeps the filters across pages when passed again', async () => {
                for (let i = 0; i < 7; ++i) {
                    await p.api.ingestForApi(buildMail({ subject: i % 2 ? 'odd one' : 'even one' }), { recipients: ['filtered-pages@x'], receivedAt: T0 + i });
                }

                const { page } = await list('inbox=filtered-pages&subject=even&limit=3');
                expect(page.emails.map((e) => e.receivedAt)).to.equal([T0 + 6, T0 + 4, T0 + 2]);
                const { page: next } = await list(`inbox=filtered-pages&subject=even&limit=3&cursor=${encodeURIComponent(page.nextCursor!)}`);
                expect(next.emails.map((e) => e.receivedAt)).to.equal([T0]);
                expect(next.hasMore).to.be.false();
            });

            it('answers an empty page for an unknown inbox', async () => {
                const { res } = await list('inbox=nobody-here');
                expect(res.statusCode).to.equal(200);
                expect(res.result).to.equal({ emails: [], hasMore: false });
            });

            it('answers a cursor past the end with an empty page', async () => {
                const { res } = await list('inbox=order&cursor=1%23a');
                expect(res.result).to.equal({ emails: [], hasMore: false });
            });
        });

        describe('filters', () => {
            before(async () => {
                p = await provisionServer({ stores: factory });
                const mails: Array<[string, string, number, boolean]> = [
                    ['Alice@Example.com', 'Welcome aboard', T0, false],
                    ['bob@example.com', 'Your invoice 100% paid', T0 + 1000, true],
                    ['carol_x@example.org', 'Reset your password', T0 + 2000, false],
                    ['dan%y@example.org', 'a_b c\\d', T0 + 3000, true]
                ];
                for (const [from, subject, receivedAt, attach] of mails) {
                    await p.api.ingestForApi(buildMail({
                        from,
                        subject,
                        attachments: attach ? [{ filename: 'f.txt', contentType: 'text/plain', content: 'x' }] : []
                    }), { recipients: ['filters@x'], receivedAt });
                }
            });

            after(() => p.cleanup());

            const senders = async (query: string) => {
                const { res, page } = await list(`inbox=filters&${query}`);
                expect(res.statusCode).to.equal(200);
                return page.emails.map((e: EmailView) => e.sender);
            };

            it('matches sender as a case-insensitive substring', async () => {
                expect(await senders('sender=EXAMPLE.COM')).to.equal(['bob@example.com', 'Alice@Example.com']);
                expect(await senders('sender=alice')).to.equal(['Alice@Example.com']);
            });

            it('matches % and _ in sender literally', async () => {
                expect(await senders('sender=%25')).to.equal(['dan%y@example.org']);
                expect(await senders('sender=_')).to.equal(['carol_x@example.org']);
            });

            it('matches subject as a case-insensitive substring with %, _ and \\ literal', async () => {
                expect(await senders('subject=YOUR')).to.equal(['carol_x@example.org', 'bob@example.com']);
                expect(await senders('subject=100%25')).to.equal(['bob@example.com']);
                expect(await senders('subject=a_b')).to.equal(['dan%y@example.org']);
                expect(await senders('subject=%5C')).to.equal(['dan%y@example.org']);
                expect(await senders('subject=a%25b')).to.equal([]);
            });

            it('treats receivedAfter as inclusive Unix milliseconds', async () => {
                expect(await senders(`receivedAfter=${T0 + 2000}`)).to.equal(['dan%y@example.org', 'carol_x@example.org']);
            });

            it('treats receivedBefore as exclusive Unix milliseconds', async () => {
                expect(await senders(`receivedBefore=${T0 + 2000}`)).to.equal(['bob@example.com', 'Alice@Example.com']);
            });

            it('accepts ISO 8601 date-times, with Z, with an offset, or without a zone (UTC)', async () => {
                const iso = new Date(T0 + 1000).toISOString();
                expect(await senders(`receivedAfter=${encodeURIComponent(iso)}`)).to.equal(['dan%y@example.org', 'carol_x@example.org', 'bob@example.com']);
                // T0 + 2000 is 22:13:22Z, which is 00:13:22 at +02:00.
                expect(await senders(`receivedBefore=${encodeURIComponent('2023-11-15T00:13:22+02:00')}`)).to.equal(['bob@example.com', 'Alice@Example.com']);
                expect(await senders('receivedBefore=2023-11-14T22:13:22')).to.equal(['bob@example.com', 'Alice@Example.com']);
            });

            it('accepts ISO 8601 dates (midnight UTC)', async () => {
                expect(await senders('receivedAfter=2023-11-14&receivedBefore=2023-11-15')).to.have.length(4);
                expect(await senders('receivedAfter=2023-11-15')).to.equal([]);
            });

            it('filters by hasAttachments', async () => {
                expect(await senders('hasAttachments=true')).to.equal(['dan%y@example.org', 'bob@example.com']);
                expect(await senders('hasAttachments=false')).to.equal(['carol_x@example.org', 'Alice@Example.com']);
            });

            it('combines filters with AND', async () => {
                expect(await senders(`sender=example&hasAttachments=false&receivedAfter=${T0 + 1}`)).to.equal(['carol_x@example.org']);
                expect(await senders(`receivedAfter=${T0 + 2000}&receivedBefore=${T0 + 2000}`)).to.equal([]);
            });
        });

        describe('byte budget (maxPageBytes)', () => {
            // Small enough that a few 20 kB emails fill a page.
            const BUDGET = 64 * 1024;

            before(async () => {
                p = await provisionServer({ stores: factory, plugin: { maxPageBytes: BUDGET } });
            });

            after(() => p.cleanup());

            // Every page of the inbox by cursor; each within the budget unless it holds one email.
            const allPages = async (query: string) => {
                const pages: EmailPage[] = [];
                let cursor: string | undefined;
                do {
                    const { res, page } = await list(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
                    expect(res.statusCode).to.equal(200);
                    // The streamed bytes are the page, and say their length.
                    expect(JSON.parse(res.payload)).to.equal(page);
                    expect(Number(res.headers['content-length'])).to.equal(res.rawPayload.length);
                    expect(res.headers['x-content-type-options']).to.equal('nosniff');
                    if (page.emails.length > 1) {
                        expect(res.rawPayload.length).to.be.at.most(BUDGET);
                    }

                    expect(page.nextCursor !== undefined).to.equal(page.hasMore);
                    pages.push(page);
                    cursor = page.nextCursor;
                } while (cursor !== undefined && pages.length < 50);
                return pages;
            };

            const ingestSized = async (inbox: string, count: number, text: (i: number) => string) => {
                for (let i = 0; i < count; i++) {
                    await p.api.ingestForApi(buildMail({ messageId: `${inbox}-${i}@x`, text: text(i) }), { recipients: [`${inbox}@x`], receivedAt: T0 + i });
                }
            };

            it('ends a page before limit at the budget, with hasMore and a cursor that reaches every email', async () => {
                await ingestSized('budget', 7, () => 'x'.repeat(20_000));
                const pages = await allPages('inbox=budget&limit=100');
                expect(pages[0]!.emails.length).to.equal(3);
                expect(pages[0]!.hasMore).to.be.true();
                expect(pages.flatMap(ids)).to.equal([6, 5, 4, 3, 2, 1, 0].map((i) => `budget-${i}@x`));
                expect(pages.length).to.equal(3);
            });

            it('sends an email larger than the budget as a page of its own', async () => {
                await ingestSized('huge', 3, (i) => (i === 1 ? 'y'.repeat(100_000) : 'small'));
                const pages = await allPages('inbox=huge');
                expect(pages.map(ids)).to.equal([['huge-2@x'], ['huge-1@x'], ['huge-0@x']]);
                expect(pages[1]!.emails[0]!.body.length).to.be.at.least(100_000);
            });

            it('counts the JSON sent, escapes included, not only the stored text', async () => {
                // 20,000 quotes are 40,000 bytes of JSON: two of them do not fit, though their stored text would.
                await ingestSized('quotes', 3, () => '"'.repeat(20_000));
                const pages = await allPages('inbox=quotes');
                expect(pages.map((page) => page.emails.length)).to.equal([1, 1, 1]);
            });

            it('applies to long-polls too', async () => {
                const { res, page } = await list('inbox=budget&wait=true&timeout=1');
                expect(res.statusCode).to.equal(200);
                expect(ids(page)).to.equal(['budget-6@x', 'budget-5@x', 'budget-4@x']);
                expect(page.hasMore).to.be.true();
                expect(res.rawPayload.length).to.be.at.most(BUDGET);
            });
        });
    });
}
