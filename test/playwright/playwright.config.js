'use strict';

// The Playwright runs of test/system/playwright-fixture.ts: the user's example and our
// own checks of inbox-capture-client/playwright, in one run with one browser. The
// browser is the one the lab test names (CHROMIUM_PATH), with no extra arguments.
const Path = require('node:path');
const { defineConfig } = require('@playwright/test');

module.exports = defineConfig({
    testDir: Path.join(__dirname, '..', '..'),
    testMatch: [/examples\/[^/]+\.playwright\.spec\.js$/, /test\/playwright\/[^/]+\.spec\.js$/],
    workers: 1,
    retries: 0,
    forbidOnly: true,
    outputDir: process.env.PLAYWRIGHT_OUTPUT_DIR,
    use: {
        launchOptions: { executablePath: process.env.CHROMIUM_PATH, args: [] }
    }
});
