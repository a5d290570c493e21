import * as Fs from 'node:fs';
import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { AuthCheckView } from '../../../../adapters/hapi/api-types';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import { dkimKey, signed, type DkimKey } from '../../../helpers/signed-mail';
import { postgresFsStores, sqliteFsStores, type StoreFactory } from '../../../helpers/test-stores';
import { startDnsServer, type DnsServer } from '../../../helpers/dns-server';

// GET /v1/emails/{messageId}/checks/auth (docs/api.md, "Authentication check") on both
// record stores, against a DNS server on loopback that serves the records the test makes.

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const NEWSLETTER = Fs.readFileSync(Path.join(__dirname, '..', '..', '..', 'fixtures', 'html', 'newsletter.html'), 'utf8');
const DOMAIN = 'news.example';
const SELECTOR = 'sel';
const ALLOWED = '192.0.2.10';
const NOT_LISTED = '198.51.100.7';

/** The newsletter as its sender's mail server sends it. */
function newsletter(id: string, body = NEWSLETTER): string {
    return `From: The Weekly Brew <news@${DOMAIN}>\r\nTo: reader@example.test\r\nSubject: The Weekly Brew\r\nMessage-ID: <${id}>\r\n` +
        `Date: Sat, 28 Nov 2026 12:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${body.replace(/\r?\n/g, '\r\n')}\r\n`;
}

