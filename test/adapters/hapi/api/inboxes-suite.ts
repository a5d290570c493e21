import * as Code from '@hapi/code';
import type { InboxPageView, InboxView } from '../../../../adapters/hapi/api-types';
import { concurrently } from '../../../helpers/concurrently';
import { buildMail } from '../../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import type { StoreFactory } from '../../../helpers/test-stores';
import type { SuiteLab } from './lab-types';
import { INGEST_CONCURRENCY, T0 } from './list-suite';

const { expect } = Code;

/** GET /v1/inboxes (docs/api.md, "GET /v1/inboxes"): validation and precedence, order, pages, prefix, deletes. */
export function inboxesSuite(lab: SuiteLab, factory: StoreFactory): void {
    const { describe, it, before, after } = lab;

    describe('GET /v1/inboxes', () => {
        let p: ProvisionedServer;

        const list = async (query: string) => {
            const res = await p.server.inject({ url: `/v1/inboxes${query ? `?${query}` : ''}`, headers: p.auth });
            return { res, page: res.result as InboxPageView };
        };

        const deliver = (inbox: string, receivedAt: number, messageId?: string) =>
            p.api.ingestForApi(buildMail(messageId ? { messageId } : {}), { recipients: [`${inbox}@example.com`], receivedAt });

        // Every inbox, following nextCursor from the first page.
        const walk = async (query: string) => {
            const all: InboxView[] = [];
            const sizes: number[] = [];
            let cursor: string | undefined;
            for (;;) {
                const { res, page } = await list(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
                expect(res.statusCode).to.equal(200);
                // nextCursor is there exactly when hasMore is true.
                expect(page.nextCursor !== undefined).to.equal(page.hasMore);
                all.push(...page.inboxes);
                sizes.push(page.inboxes.length);
                if (!page.hasMore) {
                    return { all, sizes };
                }

                cursor = page.nextCursor;
            }
        };

        describe('validation precedence', () => {
            before(async () => {
                p = await provisionServer({ stores: factory });
            });

            after(() => p.cleanup());

            const TABLE: Array<[string, string, string]> = [
                ['limit=0', 'limit=0', 'INVALID_LIMIT'],
                ['limit=101', 'limit=101', 'INVALID_LIMIT'],
                ['limit=-1', 'limit=-1', 'INVALID_LIMIT'],
                ['limit=abc', 'limit=abc', 'INVALID_LIMIT'],
                ['limit=1.5', 'limit=1.5', 'INVALID_LIMIT'],
                ['an empty limit', 'limit=', 'INVALID_LIMIT'],
                ['two limits', 'limit=1&limit=2', 'INVALID_LIMIT'],
                ['a bad limit, a bad cursor, a bad prefix and an unknown parameter', 'limit=0&cursor=x&prefix=A&nope=1', 'INVALID_LIMIT'],
                ['an unknown parameter', 'nope=1', 'VALIDATION_ERROR'],
                ['an inbox parameter (not one of this endpoint)', 'inbox=abc', 'VALIDATION_ERROR'],
                ['an uppercase prefix', 'prefix=Abc', 'VALIDATION_ERROR'],
                ['a prefix with a plus', 'prefix=a%2Bb', 'VALIDATION_ERROR'],
                ['a prefix with a space', 'prefix=a%20b', 'VALIDATION_ERROR'],
                ['a prefix with a %', 'prefix=a%25', 'VALIDATION_ERROR'],
                ['a non-ASCII prefix', 'prefix=%C3%BC', 'VALIDATION_ERROR'],
                ['a prefix of 65 characters', `prefix=${'a'.repeat(65)}`, 'VALIDATION_ERROR'],
                ['two prefixes', 'prefix=a&prefix=b', 'VALIDATION_ERROR'],
                ['a cursor without #', 'cursor=123', 'VALIDATION_ERROR'],
                ['a cursor with a non-numeric time', 'cursor=abc%23box', 'VALIDATION_ERROR'],
                ['a cursor without a name', 'cursor=123%23', 'VALIDATION_ERROR'],
                ['a cursor whose name is no inbox', 'cursor=123%23Box', 'VALIDATION_ERROR'],
                ['an email list cursor', 'cursor=123%23a%40example.com', 'VALIDATION_ERROR'],
                ['an empty cursor', 'cursor=', 'VALIDATION_ERROR'],
                ['two cursors', 'cursor=1%23a&cursor=2%23b', 'VALIDATION_ERROR']
            ];

            for (const [name, query, code] of TABLE) {
                it(`answers ${code} for ${name}`, async () => {
                    const { res } = await list(query);
                    expect(res.statusCode).to.equal(400);
                    expect(res.result).to.equal({ error: code });
                });
            }

            it('answers 401 before anything else, with no key and with a wrong one', async () => {
                for (const headers of [{}, { authorization: 'Bearer not-a-key' }]) {
                    const res = await p.server.inject({ url: '/v1/inboxes?limit=0&nope=1', headers });
                    expect(res.statusCode).to.equal(401);
                    expect(res.result).to.equal({ error: 'UNAUTHORIZED' });
                }
            });

            it('accepts limit 1 and 100, an empty prefix and a prefix of 64 allowed characters', async () => {
                for (const query of ['limit=1', 'limit=100', 'prefix=', `prefix=${'a.b_c-9'.repeat(10).slice(0, 64)}`]) {
                    const { res, page } = await list(query);
                    expect(res.statusCode, query).to.equal(200);
                    expect(page, query).to.equal({ inboxes: [], hasMore: false });
                }
            });
        });

        describe('order, counts and pages', () => {
            // 55 inboxes (`walk-<odd|even>-NN`), two by two on the same instant, so ties cross pages.
            const NAMES = Array.from({ length: 55 }, (_, i) => `walk-${i % 2 ? 'odd' : 'even'}-${String(i).padStart(2, '0')}`);
            const timeOf = (i: number) => T0 + Math.floor(i / 2);
            const expected = NAMES.map((name, i) => ({ name, count: 1, lastReceivedAt: timeOf(i) }))
                .sort((a, b) => b.lastReceivedAt - a.lastReceivedAt || (a.name < b.name ? -1 : 1));

            before(async () => {
                p = await provisionServer({ stores: factory });
                await concurrently(NAMES.length, INGEST_CONCURRENCY, (i) => deliver(NAMES[i]!, timeOf(i)));
            });

            after(() => p.cleanup());

            it('answers an empty list when no inbox holds mail, with no nextCursor', async () => {
                const { res, page } = await list('prefix=nobody');
                expect(res.statusCode).to.equal(200);
                expect(res.result).to.equal({ inboxes: [], hasMore: false });
                expect(Object.keys(page)).to.equal(['inboxes', 'hasMore']);
            });

            it('lists every inbox with its count, most recently received first, ties by name', async () => {
                await deliver('tie-b', T0 + 1000);
                await deliver('tie-b', T0 + 900);
                await deliver('tie-a', T0 + 1000);
                await deliver('tie-c', T0 + 999);
                const { page } = await list('prefix=tie-');
                expect(page).to.equal({
                    inboxes: [
                        { name: 'tie-a', count: 1, lastReceivedAt: T0 + 1000 },
                        { name: 'tie-b', count: 2, lastReceivedAt: T0 + 1000 },
                        { name: 'tie-c', count: 1, lastReceivedAt: T0 + 999 }
                    ],
                    hasMore: false
                });
            });

            it('answers 50 by default, with a cursor to the rest', async () => {
                const { page } = await list('prefix=walk-');
                expect(page.inboxes).to.equal(expected.slice(0, 50));
                expect(page.hasMore).to.be.true();
                const last = page.inboxes[49]!;
                expect(page.nextCursor).to.equal(`${last.lastReceivedAt}#${last.name}`);
            });

            it('walks through every page without a prefix: each inbox once, in order', async () => {
                const { all, sizes } = await walk('limit=7');
                expect(all.filter((i) => i.name.startsWith('walk-'))).to.equal(expected);
                expect(all.length).to.equal(new Set(all.map((i) => i.name)).size);
                expect(sizes.slice(0, -1).every((n) => n === 7)).to.be.true();
            });

            it('walks through every page with a prefix, only names that start with it', async () => {
                const { all, sizes } = await walk('limit=4&prefix=walk-odd-');
                expect(all).to.equal(expected.filter((i) => i.name.startsWith('walk-odd-')));
                expect(sizes).to.equal([4, 4, 4, 4, 4, 4, 3]);
            });
        });

        describe('after deletes', () => {
            before(async () => {
                p = await provisionServer({ stores: factory });
            });

            after(() => p.cleanup());

            it('takes the next newest email\'s time when the newest is deleted, and drops the inbox with its last email', async () => {
                await deliver('gone', T0 + 1, 'gone-old@example.com');
                await deliver('gone', T0 + 5, 'gone-new@example.com');
                await deliver('stays', T0 + 3);
                expect((await list('')).page.inboxes).to.equal([
                    { name: 'gone', count: 2, lastReceivedAt: T0 + 5 },
                    { name: 'stays', count: 1, lastReceivedAt: T0 + 3 }
                ]);

                expect((await p.server.inject({ method: 'DELETE', url: '/v1/emails/gone-new%40example.com', headers: p.auth })).statusCode).to.equal(200);
                expect((await list('')).page.inboxes).to.equal([
                    { name: 'stays', count: 1, lastReceivedAt: T0 + 3 },
                    { name: 'gone', count: 1, lastReceivedAt: T0 + 1 }
                ]);

                expect((await p.server.inject({ method: 'DELETE', url: '/v1/emails/gone-old%40example.com', headers: p.auth })).statusCode).to.equal(200);
                expect((await list('')).page.inboxes).to.equal([{ name: 'stays', count: 1, lastReceivedAt: T0 + 3 }]);
            });

            it('drops an inbox emptied by DELETE /v1/emails?inbox=', async () => {
                await concurrently(30, INGEST_CONCURRENCY, (i) => deliver('bulk', T0 + 100 + i));
                expect((await list('prefix=bulk')).page.inboxes).to.equal([{ name: 'bulk', count: 30, lastReceivedAt: T0 + 129 }]);
                const res = await p.server.inject({ method: 'DELETE', url: '/v1/emails?inbox=bulk', headers: p.auth });
                expect(res.result).to.equal({ deleted: 30 });
                expect((await list('prefix=bulk')).page).to.equal({ inboxes: [], hasMore: false });
            });
        });
    });
}
