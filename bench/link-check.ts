/**
 * The link check's time for one email of 100 links against local servers (docs/api.md,
 * "Link check"): POST /v1/emails/{id}/checks/links through the plugin on the embedded
 * stores, the links spread over 4 HTTP servers on 127.0.0.1 that answer HEAD at once, or
 * after `--delay-ms` (a far site's round trip), every tenth with a redirect first. 5 links
 * are asked at once, so the delayed case is bounded below by 100 / 5 x 2 round trips.
 *
 * node dist-bench/bench/link-check.js [--rounds 5] [--delay-ms 20] [--smoke]
 */

import * as Hapi from '@hapi/hapi';
import * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import { plugin } from '../adapters/hapi';
import { removeDir, tempDir } from '../test/helpers/temp-dir';

function option(name: string, fallback: string): string {
    const at = process.argv.indexOf(`--${name}`);
    return at === -1 ? fallback : process.argv[at + 1]!;
}

const smoke = process.argv.includes('--smoke');
const rounds = smoke ? 1 : Number(option('rounds', '5'));
const delayMs = Number(option('delay-ms', '20'));

async function startTargets(count: number, delay: () => number): Promise<{ bases: string[]; heads: () => number; close(): Promise<void> }> {
    let heads = 0;
    const servers = await Promise.all(Array.from({ length: count }, async () => {
        const server = Http.createServer((req, res) => {
            heads += req.method === 'HEAD' ? 1 : 0;
            const answer = () => (req.url?.startsWith('/r/') ? res.writeHead(302, { location: `/p/${req.url.slice(3)}` }) : res.writeHead(200)).end();
            const ms = delay();
            if (ms === 0) {
                answer();
            }
            else {
                setTimeout(answer, ms);
            }
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        return server;
    }));
    return {
        bases: servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`),
        heads: () => heads,
        close: async () => {
            await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
        }
    };
}

function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
    let delay = 0;
    const targets = await startTargets(4, () => delay);
    const dir = await tempDir('bench-link-check');
    const server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false });
    try {
        await server.register({ plugin, options: { dataDir: dir, ui: false, mcp: false, linkCheck: { allow: ['127.0.0.1/32'] } } });
        await server.initialize();
        const api = server.plugins['inbox-capture'];
        const key = await api.capture.createKey('bench');
        const links = Array.from({ length: 100 }, (_, i) => `${targets.bases[i % 4]}/${i % 10 === 0 ? 'r' : 'p'}/${i}`);
        const html = links.map((href, i) => `<a href="${href}">link ${i}</a>`).join('\n');
        const raw = `From: news@shop.test\r\nTo: bench@x.test\r\nSubject: 100 links\r\nMessage-ID: <links@bench.test>\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>${html}</p>\r\n`;
        await api.ingestForApi(raw, { recipients: ['bench@x.test'] });

        const rows: string[] = [];
        for (const ms of [0, delayMs]) {
            delay = ms;
            const times: number[] = [];
            for (let round = 0; round < rounds; round++) {
                const heads = targets.heads();
                const started = process.hrtime.bigint();
                const res = await server.inject({ method: 'POST', url: '/v1/emails/links%40bench.test/checks/links', headers: { authorization: `Bearer ${key}` } });
                times.push(Number(process.hrtime.bigint() - started) / 1e6);
                const body = res.result as { links: Array<{ ok: boolean }> };
                if (res.statusCode !== 200 || body.links.length !== 100 || !body.links.every((l) => l.ok) || targets.heads() - heads !== 110) {
                    throw new Error(`unexpected answer: ${res.statusCode} ${JSON.stringify(res.result).slice(0, 300)}`);
                }
            }

            rows.push(`| ${ms} ms | ${rounds} | ${median(times).toFixed(1)} ms | ${Math.min(...times).toFixed(1)} ms | ${Math.max(...times).toFixed(1)} ms |`);
        }

        console.log('Link check: 100 links (10 of them one redirect: 110 HEADs), 4 servers on 127.0.0.1, 5 at once\n');
        console.log('| server delay | rounds | median | min | max |');
        console.log('|---|---|---|---|---|');
        console.log(rows.join('\n'));
    }
    finally {
        await server.stop();
        await targets.close();
        await removeDir(dir);
    }
}

main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
});
