import * as Code from '@hapi/code';
import { randomBytes } from 'node:crypto';
import type { EmailPage, EmailView } from '../../../../adapters/hapi/api-types';
import { MAX_QUERY_CHARS, MAX_QUERY_TERMS } from '../../../../lib/search/search-query';
import { buildMail } from '../../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import { SEARCH_CASES, SEARCH_MAILS } from '../../../helpers/search-cases';
import type { StoreFactory } from '../../../helpers/test-stores';
import type { SuiteLab } from './lab-types';
import { until } from './long-poll-suite';

const { expect } = Code;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fixed instant the table's mail is received around (2023-11-14T22:13:20Z). */
const T0 = 1_700_000_000_000;

/** `q` on GET and DELETE /v1/emails, tags on every email and PUT .../tags (docs/api.md, "Search", "Tags"). */
export function searchSuite(lab: SuiteLab, factory: StoreFactory): void {
    const { describe, it, before, after } = lab;

    describe('search and tags', () => {
        let p: ProvisionedServer;

        before(async () => {
            p = await provisionServer({ stores: factory });
        });

        after(() => p.cleanup());

        const get = (url: string) => p.server.inject({ url, headers: p.auth });
        const list = async (query: string) => {
            const res = await get(`/v1/emails?${query}`);
            expect(res.statusCode, res.payload).to.equal(200);
            return res.result as EmailPage;
        };

        /** Every page of a search, following nextCursor. */
        const searchAll = async (inbox: string, q: string, limit: number) => {
            const ids: string[] = [];
            let cursor: string | undefined;
            for (;;) {
                // '' is no search: `q` left out (an empty `q` is refused).
                const page = await list(`inbox=${inbox}&limit=${limit}${q === '' ? '' : `&q=${encodeURIComponent(q)}`}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
                ids.push(...page.emails.map((e) => e.messageId));
                if (!page.hasMore) {
                    return ids;
                }

                cursor = page.nextCursor;
            }
        };

        const ingest = (inbox: string, mail: Parameters<typeof buildMail>[0], receivedAt?: number) =>
            p.api.ingestForApi(buildMail(mail), { recipients: [`${inbox}@search.test`], ...(receivedAt ? { receivedAt } : {}) });

        describe('the query table, ingested as messages', () => {
            const inbox = `table-${randomBytes(4).toString('hex')}`;
            const idOf = (key: string) => `${key}-${inbox}@search.test`;

            before(async () => {
                for (const mail of SEARCH_MAILS) {
                    await ingest(inbox, {
                        messageId: idOf(mail.key),
                        from: mail.from,
                        subject: mail.subject,
                        text: mail.text,
                        html: mail.html,
                        attachments: (mail.attachments ?? []).map((a) => ({ filename: a.filename, contentType: a.contentType, content: Buffer.alloc(a.bytes, 7) })),
                        headers: mail.tags ? [`X-Tags: ${mail.tags.map((t) => t.toUpperCase()).join(', ')}, not a tag`] : []
                    }, T0 + mail.offset);
                }
            });

            for (const [query, keys] of SEARCH_CASES) {
                const shown = typeof query === 'string' ? query : query.toString();
                it(`finds ${JSON.stringify(keys)} for ${shown}, page by page`, async () => {
                    const q = typeof query === 'string' ? query : query(T0, inbox);
                    expect(await searchAll(inbox, q, 100)).to.equal(keys.map(idOf));
                    expect(await searchAll(inbox, q, 2)).to.equal(keys.map(idOf));
                });
            }

            it('shows tags from X-Tags, the sender\'s display name and the Content-ID of every attachment', async () => {
                const [order] = (await list(`inbox=${inbox}&q=${encodeURIComponent('tag:orders')}`)).emails;
                expect(order).to.include({ tags: ['orders', 'shop'], senderName: 'Shop Newsletter', sender: 'orders@shop.example' });
                expect(order!.attachments.map((a) => a.contentId)).to.equal(['']);
                const [welcome] = (await list(`inbox=${inbox}&q=welcome`)).emails;
                expect(welcome).to.include({ tags: ['welcome'], senderName: 'Bjørn Ålesund' });
            });

            it('combines q with the other filters', async () => {
                const page = await list(`inbox=${inbox}&q=has:attachment&sender=bank&receivedAfter=${T0}`);
                expect(page.emails.map((e) => e.messageId)).to.equal([idOf('code')]);
            });
        });

        describe('validation of q', () => {
            const terms = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`).join(' ');
            const MALFORMED: Array<[string, string]> = [
                ['longer than 1,024 characters', 'x'.repeat(MAX_QUERY_CHARS + 1)],
                ['more than 20 terms', terms(MAX_QUERY_TERMS + 1)],
                ['an unclosed quote', '"abc'],
                ['an empty field', 'from:'],
                ['a has: it cannot read', 'has:pictures'],
                ['a date it cannot read', 'after:tomorrow'],
                ['a size it cannot read', 'larger:1G'],
                ['two q', 'a&q=b'],
                // Present with nothing to search for: it would match every email.
                ['an empty q', ''],
                ['a q of spaces', '   '],
                ['a q of a tab', '\t'],
                ['a q of a BOM', '\uFEFF'],
                ['a q of a no-break space', '\u00A0'],
                ['a q of NUL', '\u0000'],
                ['a term of controls and a zero-width space', 'order \u0001\u200B']
            ];

            for (const [name, q] of MALFORMED) {
                it(`answers 400 VALIDATION_ERROR for ${name}, on GET and on DELETE`, async () => {
                    const encoded = q.includes('&q=') ? q : encodeURIComponent(q);
                    for (const method of ['GET', 'DELETE']) {
                        const res = await p.server.inject({ method, url: `/v1/emails?inbox=abc&q=${encoded}`, headers: p.auth });
                        expect(res.statusCode, method).to.equal(400);
                        expect(res.result, method).to.equal({ error: 'VALIDATION_ERROR' });
                    }
                });
            }

            it('takes 1,024 characters and 20 terms', async () => {
                for (const q of ['x'.repeat(MAX_QUERY_CHARS), terms(MAX_QUERY_TERMS)]) {
                    expect((await list(`inbox=abc&q=${encodeURIComponent(q)}`))).to.equal({ emails: [], hasMore: false });
                }
            });

            it('keeps the precedence: 401 first, then MISSING_INBOX, INVALID_INBOX, INVALID_LIMIT', async () => {
                const bad = encodeURIComponent('"unclosed');
                expect((await p.server.inject({ url: `/v1/emails?inbox=abc&q=${bad}` })).statusCode).to.equal(401);
                expect((await get(`/v1/emails?q=${bad}`)).result).to.equal({ error: 'MISSING_INBOX' });
                expect((await get(`/v1/emails?inbox=A&q=${bad}`)).result).to.equal({ error: 'INVALID_INBOX' });
                expect((await get(`/v1/emails?inbox=a&limit=0&q=${bad}`)).result).to.equal({ error: 'INVALID_LIMIT' });
                expect((await p.server.inject({ method: 'DELETE', url: `/v1/emails?q=${bad}`, headers: p.auth })).result).to.equal({ error: 'MISSING_INBOX' });
            });
        });

        describe('GET /v1/emails?wait=true&q=', () => {
            it('wakes only on mail that matches', async () => {
                const inbox = `wait-${randomBytes(4).toString('hex')}`;
                const pending = get(`/v1/emails?inbox=${inbox}&wait=true&timeout=20&q=${encodeURIComponent('body:"order 77-A" -from:spam')}`);
                await until(() => p.api.capture.longPoller.waiterCount() === 1);
                await ingest(inbox, { text: 'no order here' });
                await ingest(inbox, { from: 'spam@x.test', text: 'your order 77-A' });
                await sleep(50);
                expect(p.api.capture.longPoller.waiterCount()).to.equal(1);
                const [wanted] = await ingest(inbox, { from: 'shop@x.test', html: '<p>Your <b>ORDER 77-a</b> is ready</p>', text: 'see HTML' });
                const res = await pending;
                expect((res.result as EmailPage).emails).to.equal([wanted!]);
            });

            it('answers at once when mail already matches, and empty at the timeout when none does', async () => {
                const inbox = `wait-now-${randomBytes(4).toString('hex')}`;
                const [stored] = await ingest(inbox, { subject: 'ready', headers: ['X-Tags: ready'] });
                expect((await list(`inbox=${inbox}&wait=true&q=tag:ready`)).emails).to.equal([stored!]);
                expect(await list(`inbox=${inbox}&wait=true&timeout=1&q=tag:other`)).to.equal({ emails: [], hasMore: false });
            });
        });

        describe('DELETE /v1/emails?q=', () => {
            it('deletes only the matching emails of the inbox, and answers how many', async () => {
                const inbox = `delete-${randomBytes(4).toString('hex')}`;
                const other = `delete-other-${randomBytes(4).toString('hex')}`;
                for (let i = 0; i < 30; i++) {
                    await ingest(inbox, { subject: i % 3 === 0 ? `remove ${i}` : `keep ${i}` });
                }

                await ingest(other, { subject: 'remove me too?' });
                const res = await p.server.inject({ method: 'DELETE', url: `/v1/emails?inbox=${inbox}&q=subject:remove`, headers: p.auth });
                expect(res.statusCode).to.equal(200);
                expect(res.result).to.equal({ deleted: 10 });
                const left = await searchAll(inbox, '', 100);
                expect(left).to.have.length(20);
                expect(await searchAll(inbox, 'remove', 100)).to.equal([]);
                expect(await searchAll(other, 'remove', 100)).to.have.length(1);
            });

            it('deletes nothing for a q with nothing to search for (400, with the reason), and everything without q', async () => {
                const inbox = `delete-all-${randomBytes(4).toString('hex')}`;
                await ingest(inbox, {});
                await ingest(inbox, {});
                for (const q of ['', '%00', '%EF%BB%BF', '%C2%A0', '%09']) {
                    const res = await p.server.inject({ method: 'DELETE', url: `/v1/emails?inbox=${inbox}&q=${q}`, headers: p.auth });
                    expect(res.statusCode, q).to.equal(400);
                    expect(res.result, q).to.equal({ error: 'VALIDATION_ERROR' });
                    expect(res.headers['inbox-capture-error-detail'], q).to.match(/^q: (must not be empty|has no term to search for|the term at character 1 has nothing to search for)/);
                }

                expect((await list(`inbox=${inbox}`)).emails).to.have.length(2);
                const all = await p.server.inject({ method: 'DELETE', url: `/v1/emails?inbox=${inbox}`, headers: p.auth });
                expect(all.result).to.equal({ deleted: 2 });
            });
        });

        describe('PUT /v1/emails/{messageId}/tags', () => {
            let stored: EmailView;
            let inbox: string;

            before(async () => {
                inbox = `tags-${randomBytes(4).toString('hex')}`;
                [stored] = await ingest(inbox, { messageId: `tagged/${inbox}@x`, headers: ['X-Tags: first'] }) as [EmailView];
            });

            const put = (id: string, payload: unknown, headers: Record<string, string> = p.auth) =>
                p.server.inject({ method: 'PUT', url: `/v1/emails/${encodeURIComponent(id)}/tags`, headers, payload: payload as object });

            it('replaces the tags, lowercased and once each, and answers the email object', async () => {
                const res = await put(stored.messageId, { tags: ['Beta', 'release-1.2', 'beta'] });
                expect(res.statusCode).to.equal(200);
                expect(res.result).to.equal({ ...stored, tags: ['beta', 'release-1.2'] });
                expect((await get(`/v1/emails/${encodeURIComponent(stored.messageId)}`)).result).to.include({ tags: ['beta', 'release-1.2'] });
                expect(await searchAll(inbox, 'tag:BETA', 10)).to.equal([stored.messageId]);
                expect(await searchAll(inbox, 'tag:first', 10)).to.equal([]);
                expect((await put(stored.messageId, { tags: [] })).result).to.include({ tags: [] });
            });

            const INVALID: Array<[string, unknown]> = [
                ['no body', undefined],
                ['an empty object', {}],
                ['tags as a string', { tags: 'a' }],
                ['a tag with a space', { tags: ['a b'] }],
                ['an empty tag', { tags: [''] }],
                ['a tag of 33 characters', { tags: ['x'.repeat(33)] }],
                ['21 distinct tags', { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }],
                ['a number', { tags: [1] }],
                ['another key', { tags: [], other: 1 }],
                ['an array body', ['a']]
            ];

            for (const [name, payload] of INVALID) {
                it(`answers 400 VALIDATION_ERROR for ${name}`, async () => {
                    const res = await put(stored.messageId, payload);
                    expect(res.statusCode).to.equal(400);
                    expect(res.result).to.equal({ error: 'VALIDATION_ERROR' });
                });
            }

            it('answers 400 VALIDATION_ERROR for a body that is not JSON', async () => {
                const res = await p.server.inject({ method: 'PUT', url: `/v1/emails/${encodeURIComponent(stored.messageId)}/tags`, headers: { ...p.auth, 'content-type': 'application/json' }, payload: '{"tags": [' });
                expect(res.statusCode).to.equal(400);
                expect(res.result).to.equal({ error: 'VALIDATION_ERROR' });
            });

            it('answers 401 first, whatever else is wrong', async () => {
                for (const headers of [{}, { authorization: 'Bearer nope' }] as Array<Record<string, string>>) {
                    const res = await put('no-such@x', { tags: 'bad' }, headers);
                    expect(res.statusCode).to.equal(401);
                    expect(res.result).to.equal({ error: 'UNAUTHORIZED' });
                }
            });

            it('answers 404 NOT_FOUND for an unknown email', async () => {
                const res = await put(`no-such-${randomBytes(4).toString('hex')}@x`, { tags: ['a'] });
                expect(res.statusCode).to.equal(404);
                expect(res.result).to.equal({ error: 'NOT_FOUND' });
            });

            it('wakes no waiting request of the inbox', async () => {
                const pending = get(`/v1/emails?inbox=${inbox}&wait=true&timeout=1&q=tag:late`);
                await until(() => p.api.capture.longPoller.waiterCount() === 1);
                await put(stored.messageId, { tags: ['late'] });
                // Answered at its timeout, empty: a retag is not new mail (docs/api.md, "Tags").
                expect((await pending).result).to.equal({ emails: [], hasMore: false });
                expect(await searchAll(inbox, 'tag:late', 10)).to.equal([stored.messageId]);
            });
        });

        describe('PUT /v1/emails/{messageId}/seen', () => {
            let stored: EmailView;
            let other: EmailView;
            let inbox: string;

            before(async () => {
                inbox = `seen-${randomBytes(4).toString('hex')}`;
                [stored] = await ingest(inbox, { messageId: `opened/${inbox}@x` }) as [EmailView];
                [other] = await ingest(inbox, { messageId: `unopened/${inbox}@x` }) as [EmailView];
            });

            const put = (id: string, payload: unknown) =>
                p.server.inject({ method: 'PUT', url: `/v1/emails/${encodeURIComponent(id)}/seen`, headers: p.auth, payload: payload as object });

            it('marks the email read or unread, answers the email object, and is:read / is:unread find it', async () => {
                expect([stored.seen, other.seen]).to.equal([false, false]);
                const res = await put(stored.messageId, { seen: true });
                expect(res.statusCode).to.equal(200);
                expect(res.result).to.equal({ ...stored, seen: true });
                expect((await get(`/v1/emails/${encodeURIComponent(stored.messageId)}`)).result).to.include({ seen: true });
                expect(await searchAll(inbox, 'is:read', 10)).to.equal([stored.messageId]);
                expect(await searchAll(inbox, 'is:unread', 10)).to.equal([other.messageId]);
                expect((await put(stored.messageId, { seen: false })).result).to.include({ seen: false });
                expect((await searchAll(inbox, 'is:unread', 10)).sort()).to.equal([stored.messageId, other.messageId].sort());
            });

            for (const [name, payload] of [['no body', undefined], ['an empty object', {}], ['a string', { seen: 'true' }], ['another key', { seen: true, other: 1 }]] as Array<[string, unknown]>) {
                it(`answers 400 VALIDATION_ERROR for ${name}`, async () => {
                    const res = await put(stored.messageId, payload);
                    expect(res.statusCode).to.equal(400);
                    expect(res.result).to.equal({ error: 'VALIDATION_ERROR' });
                });
            }

            it('answers 400 VALIDATION_ERROR for is: of another value', async () => {
                const res = await get(`/v1/emails?inbox=${inbox}&q=is:opened`);
                expect(res.statusCode).to.equal(400);
            });
        });
    });
}
