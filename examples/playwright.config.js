// examples/playwright.config.js: Playwright for examples/*.playwright.spec.js. The
// service comes from INBOX_CAPTURE_URL and INBOX_CAPTURE_API_KEY (the fixture reads them).
const { defineConfig } = require('@playwright/test');

module.exports = defineConfig({
    testDir: __dirname,
    testMatch: '*.playwright.spec.js',
    workers: 1,
    use: {
        // A Chromium of your own (where Playwright cannot download its browsers); unset, Playwright's.
        launchOptions: process.env.CHROMIUM_PATH ? { executablePath: process.env.CHROMIUM_PATH, args: [] } : {}
    }
});
