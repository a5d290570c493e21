'use strict';

// Screenshots of the web interface for the docs (docs/ui.md, README): the three panes on
// a wide screen, one pane at 375 px, and the Checks tab of a newsletter whose links point
// at a local HTTP server, from a throwaway server with a few sample emails.
//
//   npm run build && node scripts/ui-screenshots.js
//
// Writes docs/ui-three-panes.png, docs/ui-375px.png and docs/ui-checks.png. Not part of npm test.

process.env.AWS_EXECUTION_ENV ??= 'AWS_Lambda_nodejs20.x'; // before the import: @sparticuz/chromium unpacks its libraries
const Fs = require('node:fs');
const Http = require('node:http');
const Os = require('node:os');
const Path = require('node:path');
const Hapi = require('@hapi/hapi');
const ChromiumPackage = require('@sparticuz/chromium');
const Chromium = ChromiumPackage.default ?? ChromiumPackage;
const { chromium } = require('playwright-core');
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

async function main() {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'ui-shots-'));
    const server = Hapi.server({ host: '127.0.0.1', port: 0 });
    const target = await startLinkTarget();
    const site = `http://127.0.0.1:${target.address().port}`;
    let browser;
    try {
        await server.register({ plugin: inboxCapturePlugin, options: { dataDir, linkCheck: { allow: ['127.0.0.1/32'] } } });
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
        const shoot = async (viewport, file) => {
            const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
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
        await shoot({ width: 375, height: 740 }, 'ui-375px.png');

        const newsletter = Fs.readFileSync(Path.join(__dirname, '..', 'test', 'fixtures', 'html', 'newsletter.html'), 'utf8')
            .replace('https://news.example.com/shop?utm_source=newsletter', `${site}/shop`)
            .replace('https://news.example.com/unsubscribe?u=42', `${site}/unsubscribe`);
        const [news] = await api.ingestForApi(mail({ to: 'news@example.test', from: 'The Roastery <news@roastery.example.test>', subject: 'The Weekly Brew', text: 'This week at the roastery', html: newsletter }), { recipients: ['news@example.test'] });
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
        await context.addInitScript(`sessionStorage.setItem('inbox-capture.apiKey', ${JSON.stringify(key)})`);
        const page = await context.newPage();
        await page.goto(`${server.info.uri}/ui/#/inbox/news/email/${encodeURIComponent(news.messageId)}/checks`);
        await page.locator('#check-html .score-value').waitFor();
        await page.click('#check-links');
        await page.locator('#check-links-section ul.link-checks > li').first().waitFor();
        await page.screenshot({ path: Path.join(DOCS, 'ui-checks.png') });
        await context.close();
        console.log('docs/ui-checks.png');
    }
    finally {
        await browser?.close();
        await server.stop();
        target.closeAllConnections();
        target.close();
        Fs.rmSync(dataDir, { recursive: true, force: true });
    }
}

main().catch((err) => {
    console.error(err);
    process.exit(1);
});
