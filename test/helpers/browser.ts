import type { Browser } from 'playwright-core';

// @sparticuz/chromium unpacks the libraries it bundles only where it believes it runs on
// AWS Lambda; machines without libnss3 need them, so it is told so before it loads.
process.env.AWS_EXECUTION_ENV ??= 'AWS_Lambda_nodejs20.x';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const chromiumModule = require('@sparticuz/chromium') as { default?: ChromiumPackage } & ChromiumPackage;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { chromium } = require('playwright-core') as typeof import('playwright-core');

interface ChromiumPackage {
    executablePath(): Promise<string>;
}

/**
 * A real headless Chromium. `args: []`: the package's default arguments turn web
 * security and the sandbox off, and these tests are about what web security does.
 * The caller closes it.
 */
export async function launchBrowser(): Promise<Browser> {
    const Chromium = chromiumModule.default ?? chromiumModule;
    return chromium.launch({ executablePath: await Chromium.executablePath(), args: [], headless: true });
}
