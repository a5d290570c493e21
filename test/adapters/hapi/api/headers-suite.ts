import * as Code from '@hapi/code';
import { HEADERS_EXPECTED, HEADERS_MESSAGE } from '../../../helpers/headers-message';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import type { StoreFactory } from '../../../helpers/test-stores';
import { AWKWARD_IDS } from './awkward-ids';
import type { SuiteLab } from './lab-types';

const { expect } = Code;

/** GET /v1/emails/{messageId}/headers (docs/api.md, "Header fields"). */
export function headersSuite(lab: SuiteLab, factory: StoreFactory): void {
    const { describe, it, before, after } = lab;

    describe('GET /v1/emails/{messageId}/headers', () => {
        let p: ProvisionedServer;

        before(async () => {
            p = await provisionServer({ stores: factory });
        });

        after(() => p.cleanup());

        it('answers 401 before anything else, for a stored and for an unknown id', async () => {
            await p.api.ingestForApi(HEADERS_MESSAGE, { recipients: ['headers@example.test'] });
            for (const id of ['headers-test@example.test', 'no-such-id@example.test']) {
                const res = await p.server.inject(`/v1/emails/${encodeURIComponent(id)}/headers`);
                expect(res.statusCode, id).to.equal(401);
                expect(res.result, id).to.equal({ error: 'UNAUTHORIZED' });
                const badKey = await p.server.inject({ url: `/v1/emails/${encodeURIComponent(id)}/headers`, headers: { authorization: 'Bearer ic_wrong' } });
                expect(badKey.statusCode, id).to.equal(401);
            }
        });

        it('answers 404 NOT_FOUND for an unknown id and after a delete', async () => {
            const unknown = await p.server.inject({ url: '/v1/emails/unknown%40example.test/headers', headers: p.auth });
            expect(unknown.statusCode).to.equal(404);
            expect(unknown.result).to.equal({ error: 'NOT_FOUND' });

            const [stored] = await p.api.ingestForApi(HEADERS_MESSAGE.replace('headers-test@', 'deleted@'), { recipients: ['gone@example.test'] });
            const url = `/v1/emails/${encodeURIComponent(stored.messageId)}/headers`;
            expect((await p.server.inject({ url, headers: p.auth })).statusCode).to.equal(200);
            expect((await p.server.inject({ method: 'DELETE', url: `/v1/emails/${encodeURIComponent(stored.messageId)}`, headers: p.auth })).statusCode).to.equal(200);
            const gone = await p.server.inject({ url, headers: p.auth });
            expect(gone.statusCode).to.equal(404);
            expect(gone.result).to.equal({ error: 'NOT_FOUND' });
        });

        it('answers every top-level field in order: duplicates kept, unfolded, decoded, trimmed, no MIME part headers', async () => {
            await p.api.ingestForApi(HEADERS_MESSAGE, { recipients: ['headers@example.test'] });
            const res = await p.server.inject({ url: '/v1/emails/headers-test%40example.test/headers', headers: p.auth });
            expect(res.statusCode).to.equal(200);
            expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
            expect(res.result).to.equal({ headers: HEADERS_EXPECTED });
        });

        it('reads a message with LF line ends as one with CRLF', async () => {
            const lf = HEADERS_MESSAGE.replace(/\r\n/g, '\n').replace('headers-test@', 'headers-lf@');
            await p.api.ingestForApi(lf, { recipients: ['headers-lf@example.test'] });
            const res = await p.server.inject({ url: '/v1/emails/headers-lf%40example.test/headers', headers: p.auth });
            expect(res.statusCode).to.equal(200);
            const expected = HEADERS_EXPECTED.map((h) => h.name === 'Message-ID' ? { ...h, value: '<headers-lf@example.test>' } : h);
            expect(res.result).to.equal({ headers: expected });
        });

        it('answers a copy in every inbox, each with the message\'s own headers', async () => {
            const message = HEADERS_MESSAGE.replace('headers-test@', 'two-inboxes@');
            const stored = await p.api.ingestForApi(message, { recipients: ['one@example.test', 'two@example.test'] });
            expect(stored.map((s) => s.messageId)).to.equal(['two-inboxes@example.test~one', 'two-inboxes@example.test~two']);
            for (const { messageId } of stored) {
                const res = await p.server.inject({ url: `/v1/emails/${encodeURIComponent(messageId)}/headers`, headers: p.auth });
                expect(res.statusCode).to.equal(200);
                const ids = (res.result as { headers: { name: string; value: string }[] }).headers.filter((h) => h.name === 'Message-ID');
                expect(ids).to.equal([{ name: 'Message-ID', value: '<two-inboxes@example.test>' }]);
            }
        });

        it('finds every awkward id at its encoded URL', async () => {
            for (const id of AWKWARD_IDS) {
                await p.api.ingestForApi(`Message-ID: <${id}>\r\nSubject: awkward\r\n\r\nbody\r\n`, { recipients: ['headers-awkward@x'] });
                const res = await p.server.inject({ url: `/v1/emails/${encodeURIComponent(id)}/headers`, headers: p.auth });
                expect(res.statusCode, id).to.equal(200);
                expect(res.result, id).to.equal({ headers: [{ name: 'Message-ID', value: `<${id}>` }, { name: 'Subject', value: 'awkward' }] });
            }
        });
    });
}
