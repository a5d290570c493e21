'use strict';

// Our checks of inbox-capture-client/playwright, run by test/system/playwright-fixture.ts:
// each test names its inbox in an annotation, so the lab test can see that every test got
// its own and that none is left once the run is over.
const Nodemailer = require('nodemailer');
const { test, expect } = require('inbox-capture-client/playwright');

/** Mails `to` through the service's SMTP listener. */
async function send(to, subject) {
    const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: Number(process.env.SMTP_PORT), secure: false, ignoreTLS: true });
    try {
        await transport.sendMail({ from: 'app@example.test', to, subject, text: 'Hello.' });
    }
    finally {
        transport.close();
    }
}

/** Mails the test's inbox, reads the mail back through the fixture, and says which inbox it was. */
async function roundTrip(inbox, subject) {
    test.info().annotations.push({ type: 'inbox', description: inbox.inbox });
    await send(inbox.address, subject);
    const email = await inbox.waitForEmail({ subject, timeoutMs: 20_000 });
    expect(email.inbox).toBe(inbox.inbox);
    expect((await inbox.client.listEmails({ inbox: inbox.inbox })).emails).toHaveLength(1);
}

test('a test gets an inbox at the domain of INBOX_CAPTURE_MAIL_DOMAIN and reads its mail', async ({ inbox }) => {
    expect(inbox.address).toBe(`${inbox.inbox}@${process.env.INBOX_CAPTURE_MAIL_DOMAIN}`);
    expect(inbox.inbox).toMatch(/^[a-z0-9]{10}$/);
    await roundTrip(inbox, 'first test');
});

test('the next test gets another inbox', async ({ inbox }) => {
    await roundTrip(inbox, 'second test');
});

test.describe('with the inboxCapture option', () => {
    test.use({ inboxCapture: { mailDomain: 'option.test', prefix: 'opt-' } });

    test('the option wins over the environment', async ({ inbox }) => {
        expect(inbox.address).toBe(`${inbox.inbox}@option.test`);
        expect(inbox.inbox).toMatch(/^opt-[a-z0-9]{10}$/);
        await roundTrip(inbox, 'option test');
    });
});

test('a test that does not ask for an inbox gets none', async ({ page }) => {
    await page.setContent('<h1>no inbox</h1>');
    await expect(page.locator('h1')).toHaveText('no inbox');
});
