import * as Fs from 'node:fs';
import type { Browser } from 'playwright-core';

interface ChromiumPackage {
    executablePath(): Promise<string>;
}

/** Where Debian's `chromium` package puts the browser itself (/usr/bin/chromium is a shell wrapper). */
const DEBIAN_CHROMIUM = '/usr/lib/chromium/chromium';

/**
 * A full Chromium on this machine: `INBOX_CAPTURE_CHROMIUM`, else Debian's package, else
 * undefined. The headless shell of @sparticuz/chromium lacks the layer of the full
 * browser that connects to a host ahead of a request (it did so for a frame its policy
 * blocked), so what a person's Chromium connects to is only seen in this one.
 */
export function fullChromiumPath(): string | undefined {
    const path = process.env.INBOX_CAPTURE_CHROMIUM ?? DEBIAN_CHROMIUM;
    return Fs.existsSync(path) ? path : undefined;
}

/**
 * A real headless Chromium: @sparticuz/chromium's headless shell, or the browser at
 * `executablePath`. Only `args` (none by default): the package's default arguments turn
 * web security and the sandbox off, and these tests are about what web security does.
 * The caller closes it.
 */
export async function launchBrowser(args: string[] = [], executablePath?: string): Promise<Browser> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { chromium } = require('playwright-core') as typeof import('playwright-core');
    if (executablePath) {
        return chromium.launch({ executablePath, args, headless: true });
    }

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
        return await chromium.launch({ executablePath: await (loaded.default ?? loaded).executablePath(), args, headless: true });
    }
    finally {
        if (own) {
            delete process.env.AWS_EXECUTION_ENV;
        }
    }
}
