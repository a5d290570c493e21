// examples/signup.browser.test.js: the sign-up of examples/signup.test.js driven in a real
// browser with Playwright (playwright-core and @sparticuz/chromium's Chromium):
// `node --test examples/signup.browser.test.js` against a running service.
const { test } = require('node:test');
const assert = require('node:assert/strict');
process.env.AWS_EXECUTION_ENV ??= 'AWS_Lambda_nodejs20.x'; // lets @sparticuz/chromium unpack the libraries it bundles
const Chromium = require('@sparticuz/chromium');
const { chromium } = require('playwright-core');
const { InboxCaptureClient } = require('inbox-capture-client');
const { startDemoApp } = require('./demo-app'); // stands in for your application

const client = new InboxCaptureClient({
    baseUrl: process.env.INBOX_CAPTURE_URL ?? 'http://127.0.0.1:3000',
    apiKey: process.env.INBOX_CAPTURE_API_KEY
});

test('a person signs up, types the mailed code and clicks the mailed link', async (t) => {
    const app = await startDemoApp({ smtpPort: Number(process.env.SMTP_PORT ?? 2525) });
    const executablePath = await (Chromium.default ?? Chromium).executablePath();
    const browser = await chromium.launch({ executablePath, args: [], headless: true });
    t.after(async () => {
        await browser.close();
        await app.close();
    });
    const page = await browser.newPage();
    const { inbox, address } = client.newInbox({ prefix: 'browser-', domain: 'example.test' });

    await page.goto(app.url);
    await page.fill('input[name=email]', address);
    await page.click('button');
    await page.waitForSelector('text=Check your mail');

    const email = await client.waitForEmail({ inbox, subject: 'sign-up', timeoutMs: 30_000 });
    await page.fill('input[name=code]', email.codes[0]);
    await page.click('button');
    assert.equal(await page.textContent('h1'), 'Code accepted');

    await page.goto(email.links.find((l) => l.text === 'Confirm your address').href);
    assert.equal(await page.textContent('h1'), 'Address confirmed');
    await client.deleteInbox(inbox);
});
