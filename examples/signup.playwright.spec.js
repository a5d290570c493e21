// examples/signup.playwright.spec.js: `npx playwright test -c examples` against a running service
const { test, expect } = require('inbox-capture-client/playwright');
const { startDemoApp } = require('./demo-app'); // stands in for your application

let app;
test.beforeAll(async () => {
    app = await startDemoApp({ smtpPort: Number(process.env.SMTP_PORT ?? 2525) });
});
test.afterAll(() => app.close());

test('a person signs up, types the mailed code and clicks the mailed link', async ({ page, inbox }) => {
    await page.goto(app.url);
    await page.fill('input[name=email]', inbox.address);
    await page.click('button');
    await expect(page.locator('h1')).toHaveText('Check your mail');

    const email = await inbox.waitForEmail({ subject: 'sign-up', timeoutMs: 20_000 });
    await page.fill('input[name=code]', email.codes[0]);
    await page.click('button');
    await expect(page.locator('h1')).toHaveText('Code accepted');

    await page.goto(email.links.find((l) => l.text === 'Confirm your address').href);
    await expect(page.locator('h1')).toHaveText('Address confirmed');
});
