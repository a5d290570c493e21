// examples/signup.test.js: `node --test examples/signup.test.js` against a running service
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { InboxCaptureClient } = require('inbox-capture-client');
const { startDemoApp } = require('./demo-app'); // stands in for your application

const client = new InboxCaptureClient({
    baseUrl: process.env.INBOX_CAPTURE_URL ?? 'http://127.0.0.1:3000',
    apiKey: process.env.INBOX_CAPTURE_API_KEY
});

test('sign-up mails a code and a link that confirms the address', async (t) => {
    const app = await startDemoApp({ smtpPort: Number(process.env.SMTP_PORT ?? 2525) });
    t.after(() => app.close());
    const { inbox, address } = client.newInbox({ prefix: 'signup-', domain: 'example.test' });

    await fetch(`${app.url}/signup`, { method: 'POST', body: new URLSearchParams({ email: address }) });

    const email = await client.waitForEmail({ inbox, subject: 'sign-up', timeoutMs: 30_000 });
    const [code] = email.codes;
    const verified = await fetch(`${app.url}/verify`, { method: 'POST', body: new URLSearchParams({ email: address, code }) });
    assert.match(await verified.text(), /Code accepted/);

    const link = email.links.find((l) => l.text === 'Confirm your address');
    const confirmed = await fetch(link.href);
    assert.match(await confirmed.text(), /Address confirmed/);
    await client.deleteInbox(inbox);
});
