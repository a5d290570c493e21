'use strict';

// Screenshots of the web interface for the docs (docs/ui.md, README): the three panes on
// a wide screen, one pane at 375 px, and the Checks tab of a signed newsletter whose links
// point at a local HTTP server and whose DNS records a local DNS server serves, from a
// throwaway server with a few sample emails.
//
//   npm run build && node scripts/ui-screenshots.js
//
// Writes docs/ui-three-panes.png, docs/ui-dark.png (the same in dark mode), docs/ui-375px.png and
// docs/ui-checks.png. Not part of npm test.

process.env.AWS_EXECUTION_ENV ??= 'AWS_Lambda_nodejs20.x'; // before the import: @sparticuz/chromium unpacks its libraries
const Crypto = require('node:crypto');
const Fs = require('node:fs');
const Http = require('node:http');
const Os = require('node:os');
const Path = require('node:path');
const Hapi = require('@hapi/hapi');
const ChromiumPackage = require('@sparticuz/chromium');
const Chromium = ChromiumPackage.default ?? ChromiumPackage;
const { chromium } = require('playwright-core');
const Dns2 = require('dns2');
const { dkimSign } = require('mailauth/lib/dkim/sign');
const { inboxCapturePlugin } = require('../dist/adapters/hapi');

const DOCS = Path.join(__dirname, '..', 'docs');

function mail({ to, from, subject, text, html, tags }) {
    const boundary = 'b-screenshot';
    return [
        `From: ${from}`, `To: ${to}`, `Subject: ${subject}`, 'MIME-Version: 1.0', ...(tags ? [`X-Tags: ${tags}`] : []),
        `Content-Type: multipart/alternative; boundary="${boundary}"`, '',
        `--${boundary}`, 'Content-Type: text/plain; charset=utf-8', '', text,
        `--${boundary}`, 'Content-Type: text/html; charset=utf-8', '', html,
        `--${boundary}--`, ''
    ].join('\r\n');
}

const SAMPLES = [
    ['orders', 'Example Shop <shop@example.test>', 'Your order #1042 has shipped', 'Track it at https://shop.example.test/track/1042', '<h2 style="color:#0b57d0;font-family:sans-serif">On its way!</h2><p style="font-family:sans-serif">Order #1042 left our warehouse today.</p><p><a href="https://shop.example.test/track/1042" style="background:#0b57d0;color:#fff;padding:8px 14px;border-radius:6px;text-decoration:none;font-family:sans-serif">Track my parcel</a></p>'],
    ['signup-7f3a', 'Example App <no-reply@app.example.test>', 'Welcome! Please confirm your address', 'Confirm: https://app.example.test/confirm?t=abc', '<p style="font-family:sans-serif">Welcome aboard.</p><p><a href="https://app.example.test/confirm?t=abc">Confirm my account</a></p>'],
    ['signup-7f3a', 'Example Security <security@app.example.test>', 'Your sign-in code is 482913', 'Your code: 482913. It expires in 10 minutes.', '<p style="font-family:sans-serif">Your code:</p><p style="font:700 28px monospace;letter-spacing:4px">482913</p><p style="font-family:sans-serif;color:#666">It expires in 10 minutes. <img src="https://tracker.example.test/open.gif" alt=""></p>'],
    ['signup-19c0', 'no-reply@app.example.test', 'Reset your password', 'Reset: https://app.example.test/reset?t=xyz', '<p style="font-family:sans-serif"><a href="https://app.example.test/reset?t=xyz">Choose a new password</a></p>']
];

/** A local site for the newsletter's links: /shop redirects to /shop/, /unsubscribe is gone. */
async function startLinkTarget() {
    const target = Http.createServer((req, res) => {
        const status = req.url === '/shop' ? 301 : req.url.startsWith('/shop/') ? 200 : 404;
        res.writeHead(status, status === 301 ? { location: '/shop/' } : {}).end();
    });
    await new Promise((resolve) => target.listen(0, '127.0.0.1', resolve));
    return target;
}

/** A DNS server on loopback with the newsletter domain's SPF, DKIM and DMARC records, and the key it signs with. */
async function startNewsDns(domain) {
    const { privateKey, publicKey } = Crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const records = {
        [domain]: ['v=spf1 ip4:192.0.2.10 -all'],
        [`sel._domainkey.${domain}`]: [`v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`],
        [`_dmarc.${domain}`]: ['v=DMARC1; p=quarantine']
    };
    const dns = Dns2.createServer({
        udp: true,
        handle(request, send) {
            const response = Dns2.Packet.createResponseFromRequest(request);
            const [question] = request.questions;
            const found = records[question.name.toLowerCase().replace(/\.$/, '')];
            if (!found) {
                response.header.rcode = 3;
            }
            else if (question.type === Dns2.Packet.TYPE.TXT) {
                response.answers.push(...found.map((text) => ({ name: question.name, type: Dns2.Packet.TYPE.TXT, class: Dns2.Packet.CLASS.IN, ttl: 60, data: text.match(/[\s\S]{1,255}/g) })));
            }

            send(response);
        }
    });
    const { udp } = await dns.listen({ udp: { port: 0, address: '127.0.0.1' } });
    const sign = async (raw) => (await dkimSign(raw, { canonicalization: 'relaxed/relaxed', signatureData: [{ signingDomain: domain, selector: 'sel', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) }] })).signatures + raw;
    return { address: `127.0.0.1:${udp.port}`, sign, close: () => dns.close() };
}

