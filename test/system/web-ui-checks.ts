import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs';
import * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as Path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser';
import { buildMail } from '../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../helpers/provision-server';
import { dkimKey, signed, type DkimKey } from '../helpers/signed-mail';
import { startDnsServer, type DnsServer } from '../helpers/dns-server';
import { contextWithKey, openUi, waitForHash } from '../helpers/web-ui';

// The Checks tab of the web interface (docs/ui.md, "What it does") in a real Chromium,
// against a real service: the HTML check when the tab opens, the link check on a click
// against local HTTP servers, the message when the link check is off, and the
// authentication verdicts against a DNS server on loopback with records the test makes.

const { expect } = Code;
const { describe, it, before, after, afterEach } = exports.lab = Lab.script();

const NEWSLETTER = Fs.readFileSync(Path.join(__dirname, '..', 'fixtures', 'html', 'newsletter.html'), 'utf8');
const DOMAIN = 'news.example';
const SELECTOR = 'sel';
const LISTED = '192.0.2.10';

describe('web interface: the Checks tab', () => {
    let browser: Browser;
    let p: ProvisionedServer;
    let off: ProvisionedServer;
    let target: Http.Server;
    let base: string;
    let closedPort: number;
    let context: BrowserContext | undefined;
    let dns: DnsServer;
    let key: DkimKey;
    const asked: string[] = [];

    before(async () => {
        target = Http.createServer((req, res) => {
            asked.push(`${req.method} ${req.url}`);
            const status = req.url === '/ok' ? 200 : req.url === '/moved' ? 301 : 404;
            res.writeHead(status, req.url === '/moved' ? { location: '/ok' } : {}).end();
        });
        await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
        base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
        // A port nothing listens on: taken, then given back.
        const closed = Http.createServer();
        await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
        closedPort = (closed.address() as AddressInfo).port;
        await new Promise<void>((resolve) => closed.close(() => resolve()));

        key = await dkimKey();
        dns = await startDnsServer({ txt: {
            [DOMAIN]: [`v=spf1 ip4:${LISTED} -all`],
            [`${SELECTOR}._domainkey.${DOMAIN}`]: [key.record],
            [`_dmarc.${DOMAIN}`]: ['v=DMARC1; p=reject']
        } });
        browser = await launchBrowser();
        p = await provisionServer({ listen: true, plugin: { linkCheck: { allow: ['127.0.0.1/32'] }, authCheck: { dnsServers: [dns.address] } } });
        off = await provisionServer({ listen: true });
    });

    after(async () => {
        await browser?.close();
        await p?.cleanup();
        await off?.cleanup();
        await dns?.close();
        target?.closeAllConnections();
        await new Promise<void>((resolve) => target ? target.close(() => resolve()) : resolve());
    });

    afterEach(async () => {
        await context?.close();
        context = undefined;
        asked.length = 0;
    });

    /** The newsletter fixture, its two links pointed at the local server (plus a redirect and a refused one). */
    const newsletter = () => NEWSLETTER
        .replace('https://news.example.com/shop?utm_source=newsletter', `${base}/moved`)
        .replace('https://news.example.com/unsubscribe?u=42', `${base}/missing`)
        .replace('</body>', `<p><a href="${base}/ok">ok</a> <a href="http://127.0.0.1:${closedPort}/gone">gone</a></p></body>`);

    const deliver = async (server: ProvisionedServer, inbox: string, mail: Parameters<typeof buildMail>[0]) => {
        const [email] = await server.api.ingestForApi(buildMail({ to: `${inbox}@test.example`, ...mail }), { recipients: [`${inbox}@test.example`] });
        return email!;
    };

    const openChecks = async (server: ProvisionedServer, inbox: string, messageId: string): Promise<Page> => {
        context = await contextWithKey(browser, server.apiKey, { viewport: { width: 1280, height: 900 } });
        const page = await context.newPage();
        await openUi(page, server.server.info.uri, `#/inbox/${inbox}/email/${encodeURIComponent(messageId)}/checks`);
        return page;
    };

    it('shows the HTML check\'s score, a known finding with the clients that lack it, and the data source, without asking any link', async () => {
        const email = await deliver(p, 'checks-html', { subject: 'The Weekly Brew', html: newsletter() });
        const page = await openChecks(p, 'checks-html', email.messageId);
        await page.locator('#check-html .score-value').waitFor();
        expect(await page.locator('#tab-checks').getAttribute('aria-selected')).to.equal('true');
        expect(await page.locator('#check-html .score-value').textContent()).to.equal('84');
        expect(await page.locator('#check-html meter').getAttribute('value')).to.equal('84');
        const video = page.locator('#check-html table.findings tbody tr', { has: page.locator('th', { hasText: '<video> element' }) });
        expect(await video.locator('th a').getAttribute('href')).to.equal('https://www.caniemail.com/features/html-video/');
        expect(await video.locator('th a').getAttribute('rel')).to.equal('noopener noreferrer');
        // Grouped by family; "all" is every client of the family checked (outlook.macos has it).
        expect(await video.locator('td.unsupported').textContent()).to.equal('gmail (all); outlook: android, ios, outlook-com, windows, windows-mail; yahoo (all)');
        expect(await video.locator('td.partial').textContent()).to.equal('apple-mail: ios; samsung-email (all)');
        expect(await video.locator('td.count').textContent()).to.equal('1');
        const flex = page.locator('#check-html table.findings tbody tr', { has: page.locator('th', { hasText: 'display:flex' }) });
        expect(await flex.locator('td.unsupported').textContent()).to.equal('outlook: windows, windows-mail');
        // Beyond the worst five, behind "more", which the keyboard opens.
        expect(await page.locator('#check-html table.findings').count()).to.equal(2);
        expect(await flex.isVisible()).to.be.false();
        await page.locator('#check-html details.findings-list summary').focus();
        await page.keyboard.press('Enter');
        await flex.waitFor();
        expect(await page.locator('#check-html').textContent()).to.match(/Data: caniemail, updated \d{4}-\d\d-\d\d; 16 clients checked\./);
        // The link check is a click away: opening the tab asked no link.
        expect(await page.locator('#check-links-section .link-checks').count()).to.equal(0);
        expect(asked).to.equal([]);
    });

    it('says "no HTML" for a mail without an HTML part', async () => {
        const email = await deliver(p, 'checks-text', { subject: 'Plain', text: 'Just text, https://example.test/' });
        const page = await openChecks(p, 'checks-text', email.messageId);
        await page.locator('#check-html .no-html').waitFor();
        expect(await page.locator('#check-html .no-html').textContent()).to.contain('No HTML');
        expect(await page.locator('#check-html .score-value').count()).to.equal(0);
    });

    it('checks the links on a click (reached with the keyboard): an ok one, a broken one, a redirect and a refused one, with HEAD only', async () => {
        const email = await deliver(p, 'checks-links', { subject: 'The Weekly Brew', html: newsletter() });
        const page = await openChecks(p, 'checks-links', email.messageId);
        await page.locator('#check-html .score-value').waitFor();
        // The tab is one of the tab list: the arrow keys reach it.
        await page.locator('#tab-attachments').click();
        // The click's route first: an arrow pressed before its render lands on the old tab list.
        await waitForHash(page, `#/inbox/checks-links/email/${encodeURIComponent(email.messageId)}/attachments`);
        await page.locator('#tab-attachments').focus();
        await page.keyboard.press('ArrowRight');
        await waitForHash(page, `#/inbox/checks-links/email/${encodeURIComponent(email.messageId)}/checks`);
        await page.locator('#check-links').focus();
        await page.keyboard.press('Enter');
        const items = page.locator('#check-links-section ul.link-checks > li');
        await items.first().waitFor();
        const rows = await items.evaluateAll((nodes) => nodes.map((node) => {
            const li = node as unknown as { className: string; querySelector(s: string): { textContent: string } | null; querySelectorAll(s: string): ArrayLike<{ textContent: string }> };
            return { kind: li.className, badge: li.querySelector('.badge')!.textContent, url: li.querySelector('.url')!.textContent, redirects: Array.from(li.querySelectorAll('.redirects li')).map((r) => r.textContent) };
        }));
        expect(rows).to.equal([
            { kind: 'link-check ok', badge: 'OK 200', url: `${base}/moved`, redirects: [`→ ${base}/ok`] },
            { kind: 'link-check broken', badge: 'Broken 404', url: `${base}/missing`, redirects: [] },
            { kind: 'link-check ok', badge: 'OK 200', url: `${base}/ok`, redirects: [] },
            { kind: 'link-check broken', badge: 'Broken REFUSED', url: `http://127.0.0.1:${closedPort}/gone`, redirects: [] }
        ]);
        expect(await page.locator('#check-links-section .detail').last().textContent()).to.equal('4 checked, 2 broken.');
        expect(asked.every((line) => line.startsWith('HEAD '))).to.be.true();

        // Kept while the email stays open: back on the tab, no second round of requests.
        const count = asked.length;
        await page.locator('#tab-text').click();
        await page.locator('#tab-checks').click();
        await items.first().waitFor();
        expect(await items.count()).to.equal(4);
        expect(asked.length).to.equal(count);
    });

    /** The newsletter as its sender's mail server sends it, from `address`. */
    const fromSender = async (raw: string, inbox: string, address: string) => {
        const [email] = await p.api.ingestForApi(raw, { recipients: [`${inbox}@test.example`], clientAddress: address, clientHelo: `mail.${DOMAIN}`, mailFrom: `bounces@${DOMAIN}` });
        return email!;
    };

    const verdicts = (page: Page) => page.locator('#check-auth dl.auth dd').evaluateAll((nodes) => nodes.map((node) => {
        const dd = node as unknown as { dataset: { check: string }; textContent: string; querySelectorAll(s: string): ArrayLike<{ className: string; textContent: string }> };
        return { check: dd.dataset.check, badges: Array.from(dd.querySelectorAll('.badge')).map((b) => `${b.className}: ${b.textContent}`), text: dd.textContent };
    }));

    it('shows SPF, DKIM, DMARC (with its policy) and ARC as badges for a signed newsletter from a listed address, and when they were checked', async () => {
        const raw = await signed(buildMail({ from: `The Weekly Brew <news@${DOMAIN}>`, to: 'checks-auth@test.example', subject: 'The Weekly Brew', html: NEWSLETTER }), key, DOMAIN, SELECTOR);
        const email = await fromSender(raw, 'checks-auth', LISTED);
        const page = await openChecks(p, 'checks-auth', email.messageId);
        await page.locator('#check-auth dl.auth').waitFor();
        expect(await verdicts(page)).to.equal([
            { check: 'spf', badges: ['badge badge-pass: pass'], text: `pass ${DOMAIN}` },
            { check: 'dkim', badges: ['badge badge-pass: pass'], text: `pass d=${DOMAIN}, s=${SELECTOR}` },
            { check: 'dmarc', badges: ['badge badge-pass: pass'], text: `pass ${DOMAIN}, policy reject` },
            { check: 'arc', badges: ['badge badge-other: none'], text: 'none' }
        ]);
        expect(await page.locator('#auth-checked-at').textContent()).to.match(/^Checked at .*\d.*\.$/);
    });

    it('shows SPF and DMARC failing, and no DKIM signature, for an unsigned mail from an address the domain does not list', async () => {
        const raw = buildMail({ from: `The Weekly Brew <news@${DOMAIN}>`, to: 'checks-unsigned@test.example', subject: 'Unsigned', html: NEWSLETTER });
        const email = await fromSender(raw, 'checks-unsigned', '198.51.100.7');
        const page = await openChecks(p, 'checks-unsigned', email.messageId);
        await page.locator('#check-auth dl.auth').waitFor();
        expect(await verdicts(page)).to.equal([
            { check: 'spf', badges: ['badge badge-fail: fail'], text: `fail ${DOMAIN}` },
            { check: 'dkim', badges: ['badge badge-other: none'], text: 'none no signature' },
            { check: 'dmarc', badges: ['badge badge-fail: fail'], text: `fail ${DOMAIN}, policy reject` },
            { check: 'arc', badges: ['badge badge-other: none'], text: 'none' }
        ]);
    });

    it('says the link check is off, and which setting turns it on, when the service answers LINK_CHECK_DISABLED', async () => {
        const email = await deliver(off, 'checks-off', { subject: 'Links', html: `<a href="${base}/ok">ok</a>` });
        const page = await openChecks(off, 'checks-off', email.messageId);
        await page.locator('#check-links').click();
        await page.locator('#link-check-off').waitFor();
        const text = await page.locator('#link-check-off').textContent();
        expect(text).to.contain('The link check is off');
        expect(text).to.contain('INBOX_CAPTURE_LINK_CHECK_ALLOW');
        expect(text).to.contain('linkCheck.allow');
        expect(asked).to.equal([]);
    });
});
