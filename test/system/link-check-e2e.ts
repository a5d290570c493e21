import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import { deliverRaw } from '../helpers/raw-smtp';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('link check of the standalone service', () => {
    let service: StandaloneService;
    let target: Http.Server;
    let targetBase: string;

    before(async () => {
        target = Http.createServer((req, res) => res.writeHead(req.method === 'HEAD' ? 200 : 500).end());
        await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
        targetBase = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
        service = await startStandalone({ env: { INBOX_CAPTURE_LINK_CHECK_ALLOW: '127.0.0.1/32' } });
    });

    after(async () => {
        await service?.stop();
        target?.closeAllConnections();
        await new Promise<void>((resolve) => target?.close(() => resolve()));
    });

    it('reaches a local app that 127.0.0.1/32 allows, but not the service\'s own HTTP and SMTP ports', async () => {
        const own = [service.baseUrl, `http://127.0.0.1:${service.smtpPort}`];
        const links = [`${targetBase}/ok`, `${own[0]}/health`, `${own[1]}/`];
        const html = links.map((href) => `<a href="${href}">x</a>`).join(' ');
        const raw = Buffer.from(`From: app@shop.test\r\nTo: links@example.test\r\nSubject: links\r\nMessage-ID: <links-e2e@shop.test>\r\nContent-Type: text/html\r\n\r\n<p>${html}</p>\r\n`);
        expect((await deliverRaw(service.smtpPort, raw, ['links@example.test'])).code).to.equal(250);
        const res = await fetch(`${service.baseUrl}/v1/emails/links-e2e%40shop.test/checks/links`, { method: 'POST', headers: { authorization: `Bearer ${service.apiKey}` } });
        expect(res.status).to.equal(200);
        expect(await res.json()).to.equal({
            links: [
                { url: links[0], ok: true, status: 200, redirects: [] },
                { url: links[1], ok: false, error: 'NOT_ALLOWED', redirects: [] },
                { url: links[2], ok: false, error: 'NOT_ALLOWED', redirects: [] }
            ]
        });
    });
});
