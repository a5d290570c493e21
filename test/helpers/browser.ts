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
 * The path of @sparticuz/chromium's headless shell, unpacked. It unpacks the libraries it
 * bundles (machines without libnss3 need them) only where it believes it runs on AWS
 * Lambda, checked when it loads and when it unpacks, and then points LD_LIBRARY_PATH and
 * FONTCONFIG_PATH of this process at them. Only then: the AWS SDK of the other tests in
 * this process reads the variable too.
 */
async function sparticuzChromium(): Promise<string> {
    const own = process.env.AWS_EXECUTION_ENV === undefined;
    if (own) {
        process.env.AWS_EXECUTION_ENV = 'AWS_Lambda_nodejs20.x';
    }

    try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const loaded = require('@sparticuz/chromium') as { default?: ChromiumPackage } & ChromiumPackage;
        return await (loaded.default ?? loaded).executablePath();
    }
    finally {
        if (own) {
            delete process.env.AWS_EXECUTION_ENV;
        }
    }
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
    return chromium.launch({ executablePath: executablePath ?? await sparticuzChromium(), args, headless: true });
}

/**
 * The same headless shell for a browser another process launches (a Playwright runner):
 * its path, and the variables that find the libraries it bundles, to add to that
 * process's environment.
 */
export async function chromiumForChild(): Promise<{ executablePath: string; env: Record<string, string> }> {
    const executablePath = await sparticuzChromium();
    const env: Record<string, string> = {};
    for (const name of ['LD_LIBRARY_PATH', 'FONTCONFIG_PATH']) {
        if (process.env[name] !== undefined) {
            env[name] = process.env[name]!;
        }
    }

    return { executablePath, env };
}
