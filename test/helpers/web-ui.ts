import * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/** A local HTTP server that records every request it gets (the "remote" host of hostile mail). */
export interface RequestRecorder {
    /** `http://127.0.0.1:<port>` */
    origin: string;
    /** Paths requested so far, in order. */
    paths: string[];
    close(): Promise<void>;
}

/** Starts a RequestRecorder on a free loopback port; it answers every request with a 1x1 GIF. */
export async function startRequestRecorder(): Promise<RequestRecorder> {
    const paths: string[] = [];
    const gif = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
    const server = Http.createServer((req, res) => {
        paths.push(req.url ?? '');
        res.writeHead(200, { 'content-type': 'image/gif', 'access-control-allow-origin': '*' }).end(gif);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        paths,
        close: () => new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
        })
    };
}

/** A browser context whose tabs already hold `apiKey` in sessionStorage, as after key entry. */
export async function contextWithKey(browser: Browser, apiKey: string, options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
    const context = await browser.newContext(options);
    // A string, not a function: the tests' TypeScript has no DOM library.
    await context.addInitScript(`sessionStorage.setItem('inbox-capture.apiKey', ${JSON.stringify(apiKey)})`);
    return context;
}

/** Opens the interface at a hash route (`#/inbox/x`); its module has run once the load event came (goto waits for it). */
export async function openUi(page: Page, baseUrl: string, hash = '#/'): Promise<void> {
    await page.goto(`${baseUrl}/ui/${hash}`);
}

// What the page functions below read (the tests' TypeScript has no DOM library; the page's
// CSP forbids eval, so they must be functions, not strings).
interface PageGlobals {
    document: { querySelectorAll(selector: string): { length: number } };
    location: { hash: string };
}

/** Waits until exactly `count` elements match `selector`. */
export async function waitForCount(page: Page, selector: string, count: number): Promise<void> {
    await page.waitForFunction(([s, n]) => (globalThis as unknown as PageGlobals).document.querySelectorAll(s).length === n, [selector, count] as const);
}

/** Waits until the page's hash route is `hash`. */
export async function waitForHash(page: Page, hash: string): Promise<void> {
    await page.waitForFunction((h) => (globalThis as unknown as PageGlobals).location.hash === h, hash);
}
