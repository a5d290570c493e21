import type { Browser } from 'playwright-core';

interface ChromiumPackage {
    executablePath(): Promise<string>;
}

/**
 * A real headless Chromium. `args: []`: the package's default arguments turn web
 * security and the sandbox off, and these tests are about what web security does.
 * The caller closes it.
 */
export async function launchBrowser(): Promise<Browser> {
    // @sparticuz/chromium unpacks the libraries it bundles (machines without libnss3 need
    // them) only where it believes it runs on AWS Lambda, checked when it loads and when
    // it unpacks. Only then: the AWS SDK of the other tests in this process reads the variable too.
    const own = process.env.AWS_EXECUTION_ENV === undefined;
    if (own) {
        process.env.AWS_EXECUTION_ENV = 'AWS_Lambda_nodejs20.x';
    }

    try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const loaded = require('@sparticuz/chromium') as { default?: ChromiumPackage } & ChromiumPackage;
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { chromium } = require('playwright-core') as typeof import('playwright-core');
        const executablePath = await (loaded.default ?? loaded).executablePath();
        return await chromium.launch({ executablePath, args: [], headless: true });
    }
    finally {
        if (own) {
            delete process.env.AWS_EXECUTION_ENV;
        }
    }
}
