import * as Code from '@hapi/code';
import type { EmailView } from '../../../../adapters/hapi/api-types';
import { concurrently } from '../../../helpers/concurrently';
import { buildMail } from '../../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import type { StoreFactory } from '../../../helpers/test-stores';
import { AWKWARD_IDS } from './awkward-ids';
import type { SuiteLab } from './lab-types';
import { INGEST_CONCURRENCY } from './list-suite';

const { expect } = Code;

async function blobExists(p: ProvisionedServer, key: string): Promise<boolean> {
    const stream = await p.stores.blobStore.get(key);
    stream?.destroy();
    return stream !== null;
}

/** One email, deleting one, deleting an inbox (docs/api.md, "HTTP API"; docs/design.md, "Deletes and downloads"). */
export function emailsSuite(lab: SuiteLab, factory: StoreFactory): void {
    const { describe, it, before, after } = lab;

    describe('GET /v1/emails/{messageId}', () => {
        let p: ProvisionedServer;

        before(async () => {
            p = await provisionServer({ stores: factory });
        });

        after(() => p.cleanup());

        it('answers the email object with every field', async () => {
            const [stored] = await p.api.ingestForApi(buildMail({
                from: 'Sender Name <sender@example.com>',
                to: 'Get.Test@example.com',
                subject: 'Hello there',
                text: 'plain body, code 482913: https://x.test/go.',
                html: '<p>html body <a href="https://x.test/v?a=1&amp;b=2">Verify</a></p>',
                messageId: 'get-one@example.com',
                attachments: [{ filename: 'report.pdf', contentType: 'application/pdf', content: Buffer.from('%PDF-1.4 test') }]
            }), { receivedAt: 1_700_000_000_123 });
            const res = await p.server.inject({ url: '/v1/emails/get-one%40example.com', headers: p.auth });
            expect(res.statusCode).to.equal(200);
            expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
            expect(res.result).to.equal({
                messageId: 'get-one@example.com',
                inbox: 'get.test',
                sender: 'sender@example.com',
                senderName: 'Sender Name',
                recipient: 'Get.Test@example.com',
                subject: 'Hello there',
                body: 'plain body, code 482913: https://x.test/go.',
                htmlBody: '<p>html body <a href="https://x.test/v?a=1&amp;b=2">Verify</a></p>',
                attachments: [{
                    filename: '0-report.pdf',
                    contentType: 'application/pdf',
                    size: 13,
                    url: '/v1/emails/get-one%40example.com/attachments/0-report.pdf',
                    contentId: ''
                }],
                receivedAt: 1_700_000_000_123,
                rawUrl: '/v1/emails/get-one%40example.com/raw',
                links: [{ href: 'https://x.test/v?a=1&b=2', text: 'Verify' }, { href: 'https://x.test/go', text: 'https://x.test/go' }],
                codes: ['482913'],
                tags: [],
                size: stored!.size,
                seen: false
            });
            // The raw message's bytes: headers, both bodies and the attachment.
            expect(stored!.size).to.be.above(500);
            expect(res.result).to.equal(stored);
        });

        it('answers the same object as the list', async () => {
            const list = await p.server.inject({ url: '/v1/emails?inbox=get.test', headers: p.auth });
            const one = await p.server.inject({ url: '/v1/emails/get-one%40example.com', headers: p.auth });
            expect((list.result as { emails: EmailView[] }).emails[0]).to.equal(one.result as EmailView);
        });

        it('answers a body of megabytes exactly (serialised in slices; SQLite reads it in pieces)', async () => {
            // 4.5 Mi UTF-16 units in lines: several slices of JSON and, on SQLite, several pieces of text, cut inside characters.
            const text = `${'\u00e9\u4e2d\u{1f600} \\ "q"'.repeat(100)}\n`.repeat(4_500);
            await p.api.ingestForApi(Buffer.from(buildMail({ to: 'big.one@example.com', text, messageId: 'big-one@example.com' })));
            const stored = await p.api.capture.getEmail('big-one@example.com');
            expect(stored!.body.length).to.be.above(4 * 2 ** 20);
            const res = await p.server.inject({ url: '/v1/emails/big-one%40example.com', headers: p.auth });
            expect(res.statusCode).to.equal(200);
            const view = JSON.parse(res.payload) as EmailView;
            expect(view.body === stored!.body).to.be.true();
            expect(Number(res.headers['content-length'])).to.equal(Buffer.byteLength(res.payload));
            expect(res.result).to.equal(view);
        });

        it('answers 404 NOT_FOUND for an unknown id', async () => {
            const res = await p.server.inject({ url: '/v1/emails/unknown%40example.com', headers: p.auth });
            expect(res.statusCode).to.equal(404);
            expect(res.result).to.equal({ error: 'NOT_FOUND' });
        });

        it('answers 404 NOT_FOUND for the id without its encoding (a path of several segments)', async () => {
            await p.api.ingestForApi(buildMail({ messageId: 'a/b@x' }), { recipients: ['slashes@x'] });
            const res = await p.server.inject({ url: '/v1/emails/a/b@x', headers: p.auth });
            expect(res.statusCode).to.equal(404);
            expect(res.result).to.equal({ error: 'NOT_FOUND' });
        });

        describe('awkward Message-IDs', () => {
            for (const id of AWKWARD_IDS) {
                it(`finds ${JSON.stringify(id)} at its encoded URL and in its rawUrl`, async () => {
                    const [stored] = await p.api.ingestForApi(buildMail({ messageId: id }), { recipients: ['awkward@x'] });
                    expect(stored.messageId).to.equal(id);
                    const res = await p.server.inject({ url: `/v1/emails/${encodeURIComponent(id)}`, headers: p.auth });
                    expect(res.statusCode).to.equal(200);
                    expect((res.result as EmailView).messageId).to.equal(id);
                    expect(stored.rawUrl).to.equal(`/v1/emails/${encodeURIComponent(id)}/raw`);
                });
            }

            it('finds ids whose encoding uses lowercase hex', async () => {
                const id = 'lower/hex#id@x';
                await p.api.ingestForApi(buildMail({ messageId: id }), { recipients: ['awkward@x'] });
                const url = `/v1/emails/${encodeURIComponent(id).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())}`;
                const res = await p.server.inject({ url, headers: p.auth });
                expect((res.result as EmailView).messageId).to.equal(id);
            });
        });
    });

    describe('DELETE /v1/emails/{messageId}', () => {
        let p: ProvisionedServer;

        before(async () => {
            p = await provisionServer({ stores: factory });
        });

        after(() => p.cleanup());

        it('deletes the record, the raw message and every attachment', async () => {
            const [view] = await p.api.ingestForApi(buildMail({
                messageId: 'del-one@x',
                attachments: [
                    { filename: 'a.txt', contentType: 'text/plain', content: 'a' },
                    { filename: 'b.txt', contentType: 'text/plain', content: 'b' }
                ]
            }), { recipients: ['delete-one@x'] });
            const record = (await p.api.capture.getEmail(view.messageId))!;
            const keys = [record.rawKey, ...record.attachments.map((a) => a.blobKey)];
            for (const key of keys) {
                expect(await blobExists(p, key)).to.be.true();
            }

            const res = await p.server.inject({ method: 'DELETE', url: '/v1/emails/del-one%40x', headers: p.auth });
            expect(res.statusCode).to.equal(200);
            expect(res.result).to.equal({ deleted: true, messageId: 'del-one@x' });
            expect(await p.api.capture.getEmail('del-one@x')).to.be.null();
            for (const key of keys) {
                expect(await blobExists(p, key)).to.be.false();
            }

            const again = await p.server.inject({ url: '/v1/emails/del-one%40x', headers: p.auth });
            expect(again.statusCode).to.equal(404);
        });

        it('answers 404 NOT_FOUND for an unknown id, and for a second delete', async () => {
            await p.api.ingestForApi(buildMail({ messageId: 'twice@x' }), { recipients: ['delete-one@x'] });
            expect((await p.server.inject({ method: 'DELETE', url: '/v1/emails/twice%40x', headers: p.auth })).statusCode).to.equal(200);
            const res = await p.server.inject({ method: 'DELETE', url: '/v1/emails/twice%40x', headers: p.auth });
            expect(res.statusCode).to.equal(404);
            expect(res.result).to.equal({ error: 'NOT_FOUND' });
        });

        it('deletes only the email named', async () => {
            await p.api.ingestForApi(buildMail({ messageId: 'keep@x' }), { recipients: ['delete-one@x'] });
            await p.api.ingestForApi(buildMail({ messageId: 'drop@x' }), { recipients: ['delete-one@x'] });
            await p.server.inject({ method: 'DELETE', url: '/v1/emails/drop%40x', headers: p.auth });
            expect(await p.api.capture.getEmail('keep@x')).to.not.be.null();
        });

        for (const id of AWKWARD_IDS) {
            it(`deletes ${JSON.stringify(id)} through its encoded URL`, async () => {
                await p.api.ingestForApi(buildMail({ messageId: id }), { recipients: ['awkward-delete@x'] });
                const res = await p.server.inject({ method: 'DELETE', url: `/v1/emails/${encodeURIComponent(id)}`, headers: p.auth });
                expect(res.statusCode).to.equal(200);
                expect(res.result).to.equal({ deleted: true, messageId: id });
                expect(await p.api.capture.getEmail(id)).to.be.null();
            });
        }
    });

    describe('DELETE /v1/emails', () => {
        let p: ProvisionedServer;

        before(async () => {
            p = await provisionServer({ stores: factory });
        });

        after(() => p.cleanup());

        it('deletes an inbox of 60 emails (three batches) with every blob', async () => {
            const perEmail = await concurrently(60, INGEST_CONCURRENCY, async (i) => {
                const [view] = await p.api.ingestForApi(buildMail({
                    attachments: i % 3 === 0 ? [{ filename: 'x.bin', contentType: 'application/octet-stream', content: Buffer.from([i]) }] : []
                }), { recipients: ['bulk@x'] });
                const record = (await p.api.capture.getEmail(view.messageId))!;
                return [record.rawKey, ...record.attachments.map((a) => a.blobKey)];
            });
            const keys = perEmail.flat();
            expect(keys).to.have.length(80);

            await p.api.ingestForApi(buildMail({ messageId: 'survivor@x' }), { recipients: ['bulk-other@x'] });
            const res = await p.server.inject({ method: 'DELETE', url: '/v1/emails?inbox=bulk', headers: p.auth });
            expect(res.statusCode).to.equal(200);
            expect(res.result).to.equal({ deleted: 60 });
            const list = await p.server.inject({ url: '/v1/emails?inbox=bulk', headers: p.auth });
            expect(list.result).to.equal({ emails: [], hasMore: false });
            const exist = await concurrently(keys.length, INGEST_CONCURRENCY, (i) => blobExists(p, keys[i]));
            expect(keys.filter((_, i) => exist[i])).to.equal([]);

            expect(await p.api.capture.getEmail('survivor@x')).to.not.be.null();
        });

        it('answers { deleted: 0 } for an empty inbox', async () => {
            const res = await p.server.inject({ method: 'DELETE', url: '/v1/emails?inbox=never-used', headers: p.auth });
            expect(res.statusCode).to.equal(200);
            expect(res.result).to.equal({ deleted: 0 });
        });

        const TABLE: Array<[string, string, string]> = [
            ['no inbox', '', 'MISSING_INBOX'],
            ['an empty inbox', 'inbox=', 'MISSING_INBOX'],
            ['no inbox and an unknown parameter', 'nope=1', 'MISSING_INBOX'],
            ['an uppercase inbox', 'inbox=Bulk', 'INVALID_INBOX'],
            ['an inbox with a space', 'inbox=a%20b', 'INVALID_INBOX'],
            ['an inbox of 65 characters', `inbox=${'b'.repeat(65)}`, 'INVALID_INBOX'],
            ['an invalid inbox and an unknown parameter', 'inbox=A&nope=1', 'INVALID_INBOX'],
            ['an unknown parameter', 'inbox=bulk&limit=5', 'VALIDATION_ERROR']
        ];

        for (const [name, query, code] of TABLE) {
            it(`answers 400 ${code} for ${name}, deleting nothing`, async () => {
                await p.api.ingestForApi(buildMail(), { recipients: ['bulk@x'] });
                const res = await p.server.inject({ method: 'DELETE', url: `/v1/emails?${query}`, headers: p.auth });
                expect(res.statusCode).to.equal(400);
                expect(res.result).to.equal({ error: code });
                const list = await p.server.inject({ url: '/v1/emails?inbox=bulk', headers: p.auth });
                expect((list.result as { emails: unknown[] }).emails.length).to.be.above(0);
            });
        }
    });
}
