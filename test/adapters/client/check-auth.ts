import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { InboxCaptureApiError, InboxCaptureClient } from '../../../adapters/client';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';
import { dkimKey, signed } from '../../helpers/signed-mail';
import { startDnsServer, type DnsServer } from '../../helpers/dns-server';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('InboxCaptureClient checkAuth()', () => {
    let dns: DnsServer;
    let p: ProvisionedServer;

    before(async () => {
        const key = await dkimKey();
        dns = await startDnsServer({ txt: {
            'shop.test': ['v=spf1 ip4:203.0.113.5 ~all'],
            'k1._domainkey.shop.test': [key.record],
            '_dmarc.shop.test': ['v=DMARC1; p=none']
        } });
        p = await provisionServer({ listen: true, plugin: { authCheck: { dnsServers: [dns.address] } } });
        const raw = 'From: Shop <orders@shop.test>\r\nTo: auth@x.test\r\nSubject: Your order\r\nMessage-ID: <a/b auth@shop.test>\r\n\r\nThanks.\r\n';
        await p.api.ingestForApi(await signed(raw, key, 'shop.test', 'k1'), { recipients: ['auth@x.test'], clientAddress: '198.51.100.9', clientHelo: 'mx.shop.test', mailFrom: 'bounce@shop.test' });
    });

    after(async () => {
        await p?.cleanup();
        await dns?.close();
    });

    it('resolves to the verdicts, the same on the second call', async () => {
        const client = new InboxCaptureClient({ baseUrl: p.server.info.uri, apiKey: p.apiKey });
        const result = await client.checkAuth('a/b auth@shop.test');
        expect(result).to.equal({
            spf: { result: 'softfail', domain: 'shop.test' },
            dkim: [{ result: 'pass', domain: 'shop.test', selector: 'k1' }],
            dmarc: { result: 'pass', domain: 'shop.test', policy: 'none' },
            arc: { result: 'none' },
            checkedAt: result.checkedAt
        });
        expect(await client.checkAuth('a/b auth@shop.test')).to.equal(result);
    });

    it('rejects with NOT_FOUND for an email that is not there', async () => {
        const client = new InboxCaptureClient({ baseUrl: p.server.info.uri, apiKey: p.apiKey });
        const err = await expect(client.checkAuth('nobody@x.test')).to.reject(InboxCaptureApiError);
        expect([err.status, err.code]).to.equal([404, 'NOT_FOUND']);
    });
});
