import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import { InboxCaptureApiError, InboxCaptureClient } from '../../../adapters/client';
import { buildMail } from '../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('InboxCaptureClient checkLinks()', () => {
    let target: Http.Server;
    let base: string;
    let on: ProvisionedServer;
    let off: ProvisionedServer;

    before(async () => {
        target = Http.createServer((req, res) => res.writeHead(req.method === 'HEAD' && req.url === '/ok' ? 200 : 404).end());
        await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
        base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
        on = await provisionServer({ listen: true, plugin: { linkCheck: { allow: ['127.0.0.1/32'] } } });
        off = await provisionServer({ listen: true });
        const raw = buildMail({ messageId: 'a/b links@shop.test', html: `<a href="${base}/ok">ok</a> <a href="${base}/gone">gone</a>`, htmlOnly: true });
        await on.api.ingestForApi(raw, { recipients: ['links@x.test'] });
        await off.api.ingestForApi(raw, { recipients: ['links@x.test'] });
    });

    after(async () => {
        await on?.cleanup();
        await off?.cleanup();
        target?.closeAllConnections();
        await new Promise<void>((resolve) => target?.close(() => resolve()));
    });

    it('resolves to each link\'s outcome, in order', async () => {
        const client = new InboxCaptureClient({ baseUrl: on.server.info.uri, apiKey: on.apiKey });
        expect(await client.checkLinks('a/b links@shop.test')).to.equal([
            { url: `${base}/ok`, ok: true, status: 200, redirects: [] },
            { url: `${base}/gone`, ok: false, status: 404, redirects: [] }
        ]);
    });

    it('rejects with LINK_CHECK_DISABLED when the server has the check off', async () => {
        const client = new InboxCaptureClient({ baseUrl: off.server.info.uri, apiKey: off.apiKey });
        const err = await expect(client.checkLinks('a/b links@shop.test')).to.reject(InboxCaptureApiError);
        expect([err.status, err.code]).to.equal([403, 'LINK_CHECK_DISABLED']);
    });
});
