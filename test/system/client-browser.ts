import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as Path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser';
import { POSTGRES_S3, SQLITE_FS, type ClientBackend } from '../helpers/client-backends';
import { buildMail } from '../helpers/mail';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** The ES module build of the client, as `npm run build` leaves it. */
const CLIENT_ESM = Path.join(__dirname, '..', '..', 'dist', 'client-esm');
const PAGE = '<!doctype html><meta charset="utf-8"><title>inbox-capture client</title>';
const ATTACHMENT = Buffer.from([0, 1, 2, 253, 254, 255]);

/** Serves the test page at `/` and the client's files at `/client/<file>.js`, as a web app would. */
async function appFile(path: string): Promise<{ type: string; body: string } | null> {
    if (path === '/') {
        return { type: 'text/html; charset=utf-8', body: PAGE };
    }

    const match = /^\/client\/([a-z-]+\.js)$/.exec(path);
    if (!match) {
        return null;
    }

    const body = await Fs.readFile(Path.join(CLIENT_ESM, match[1]), 'utf8').catch(() => null);
    return body === null ? null : { type: 'text/javascript; charset=utf-8', body };
}

/** The page and module on the API's own server (same origin). */
function serveAppOn(backend: ClientBackend): void {
    backend.p.server.route({
        method: 'GET',
        path: '/app/{path*}',
        options: { auth: false },
        handler: async (request, h) => {
            const file = await appFile(`/${request.params.path ?? ''}`);
            return file ? h.response(file.body).type(file.type) : h.response('').code(404);
        }
    });
}

/** Watches the server's requests; `next()` resolves on the next long-poll (`wait=true`) that arrives. */
function longPollWatch(backend: ClientBackend): { next(): Promise<void> } {
    let waiting: Array<() => void> = [];
    backend.p.server.ext('onRequest', (request, h) => {
        if (request.url.searchParams.get('wait') === 'true') {
            waiting.forEach((resolve) => resolve());
            waiting = [];
        }

        return h.continue;
    });
    return { next: () => new Promise<void>((resolve) => waiting.push(resolve)) };
}

// Runs in the page: imports the client from `moduleUrl` and keeps one on `window`.
const SETUP = `async ({ moduleUrl, baseUrl, apiKey }) => {
    window.lib = await import(moduleUrl);
    window.client = new window.lib.InboxCaptureClient({ baseUrl, apiKey });
    return window.client.newInbox({ prefix: 'browser-', domain: 'test.example' });
}`;

// Runs in the page: the whole round trip of a test, each result as JSON.
const ROUND_TRIP = `async ({ inbox }) => {
    const { client, lib } = window;
    const email = await client.waitForEmail({ inbox, subject: 'hello', timeoutMs: 20000 });
    const again = await client.getEmail(email.messageId);
    const raw = new TextDecoder().decode(await client.downloadRaw(email.messageId));
    const attachment = Array.from(await client.downloadAttachment(email.messageId, email.attachments[0].filename));
    const listed = [];
    for await (const e of client.emails({ inbox })) {
        listed.push(e.subject);
    }

    await client.deleteEmail(email.messageId);
    let error = null;
    try {
        await client.getEmail(email.messageId);
    }
    catch (err) {
        error = { typed: err instanceof lib.InboxCaptureApiError, status: err.status, code: err.code };
    }

    const controller = new AbortController();
    const aborted = client.waitForEmail({ inbox, signal: controller.signal }).catch((err) => err);
    controller.abort(new Error('stop'));
    return {
        subject: email.subject,
        same: JSON.stringify(again) === JSON.stringify(email),
        raw,
        attachment,
        listed,
        error,
        aborted: (await aborted).message
    };
}`;

describe('client in a real browser', () => {
    let browser: Browser;

    before(async () => {
        browser = await launchBrowser();
    });

    after(() => browser?.close());

    /** Opens `pageUrl`, sets the client up, sends a message once the page waits, runs the round trip. */
    async function roundTrip(page: Page, backend: ClientBackend, pageUrl: string, moduleUrl: string) {
        await page.goto(pageUrl);
        const { inbox, address } = await page.evaluate(`(${SETUP})(${JSON.stringify({ moduleUrl, baseUrl: backend.baseUrl, apiKey: backend.p.apiKey })})`) as { inbox: string; address: string };
        expect(address).to.equal(`${inbox}@test.example`);
        const waiting = longPollWatch(backend).next();
        const result = page.evaluate(`(${ROUND_TRIP})(${JSON.stringify({ inbox })})`) as Promise<Record<string, unknown>>;
        await waiting;
        const raw = buildMail({ to: address, subject: 'hello from node', attachments: [{ filename: 'a.bin', contentType: 'application/octet-stream', content: ATTACHMENT }] });
        await backend.p.api.ingestForApi(raw);
        const out = await result;
        expect(out).to.equal({
            subject: 'hello from node',
            same: true,
            raw,
            attachment: [...ATTACHMENT],
            listed: ['hello from node'],
            error: { typed: true, status: 404, code: 'NOT_FOUND' },
            aborted: 'stop'
        });
    }

    it('runs a round trip from a page on the API\'s origin (SQLite + files)', async () => {
        const backend = await SQLITE_FS.start();
        const page = await browser.newPage();
        try {
            serveAppOn(backend);
            await roundTrip(page, backend, `${backend.baseUrl}/app/`, '/app/client/index.js');
        }
        finally {
            await page.close();
            await backend.cleanup();
        }
    });

    it('downloads from S3 on another origin without sending the API key there (Postgres + S3)', async () => {
        const backend = await POSTGRES_S3.start();
        const page = await browser.newPage();
        try {
            serveAppOn(backend);
            const seen = backend.linkHostRequests!;
            const before = seen.length;
            await roundTrip(page, backend, `${backend.baseUrl}/app/`, '/app/client/index.js');
            // The browser followed both 302s to the presigned host itself: no preflight, no key.
            const fromBrowser = seen.slice(before).filter((r) => r.headers['user-agent']?.includes('HeadlessChrome'));
            expect(fromBrowser.map((r) => r.method)).to.equal(['GET', 'GET']);
            for (const request of fromBrowser) {
                expect(request.url).to.include('X-Amz-Signature=');
                expect(request.headers.authorization).to.not.exist();
                expect(request.headers.origin).to.equal(backend.baseUrl);
                expect(JSON.stringify(request.headers)).to.not.include(backend.p.apiKey);
            }
        }
        finally {
            await page.close();
            await backend.cleanup();
        }
    });

    it('runs a round trip from a page on another origin when the host enables CORS', async () => {
        // hapi's route CORS on the host server: the plugin's routes (and their 401s) get it too.
        const backend = await SQLITE_FS.start({ server: { host: '127.0.0.1', port: 0, debug: false, routes: { cors: { origin: ['*'] } } } });
        const app = Http.createServer(async (req, res) => {
            const file = await appFile(new URL(req.url!, 'http://x').pathname);
            res.writeHead(file ? 200 : 404, file ? { 'content-type': file.type } : {}).end(file?.body ?? '');
        });
        await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
        const appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
        const page = await browser.newPage();
        try {
            await roundTrip(page, backend, `${appOrigin}/`, `${appOrigin}/client/index.js`);
        }
        finally {
            await page.close();
            app.closeAllConnections();
            await new Promise((resolve) => app.close(resolve));
            await backend.cleanup();
        }
    });
});
