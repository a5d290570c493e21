/**
 * The authentication check's time (docs/api.md, "Authentication check"): GET
 * /v1/emails/{id}/checks/auth through the plugin on the embedded stores, DNS to a dns2
 * server on 127.0.0.1 that serves the SPF, DKIM and DMARC records of the newsletter's
 * domain (the HTML check's fixture, signed with a key the bench makes). First check of
 * each email (DKIM verified, SPF, DMARC and ARC worked out, the answer kept), then the
 * kept answer of the same emails.
 *
 * node dist-bench/bench/auth-check.js [--emails 50] [--smoke]
 */

import * as Fs from 'node:fs';
import * as Path from 'node:path';
import * as Hapi from '@hapi/hapi';
import { plugin } from '../adapters/hapi';
import { dkimKey, signed } from '../test/helpers/signed-mail';
import { removeDir, tempDir } from '../test/helpers/temp-dir';
import { startDnsServer } from '../test/helpers/dns-server';
import { runBench } from './report';

const DOMAIN = 'news.example';
const NEWSLETTER = Fs.readFileSync(Path.join(__dirname, '..', '..', 'test', 'fixtures', 'html', 'newsletter.html'), 'utf8');

function percentile(values: number[], p: number): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

const ms = (value: number) => `${value.toFixed(1)} ms`;

runBench('auth-check', 'auth-check', async ({ smoke, values }) => {
    const emails = smoke ? 3 : Number(values.emails ?? 50);
    const key = await dkimKey();
    const dns = await startDnsServer({ txt: {
        [DOMAIN]: ['v=spf1 ip4:192.0.2.10 -all'],
        [`sel._domainkey.${DOMAIN}`]: [key.record],
        [`_dmarc.${DOMAIN}`]: ['v=DMARC1; p=reject']
    } });
    const dir = await tempDir('bench-auth-check');
    const server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false });
    try {
        await server.register({ plugin, options: { dataDir: dir, ui: false, mcp: false, authCheck: { dnsServers: [dns.address] } } });
        await server.initialize();
        const api = server.plugins['inbox-capture'];
        const token = await api.capture.createKey('bench');
        const ids: string[] = [];
        for (let i = 0; i < emails; i++) {
            const raw = `From: The Weekly Brew <news@${DOMAIN}>\r\nTo: bench@x.test\r\nSubject: The Weekly Brew ${i}\r\nMessage-ID: <auth-${i}@${DOMAIN}>\r\n` +
                `MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${NEWSLETTER.replace(/\r?\n/g, '\r\n')}\r\n`;
            const [view] = await api.ingestForApi(await signed(raw, key, DOMAIN, 'sel'), { recipients: ['bench@x.test'], clientAddress: '192.0.2.10', clientHelo: `mail.${DOMAIN}`, mailFrom: `bounces@${DOMAIN}` });
            ids.push(view!.messageId);
        }

        const rows: string[][] = [];
        let sample = '';
        for (const pass of ['first check', 'kept answer'] as const) {
            const times: number[] = [];
            const asked = dns.questions.length;
            for (const id of ids) {
                const started = process.hrtime.bigint();
                const res = await server.inject({ url: `/v1/emails/${encodeURIComponent(id)}/checks/auth`, headers: { authorization: `Bearer ${token}` } });
                times.push(Number(process.hrtime.bigint() - started) / 1e6);
                const body = res.result as { spf: { result: string }; dkim: Array<{ result: string }>; dmarc: { result: string } };
                if (res.statusCode !== 200 || body.spf.result !== 'pass' || body.dkim[0]!.result !== 'pass' || body.dmarc.result !== 'pass') {
                    throw new Error(`unexpected answer: ${res.statusCode} ${JSON.stringify(res.result)}`);
                }

                sample = JSON.stringify(res.result);
            }

            rows.push([pass, String(emails), ms(percentile(times, 0.5)), ms(percentile(times, 0.9)), ms(Math.max(...times)), ((dns.questions.length - asked) / emails).toFixed(1)]);
        }

        return {
            tables: [{
                title: `Authentication check of a signed ${Math.round(Buffer.byteLength(NEWSLETTER) / 1024)} KB newsletter, DNS on 127.0.0.1 (dns2), one request at a time`,
                columns: ['request', 'emails', 'median', 'p90', 'max', 'DNS questions per email'],
                rows
            }],
            targets: [],
            notes: [`answer: ${sample}`]
        };
    }
    finally {
        await server.stop();
        await removeDir(dir);
        await dns.close();
    }
}, ['emails']);
