import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildMail } from '../../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import { postgresFsStores, sqliteFsStores, type StoreFactory } from '../../../helpers/test-stores';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('routes/checks-links', () => {
    let target: Http.Server;
    let base: string;
    const methods: string[] = [];

    before(async () => {
        target = Http.createServer((req, res) => {
            methods.push(req.method ?? '');
            res.writeHead(req.method !== 'HEAD' ? 500 : req.url === '/ok' ? 200 : req.url === '/moved' ? 308 : 404, req.url === '/moved' ? { location: '/ok' } : {}).end();
        });
        await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
        base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    });

    after(async () => {
        target?.closeAllConnections();
        await new Promise<void>((resolve) => target?.close(() => resolve()));
    });

    const html = () => `<p><a href="${base}/missing">a</a> <a href="mailto:help@shop.test">mail</a> <a href="${base}/moved">b</a> <a href="${base}/ok">c</a> <a href="http://[::ffff:10.0.0.1]/">d</a></p>`;
    const checkLinks = (p: ProvisionedServer, messageId: string, headers: Record<string, string> = p.auth) => p.server.inject({
        method: 'POST', url: `/v1/emails/${encodeURIComponent(messageId)}/checks/links`, headers
    });

    const stores: StoreFactory[] = [sqliteFsStores(), postgresFsStores()];
    for (const factory of stores) {
        describe(factory.name, () => {
            let p: ProvisionedServer;
            let off: ProvisionedServer;

            before(async () => {
                p = await provisionServer({ stores: factory, listen: true, plugin: { linkCheck: { allow: ['127.0.0.1/32'] } } });
                off = await provisionServer({ stores: factory });
                for (const server of [p, off]) {
                    await server.api.ingestForApi(buildMail({ messageId: 'news@shop.test', to: 'team-a-news@x.test', html: html(), htmlOnly: true }), { recipients: ['team-a-news@x.test'] });
                }
            });

            after(async () => {
                await p?.cleanup();
                await off?.cleanup();
            });

            it('answers every http(s) link of the email in order, with HEAD only', async () => {
                const res = await checkLinks(p, 'news@shop.test');
                expect(res.statusCode).to.equal(200);
                expect(res.result).to.equal({
                    links: [
                        { url: `${base}/missing`, ok: false, status: 404, redirects: [] },
                        { url: `${base}/moved`, ok: true, status: 200, redirects: [`${base}/ok`] },
                        { url: `${base}/ok`, ok: true, status: 200, redirects: [] },
                        { url: 'http://[::ffff:10.0.0.1]/', ok: false, error: 'NOT_ALLOWED', redirects: [] }
                    ]
                });
                expect(methods.every((m) => m === 'HEAD')).to.be.true();
            });

            it('refuses the service\'s own HTTP port though 127.0.0.1/32 is allowed', async () => {
                const own = `http://127.0.0.1:${p.server.info.port}/health`;
                await p.api.ingestForApi(buildMail({ messageId: 'self@shop.test', to: 'team-a-self@x.test', html: `<a href="${own}">me</a>`, htmlOnly: true }), { recipients: ['team-a-self@x.test'] });
                expect((await checkLinks(p, 'self@shop.test')).result).to.equal({ links: [{ url: own, ok: false, error: 'NOT_ALLOWED', redirects: [] }] });
            });

            it('is 401 without a key, 404 for an email that is not there or not the key\'s, 403 LINK_CHECK_DISABLED when off', async () => {
                expect((await checkLinks(p, 'news@shop.test', {})).statusCode).to.equal(401);
                const missing = await checkLinks(p, 'nope@shop.test');
                expect([missing.statusCode, missing.result]).to.equal([404, { error: 'NOT_FOUND' }]);
                const other = { authorization: `Bearer ${await p.api.capture.createKey('team-b', { inboxPrefix: 'team-b-' })}` };
                const hidden = await checkLinks(p, 'news@shop.test', other);
                expect([hidden.statusCode, hidden.result]).to.equal([404, { error: 'NOT_FOUND' }]);
                const reader = { authorization: `Bearer ${await p.api.capture.createKey('team-a-reader', { inboxPrefix: 'team-a-', readOnly: true })}` };
                expect((await checkLinks(p, 'news@shop.test', reader)).statusCode).to.equal(200);
                const disabled = await checkLinks(off, 'news@shop.test');
                expect([disabled.statusCode, disabled.result]).to.equal([403, { error: 'LINK_CHECK_DISABLED' }]);
                expect((await checkLinks(off, 'nope@shop.test')).statusCode).to.equal(404);
            });
        });
    }

    it('fails registration on a bad allow-list entry, naming it', async () => {
        await expect(provisionServer({ plugin: { linkCheck: { allow: ['http://x.test/'] } } })).to.reject(/linkCheck\.allow.*http:\/\/x\.test\//);
        await expect(provisionServer({ plugin: { linkCheck: { allow: [] } } })).to.reject(/linkCheck\.allow/);
    });
});