function authCheckSuite(factory: StoreFactory): void {
    describe(`GET /v1/emails/{messageId}/checks/auth (${factory.name})`, () => {
        let p: ProvisionedServer;
        let dns: DnsServer;
        let key: DkimKey;
        let release: (() => Promise<void>) | undefined;

        const check = (messageId: string, headers: Record<string, string> = p.auth) => p.server.inject({ url: `/v1/emails/${encodeURIComponent(messageId)}/checks/auth`, headers });
        const stored = async (raw: string, client: { clientAddress?: string; clientHelo?: string; mailFrom?: string }) => {
            const [view] = await p.api.ingestForApi(raw, { recipients: ['reader@example.test'], ...client });
            return view!.messageId;
        };
        const fromServer = (address: string) => ({ clientAddress: address, clientHelo: `mail.${DOMAIN}`, mailFrom: `bounces@${DOMAIN}` });

        before(async () => {
            release = await factory.hold?.();
            key = await dkimKey();
            dns = await startDnsServer({ txt: {
                [DOMAIN]: [`v=spf1 ip4:${ALLOWED} -all`],
                [`${SELECTOR}._domainkey.${DOMAIN}`]: [key.record],
                [`_dmarc.${DOMAIN}`]: ['v=DMARC1; p=reject']
            } });
            p = await provisionServer({ stores: factory, plugin: { authCheck: { dnsServers: [dns.address] } } });
        });

        after(async () => {
            await p?.cleanup();
            await dns?.close();
            await release?.();
        });

        it('passes SPF, DKIM and DMARC for a signed mail from an address the domain lists', async () => {
            const messageId = await stored(await signed(newsletter('signed@news.example'), key, DOMAIN, SELECTOR), fromServer(ALLOWED));
            const before = Date.now();
            const res = await check(messageId);
            expect(res.statusCode).to.equal(200);
            const result = res.result as AuthCheckView;
            expect(result).to.equal({
                spf: { result: 'pass', domain: DOMAIN },
                dkim: [{ result: 'pass', domain: DOMAIN, selector: SELECTOR }],
                dmarc: { result: 'pass', domain: DOMAIN, policy: 'reject' },
                arc: { result: 'none' },
                checkedAt: result.checkedAt
            });
            expect(result.checkedAt).to.be.between(before - 1, Date.now() + 1);
        });

        it('fails SPF and DMARC for an unsigned mail from an address the domain does not list', async () => {
            const messageId = await stored(newsletter('unsigned@news.example'), fromServer(NOT_LISTED));
            const result = (await check(messageId)).result as AuthCheckView;
            expect(result.spf).to.equal({ result: 'fail', domain: DOMAIN });
            expect(result.dkim).to.equal([{ result: 'none', domain: null, selector: null }]);
            expect(result.dmarc).to.equal({ result: 'fail', domain: DOMAIN, policy: 'reject' });
        });

        it('fails DKIM for a mail whose body changed after signing', async () => {
            const raw = await signed(newsletter('changed@news.example'), key, DOMAIN, SELECTOR);
            const messageId = await stored(raw.replace('This week at the roastery</h1>', 'This week at the roastery, changed</h1>'), fromServer(NOT_LISTED));
            expect(raw).to.include('This week at the roastery</h1>');
            const result = (await check(messageId)).result as AuthCheckView;
            expect(result.dkim).to.equal([{ result: 'fail', domain: DOMAIN, selector: SELECTOR }]);
            expect(result.dmarc.result).to.equal('fail');
        });

        it('answers SPF none without a kept client address, and asks DNS nothing for SPF', async () => {
            const messageId = await stored(await signed(newsletter('no-client@news.example'), key, DOMAIN, SELECTOR), { mailFrom: `bounces@${DOMAIN}` });
            const asked = dns.questions.length;
            const result = (await check(messageId)).result as AuthCheckView;
            expect(result.spf).to.equal({ result: 'none', domain: DOMAIN });
            expect(result.dkim).to.equal([{ result: 'pass', domain: DOMAIN, selector: SELECTOR }]);
            expect(result.dmarc.result).to.equal('pass');
            expect(dns.questions.slice(asked)).to.not.include(`TXT ${DOMAIN}`);
        });

        it('answers the kept result on the second request: checkedAt unchanged, no question asked', async () => {
            const messageId = await stored(await signed(newsletter('kept@news.example'), key, DOMAIN, SELECTOR), fromServer(ALLOWED));
            const first = (await check(messageId)).result as AuthCheckView;
            const asked = dns.questions.length;
            expect(asked).to.be.above(0);
            const second = await check(messageId);
            expect(second.statusCode).to.equal(200);
            expect(second.result).to.equal(first);
            expect(dns.questions.length).to.equal(asked);
        });

        it('answers temperror within the 5 s deadline when the DNS server is silent, keeps none of it, and checks again', { timeout: 20_000 }, async () => {
            const messageId = await stored(await signed(newsletter('silent@news.example'), key, DOMAIN, SELECTOR), fromServer(ALLOWED));
            dns.silent = true;
            const started = Date.now();
            let result: AuthCheckView;
            try {
                result = (await check(messageId)).result as AuthCheckView;
            }
            finally {
                dns.silent = false;
            }

            // Three lookups one after the other (the key, SPF, DMARC) would take 5 s each without the one deadline.
            expect(Date.now() - started).to.be.below(9000);
            expect(result.spf.result).to.equal('temperror');
            expect(result.dkim).to.equal([{ result: 'temperror', domain: DOMAIN, selector: SELECTOR }]);
            expect(result.dmarc.result).to.equal('temperror');
            const again = (await check(messageId)).result as AuthCheckView;
            expect(again.spf.result).to.equal('pass');
            expect(again.dmarc.result).to.equal('pass');
            expect(again.checkedAt).to.be.above(result.checkedAt - 1);
        });

        it('needs a key, then answers 404 for an unknown email', async () => {
            const messageId = await stored(newsletter('access@news.example'), fromServer(ALLOWED));
            expect((await check(messageId, {})).statusCode).to.equal(401);
            const missing = await check('nobody@nowhere.test');
            expect(missing.statusCode).to.equal(404);
            expect(missing.result).to.equal({ error: 'NOT_FOUND' });
        });
    });
}

authCheckSuite(sqliteFsStores());
authCheckSuite(postgresFsStores());
