import * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InboxCaptureClient } from '../../../../adapters/client';
import { createClientAccess } from '../../../../adapters/mcp/client-access';
import { ToolError } from '../../../../adapters/mcp/mail-access';
import { call, structured, textOf } from '../../../helpers/mcp-scenario';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import { dkimKey, signed } from '../../../helpers/signed-mail';
import { startDnsServer, type DnsServer } from '../../../helpers/dns-server';

// MCP check_email's links and auth (docs/api.md, "MCP"), through /mcp with the SDK's client:
// the link check on and off, the authentication check against a DNS server of the test's.

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('MCP check_email: links and auth', () => {
    let dns: DnsServer;
    let target: Http.Server;
    let base: string;
    let on: ProvisionedServer;
    let off: ProvisionedServer;
    const clients: Client[] = [];

    const connect = async (p: ProvisionedServer) => {
        const client = new Client({ name: 'inbox-capture-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${p.server.info.uri}/mcp`), { requestInit: { headers: p.auth } }));
        clients.push(client);
        return client;
    };

    before(async () => {
        const key = await dkimKey();
        dns = await startDnsServer({ txt: {
            'shop.test': ['v=spf1 ip4:203.0.113.5 -all'],
            'k1._domainkey.shop.test': [key.record],
            '_dmarc.shop.test': ['v=DMARC1; p=reject']
        } });
        target = Http.createServer((req, res) => res.writeHead(req.method === 'HEAD' && req.url === '/ok' ? 200 : 404).end());
        await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
        base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
        on = await provisionServer({ listen: true, plugin: { linkCheck: { allow: ['127.0.0.1/32'] }, authCheck: { dnsServers: [dns.address] } } });
        off = await provisionServer({ listen: true, plugin: { authCheck: { dnsServers: [dns.address] } } });
        const raw = 'From: Shop <orders@shop.test>\r\nTo: mcp@x.test\r\nSubject: Your order\r\nMessage-ID: <mcp-checks@shop.test>\r\nMIME-Version: 1.0\r\n' +
            `Content-Type: text/html; charset=utf-8\r\n\r\n<p><a href="${base}/ok">Track</a> <a href="${base}/gone">Old</a></p>\r\n`;
        const mail = await signed(raw, key, 'shop.test', 'k1');
        for (const p of [on, off]) {
            await p.api.ingestForApi(mail, { recipients: ['mcp@x.test'], clientAddress: '203.0.113.5', clientHelo: 'mx.shop.test', mailFrom: 'bounce@shop.test' });
        }
    });

    after(async () => {
        await Promise.all(clients.map((c) => c.close()));
        await on?.cleanup();
        await off?.cleanup();
        target?.closeAllConnections();
        await new Promise<void>((resolve) => target?.close(() => resolve()));
        await dns?.close();
    });

    it('runs every check by default: the HTML, each link with HEAD, and the authentication verdicts', async () => {
        const result = await call(await connect(on), 'check_email', { messageId: 'mcp-checks@shop.test' });
        const got = structured<{ html: { score: number }; links: unknown[]; auth: Record<string, unknown> & { checkedAt: number } }>(result);
        expect(got.html.score).to.be.a.number();
        expect(got.links).to.equal([
            { url: `${base}/ok`, ok: true, status: 200, redirects: [] },
            { url: `${base}/gone`, ok: false, status: 404, redirects: [] }
        ]);
        expect(got.auth).to.equal({
            spf: { result: 'pass', domain: 'shop.test' },
            dkim: [{ result: 'pass', domain: 'shop.test', selector: 'k1' }],
            dmarc: { result: 'pass', domain: 'shop.test', policy: 'reject' },
            arc: { result: 'none' },
            checkedAt: got.auth.checkedAt
        });
        const text = textOf(result);
        expect(text).to.contain('Links: 1 of 2 answered below 400.');
        expect(text).to.contain(`- broken 404 ${base}/gone`);
        expect(text).to.contain('Authentication: SPF pass (shop.test); DKIM pass (shop.test, selector k1); DMARC pass (shop.test, p=reject); ARC none.');
    });

    it('says the link check is disabled when the service has it off, and still answers the rest', async () => {
        const result = await call(await connect(off), 'check_email', { messageId: 'mcp-checks@shop.test', checks: ['links', 'auth'] });
        expect(result.isError).to.not.be.true();
        const got = structured<{ links: unknown; auth: { spf: unknown }; html?: unknown }>(result);
        expect(got.links).to.be.null();
        expect(got.html).to.not.exist();
        expect(got.auth.spf).to.equal({ result: 'pass', domain: 'shop.test' });
        expect(textOf(result)).to.contain('Links: the link check is disabled on this service (INBOX_CAPTURE_LINK_CHECK_ALLOW is not set).');
    });

    it('over the HTTP API too (the stdio server\'s access): off is null, an unknown email NOT_FOUND', async () => {
        const signal = new AbortController().signal;
        const access = (p: ProvisionedServer) => createClientAccess({ client: new InboxCaptureClient({ baseUrl: p.server.info.uri, apiKey: p.apiKey }), mailDomain: 'x.test' });
        expect(await access(off).checkLinks('mcp-checks@shop.test', signal)).to.be.null();
        expect(await access(on).checkLinks('mcp-checks@shop.test', signal)).to.have.length(2);
        expect((await access(on).checkAuth('mcp-checks@shop.test', signal)).dmarc).to.equal({ result: 'pass', domain: 'shop.test', policy: 'reject' });
        const err = await expect(access(off).checkLinks('nobody@shop.test', signal)).to.reject(ToolError);
        expect(err.code).to.equal('NOT_FOUND');
    });

    it('says in its description what each check needs', async () => {
        const { tools } = await (await connect(on)).listTools();
        const description = tools.find((t) => t.name === 'check_email')!.description!;
        expect(description).to.contain('INBOX_CAPTURE_LINK_CHECK_ALLOW');
        expect(description).to.contain('SMTP client\'s address');
        expect(description).to.contain('INBOX_CAPTURE_DNS_SERVERS');
    });
});
