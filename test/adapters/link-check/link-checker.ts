import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Http from 'node:http';
import * as Https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createLinkChecker, type LinkResult } from '../../../adapters/link-check/link-checker';
import { parseLinkAllowList } from '../../../lib/link-check/allow-list';
import { startDnsServer, type DnsServer } from '../../helpers/dns-server';
import { freePort } from '../../helpers/net';
import { makeCertificateFiles, type CertificateFiles } from '../../helpers/tls-files';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** A loopback HTTP server that answers by path and remembers every request; a GET is a failure of the test. */
interface Target {
    port: number;
    base: string;
    requests: Array<{ method: string; path: string; host: string }>;
    /** Most requests open at once, and how long /hold/* waits before answering. */
    maxOpen: number;
    close(): Promise<void>;
}

async function startTarget(): Promise<Target> {
    let open = 0;
    const target = { requests: [], maxOpen: 0 } as unknown as Target;
    const hanging: Http.ServerResponse[] = [];
    const server = Http.createServer((req, res) => {
        const path = req.url ?? '/';
        target.requests.push({ method: req.method ?? '', path, host: req.headers.host ?? '' });
        if (req.method !== 'HEAD') {
            res.writeHead(500).end();
            return;
        }

        const hop = /^\/redirect\/(\d+)$/.exec(path);
        if (path === '/ok') {
            res.writeHead(200).end();
        }
        else if (path === '/missing') {
            res.writeHead(404).end();
        }
        else if (hop) {
            const left = Number(hop[1]);
            res.writeHead(left === 0 ? 204 : 302, left === 0 ? {} : { location: `/redirect/${left - 1}` }).end();
        }
        else if (path.startsWith('/to?')) {
            res.writeHead(301, { location: decodeURIComponent(path.slice(4)) }).end();
        }
        else if (path === '/hang') {
            hanging.push(res);
        }
        else if (path.startsWith('/hold/')) {
            open++;
            target.maxOpen = Math.max(target.maxOpen, open);
            setTimeout(() => {
                open--;
                res.writeHead(200).end();
            }, 30);
        }
        else {
            res.writeHead(404).end();
        }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    target.port = (server.address() as AddressInfo).port;
    target.base = `http://127.0.0.1:${target.port}`;
    target.close = () => {
        server.closeAllConnections();
        return new Promise<void>((resolve) => server.close(() => resolve()));
    };
    return target;
}

describe('adapters/link-check/link-checker', () => {
    let target: Target;
    let dns: DnsServer;
    let certs: CertificateFiles;
    let tlsServer: Https.Server;
    let tlsPort: number;

    before(async () => {
        target = await startTarget();
        dns = await startDnsServer({ addresses: { 'good.test': ['127.0.0.1'], 'public.test': ['127.0.0.1'], 'mixed.test': ['127.0.0.1', '10.1.2.3'], 'inside.test': ['10.1.2.3'] } });
        certs = await makeCertificateFiles();
        tlsServer = Https.createServer({ key: certs.key, cert: certs.cert }, (_req, res) => res.writeHead(200).end());
        await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
        tlsPort = (tlsServer.address() as AddressInfo).port;
    });

    after(async () => {
        await target?.close();
        await dns?.close();
        tlsServer?.closeAllConnections();
        await new Promise<void>((resolve) => tlsServer?.close(() => resolve()));
        await certs?.remove();
    });

    // Checks `urls` with an allow-list; afterwards no request that reached the target may be a GET.
    const check = async (allow: string[], urls: string[], settings: { timeoutMs?: number; ownPorts?: number[] } = {}): Promise<LinkResult[]> => {
        const checker = createLinkChecker({
            allow: parseLinkAllowList(allow),
            timeoutMs: settings.timeoutMs ?? 5000,
            dnsServers: [dns.address],
            ownPorts: () => settings.ownPorts ?? []
        });
        const results = await checker.check(urls);
        expect(target.requests.filter((r) => r.method !== 'HEAD')).to.equal([]);
        return results;
    };

    const LOOPBACK = ['127.0.0.1/32'];

    it('answers 200 as ok and 404 as not ok, in the links\' order, with HEAD only', async () => {
        const before = target.requests.length;
        const results = await check(LOOPBACK, [`${target.base}/missing`, `${target.base}/ok`]);
        expect(results).to.equal([
            { url: `${target.base}/missing`, ok: false, status: 404, redirects: [] },
            { url: `${target.base}/ok`, ok: true, status: 200, redirects: [] }
        ]);
        expect(target.requests.slice(before).map((r) => r.method).sort()).to.equal(['HEAD', 'HEAD']);
    });

    it('follows redirects by hand, asking each hop with HEAD, up to 5; a sixth is TOO_MANY_REDIRECTS', async () => {
        const five = await check(LOOPBACK, [`${target.base}/redirect/5`]);
        expect(five).to.equal([{
            url: `${target.base}/redirect/5`, ok: true, status: 204,
            redirects: [4, 3, 2, 1, 0].map((n) => `${target.base}/redirect/${n}`)
        }]);
        const before = target.requests.length;
        const six = await check(LOOPBACK, [`${target.base}/redirect/6`]);
        expect(six).to.equal([{
            url: `${target.base}/redirect/6`, ok: false, status: 302, error: 'TOO_MANY_REDIRECTS',
            redirects: [5, 4, 3, 2, 1].map((n) => `${target.base}/redirect/${n}`)
        }]);
        // The sixth redirect was not followed.
        expect(target.requests.slice(before).map((r) => r.path)).to.equal([6, 5, 4, 3, 2, 1].map((n) => `/redirect/${n}`));
    });

    it('ends a link that gets no answer in TIMEOUT, a closed port in REFUSED, an unknown name in DNS, a self-signed certificate in TLS', async () => {
        const closed = await freePort();
        const results = await check(['127.0.0.1/32', 'nowhere.test'], [
            `${target.base}/hang`, `http://127.0.0.1:${closed}/`, 'http://nowhere.test/', `https://localhost:${tlsPort}/`, `https://127.0.0.1:${tlsPort}/`
        ], { timeoutMs: 300 });
        expect(results.map((r) => r.error)).to.equal(['TIMEOUT', 'REFUSED', 'DNS', 'DNS', 'TLS']);
        expect(results.every((r) => !r.ok && r.status === undefined)).to.be.true();
    });

    it('connects to the address the DNS server gave, once looked up, with the URL\'s host in Host', async () => {
        dns.questions.length = 0;
        const before = target.requests.length;
        // The system resolver knows no good.test: reaching the target proves the checked address was dialled.
        const results = await check(['good.test', '127.0.0.1/32'], [`http://good.test:${target.port}/ok`]);
        expect(results).to.equal([{ url: `http://good.test:${target.port}/ok`, ok: true, status: 200, redirects: [] }]);
        expect(target.requests.slice(before)).to.equal([{ method: 'HEAD', path: '/ok', host: `good.test:${target.port}` }]);
        expect(dns.questions.sort()).to.equal(['A good.test', 'AAAA good.test']);
    });

    it('refuses a name on the list whose address is loopback unless a CIDR names it, and a name with any denied address', async () => {
        const before = target.requests.length;
        expect((await check(['good.test'], [`http://good.test:${target.port}/ok`]))[0].error).to.equal('NOT_ALLOWED');
        expect((await check(['public'], [`http://public.test:${target.port}/ok`]))[0].error).to.equal('NOT_ALLOWED');
        expect((await check(['mixed.test', '127.0.0.1/32'], [`http://mixed.test:${target.port}/ok`]))[0].error).to.equal('NOT_ALLOWED');
        // An address that no entry names, under a name that is not its own.
        expect((await check(['other.test'], [`${target.base}/ok`]))[0].error).to.equal('NOT_ALLOWED');
        expect(target.requests.length).to.equal(before);
    });

    it('refuses every literal form of a denied address without sending anything', async () => {
        const port = target.port;
        const forms = [
            `http://2130706433:${port}/ok`, `http://0177.0.0.1:${port}/ok`, `http://0x7f.0.0.1:${port}/ok`, `http://0x7f000001:${port}/ok`,
            `http://127.1:${port}/ok`, `http://0.0.0.0:${port}/ok`, `http://[::]:${port}/ok`, `http://[::1]:${port}/ok`,
            `http://[::ffff:127.0.0.1]:${port}/ok`, `http://[::ffff:7f00:1]:${port}/ok`, `http://[64:ff9b::7f00:1]:${port}/ok`,
            `http://[64:ff9b:1::a00:1]:${port}/ok`, `http://[2002:7f00:1::]:${port}/ok`, `http://[2001:0:7f00:1::]:${port}/ok`,
            `http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:${port}/ok`,
            `http://10.0.0.1:${port}/`, `http://172.16.0.1/`, `http://192.168.1.1/`, `http://169.254.169.254/latest/meta-data/`,
            `http://100.64.0.1/`, `http://224.0.0.1/`, `http://255.255.255.255/`, `http://[fc00::1]/`, `http://[fd12::1]/`, `http://[fe80::1]/`, `http://[ff02::1]/`
        ];
        const before = target.requests.length;
        const results = await check(['public'], forms);
        expect(results.map((r) => `${r.url} ${r.error}`)).to.equal(forms.map((url) => `${url} NOT_ALLOWED`));
        expect(target.requests.length).to.equal(before);
    });

    it('judges every hop: a redirect from an allowed host to a denied address is NOT_ALLOWED, and nothing is sent there', async () => {
        const denied = ['http://10.0.0.1/admin', 'http://169.254.169.254/', `http://[::ffff:10.0.0.1]:${target.port}/ok`, `http://inside.test:${target.port}/ok`, 'file:///etc/passwd'];
        const urls = denied.map((to) => `${target.base}/to?${encodeURIComponent(to)}`);
        const results = await check(['127.0.0.1/32', 'public'], urls);
        expect(results.map((r) => r.error)).to.equal(denied.map(() => 'NOT_ALLOWED'));
        expect(results.map((r) => r.redirects)).to.equal(denied.map((to) => [new URL(to).href]));
    });

    it('allows loopback only when a CIDR names it, and the service\'s own ports only when listed with the port', async () => {
        const ok = `${target.base}/ok`;
        expect((await check(['public'], [ok]))[0].error).to.equal('NOT_ALLOWED');
        expect((await check(['localhost', '*.local'], [ok]))[0].error).to.equal('NOT_ALLOWED');
        expect((await check(['127.0.0.1/32'], [ok]))[0]).to.equal({ url: ok, ok: true, status: 200, redirects: [] });
        // The target's port as the service's own: refused, though the CIDR allows the address.
        expect((await check(['127.0.0.1/32'], [ok], { ownPorts: [target.port] }))[0].error).to.equal('NOT_ALLOWED');
        expect((await check(['127.0.0.0/8'], [ok], { ownPorts: [target.port] }))[0].error).to.equal('NOT_ALLOWED');
        expect((await check(['127.0.0.1/32', `127.0.0.1:${target.port}`], [ok], { ownPorts: [target.port] }))[0].ok).to.be.true();
        // A port entry allows that port alone.
        expect((await check([`127.0.0.1:${target.port + 1}`], [ok]))[0].error).to.equal('NOT_ALLOWED');
        expect((await check([`127.0.0.1:${target.port}`], [ok]))[0].ok).to.be.true();
    });

    it('asks at most 5 links at once, and each URL once', async () => {
        const urls = Array.from({ length: 12 }, (_, i) => `${target.base}/hold/${i}`);
        target.maxOpen = 0;
        const before = target.requests.length;
        const results = await check(LOOPBACK, [...urls, urls[0]]);
        expect(results.every((r) => r.ok)).to.be.true();
        expect(results.length).to.equal(13);
        expect(target.maxOpen).to.equal(5);
        expect(target.requests.length - before).to.equal(12);
    });

    it('shares the 5 among checks running at the same time', async () => {
        const checker = createLinkChecker({ allow: parseLinkAllowList(LOOPBACK), timeoutMs: 5000, ownPorts: () => [] });
        target.maxOpen = 0;
        const batch = (tag: string) => checker.check(Array.from({ length: 4 }, (_, i) => `${target.base}/hold/${tag}${i}`));
        const [a, b, c] = await Promise.all([batch('a'), batch('b'), batch('c')]);
        expect([...a, ...b, ...c].every((r) => r.ok)).to.be.true();
        expect(target.maxOpen).to.equal(5);
    });
});
