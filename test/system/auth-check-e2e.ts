import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { InboxCaptureClient } from '../../adapters/client';
import { runNode } from '../helpers/child-process';
import { serviceBackends } from '../helpers/service-backends';
import { dkimKey, signed, type DkimKey } from '../helpers/signed-mail';
import { spawnStandalone } from '../helpers/standalone-service';
import { startDnsServer, type DnsServer } from '../helpers/dns-server';

// The authentication check of the program (docs/api.md, "Authentication check"): mail sent
// over SMTP to the standalone service, checked with the DNS servers of INBOX_CAPTURE_DNS_SERVERS.

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');
const DOMAIN = 'news.example';

describe('authentication check of the standalone service (real SMTP, INBOX_CAPTURE_DNS_SERVERS)', () => {
    let dns: DnsServer;
    let key: DkimKey;

    before(async () => {
        key = await dkimKey();
        dns = await startDnsServer({ txt: {
            [DOMAIN]: ['v=spf1 ip4:127.0.0.1 -all'],
            [`sel._domainkey.${DOMAIN}`]: [key.record],
            [`_dmarc.${DOMAIN}`]: ['v=DMARC1; p=reject']
        } });
    });

    after(async () => {
        await dns?.close();
    });

    for (const [name, env] of serviceBackends({ before, after })) {
        it(`passes SPF, DKIM and DMARC for signed mail from a listed address, and keeps the answer, on ${name}`, async () => {
            const serviceEnv = { ...await env(), INBOX_CAPTURE_DNS_SERVERS: dns.address };
            const service = await spawnStandalone(serviceEnv);
            const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: service.smtpPort, secure: false, ignoreTLS: true, name: `mail.${DOMAIN}` });
            try {
                const created = await runNode([BIN, 'keys', 'create', 'auth'], { cwd: ROOT, env: serviceEnv });
                expect(created.code, created.stderr).to.equal(0);
                const client = new InboxCaptureClient({ baseUrl: service.base, apiKey: created.stdout.trim() });
                const raw = `From: The Weekly Brew <news@${DOMAIN}>\r\nTo: auth-e2e@example.test\r\nSubject: This week\r\nMessage-ID: <auth-e2e-${name.length}@${DOMAIN}>\r\n\r\nNew beans.\r\n`;
                await transport.sendMail({ envelope: { from: `bounces@${DOMAIN}`, to: ['auth-e2e@example.test'] }, raw: await signed(raw, key, DOMAIN, 'sel') });
                const email = await client.waitForEmail({ inbox: 'auth-e2e', timeoutMs: 20_000 });
                const result = await client.checkAuth(email.messageId);
                expect(result).to.equal({
                    spf: { result: 'pass', domain: DOMAIN },
                    dkim: [{ result: 'pass', domain: DOMAIN, selector: 'sel' }],
                    dmarc: { result: 'pass', domain: DOMAIN, policy: 'reject' },
                    arc: { result: 'none' },
                    checkedAt: result.checkedAt
                });
                const asked = dns.questions.length;
                expect(await client.checkAuth(email.messageId)).to.equal(result);
                expect(dns.questions.length).to.equal(asked);
            }
            finally {
                transport.close();
                service.child.kill('SIGKILL');
                await service.exited;
            }
        });
    }
});