async function main() {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'ui-shots-'));
    const server = Hapi.server({ host: '127.0.0.1', port: 0 });
    const target = await startLinkTarget();
    const site = `http://127.0.0.1:${target.address().port}`;
    const dns = await startNewsDns('roastery.example');
    let browser;
    try {
        await server.register({ plugin: inboxCapturePlugin, options: { dataDir, linkCheck: { allow: ['127.0.0.1/32'] }, authCheck: { dnsServers: [dns.address] } } });
        await server.start();
        const api = server.plugins['inbox-capture'];
        const key = await api.capture.createKey('screenshots');
        const stored = [];
        for (const [inbox, from, subject, text, html] of SAMPLES) {
            const tags = /code/.test(subject) ? 'sign-in, otp' : /Welcome/.test(subject) ? 'welcome' : undefined;
            stored.push(...await api.ingestForApi(mail({ to: `${inbox}@example.test`, from, subject, text, html, tags }), { recipients: [`${inbox}@example.test`] }));
        }

        const shown = stored[2];

        browser = await chromium.launch({ executablePath: await Chromium.executablePath(), args: [], headless: true });
        const shoot = async (viewport, file, colorScheme = 'light') => {
            const context = await browser.newContext({ viewport, deviceScaleFactor: 1, colorScheme });
            await context.addInitScript(`sessionStorage.setItem('inbox-capture.apiKey', ${JSON.stringify(key)})`);
            const page = await context.newPage();
            await page.goto(`${server.info.uri}/ui/#/inbox/signup-7f3a/email/${encodeURIComponent(shown.messageId)}/html`);
            await page.frameLocator('iframe.mail-frame').frameLocator('#mail').locator('p').first().waitFor();
            await page.locator('#email-list a.item').nth(1).waitFor({ state: 'attached' });
            await page.screenshot({ path: Path.join(DOCS, file) });
            await context.close();
            console.log(`docs/${file}`);
        };

        await shoot({ width: 1280, height: 720 }, 'ui-three-panes.png');
        await shoot({ width: 1280, height: 720 }, 'ui-dark.png', 'dark');
        await shoot({ width: 375, height: 740 }, 'ui-375px.png');

        const newsletter = Fs.readFileSync(Path.join(__dirname, '..', 'test', 'fixtures', 'html', 'newsletter.html'), 'utf8')
            .replace('https://news.example.com/shop?utm_source=newsletter', `${site}/shop`)
            .replace('https://news.example.com/unsubscribe?u=42', `${site}/unsubscribe`);
        const raw = await dns.sign(mail({ to: 'news@example.test', from: 'The Roastery <news@roastery.example>', subject: 'The Weekly Brew', text: 'This week at the roastery', html: newsletter }));
        const [news] = await api.ingestForApi(raw, { recipients: ['news@example.test'], clientAddress: '192.0.2.10', clientHelo: 'mail.roastery.example', mailFrom: 'bounces@roastery.example' });
        const context = await browser.newContext({ viewport: { width: 1280, height: 1480 }, deviceScaleFactor: 1 });
        await context.addInitScript(`sessionStorage.setItem('inbox-capture.apiKey', ${JSON.stringify(key)})`);
        const page = await context.newPage();
        await page.goto(`${server.info.uri}/ui/#/inbox/news/email/${encodeURIComponent(news.messageId)}/checks`);
        await page.locator('#check-html .score-value').waitFor();
        await page.locator('#check-auth dl.auth').waitFor();
        await page.click('#check-links');
        await page.locator('#check-links-section ul.link-checks > li').first().waitFor();
        await page.evaluate('document.getElementById("pane-email").scrollTop = 0');
        await page.screenshot({ path: Path.join(DOCS, 'ui-checks.png') });
        await context.close();
        console.log('docs/ui-checks.png');
    }
    finally {
        await browser?.close();
        await server.stop();
        target.closeAllConnections();
        target.close();
        await dns.close();
        Fs.rmSync(dataDir, { recursive: true, force: true });
    }
}

main().catch((err) => {
    console.error(err);
    process.exit(1);
});
