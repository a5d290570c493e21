import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { downloadOrigins, loadUiFiles, uiCsp, VIEWER_CSP, webUiDir } from '../../../adapters/hapi/ui-routes';
import { createS3BlobStore } from '../../../lib/blob-store/s3-blob-store';
import { startS3 } from '../../helpers/s3';
import { tempDir, removeDir } from '../../helpers/temp-dir';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';
import { startStandalone } from '../../helpers/standalone-service';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** The interface's size limit (docs/ui.md, "Size and build"): every file it serves, uncompressed. */
// Raised from 100 KB for dark mode, the Source tab and the keys (docs/ui.md, "Size and build").
const MAX_UI_BYTES = 110 * 1024;

async function filesUnder(dir: string): Promise<string[]> {
    const entries = await Fs.readdir(dir, { withFileTypes: true });
    const nested = await Promise.all(entries.map((e) => e.isDirectory() ? filesUnder(Path.join(dir, e.name)) : Promise.resolve([Path.join(dir, e.name)])));
    return nested.flat();
}

describe('ui-routes', () => {

    describe('uiRoutes()', () => {
        let p: ProvisionedServer;

        before(async () => {
            p = await provisionServer();
        });

        after(() => p.cleanup());

        it('serves the page at /ui/ with a strict CSP, X-Frame-Options DENY and no referrer', async () => {
            const res = await p.server.inject('/ui/');
            expect(res.statusCode).to.equal(200);
            expect(res.headers['content-type'] as string).to.startWith('text/html');
            expect(res.payload).to.contain('<script type="module" src="js/web-ui/main.js">');
            const csp = res.headers['content-security-policy'] as string;
            expect(csp).to.equal(uiCsp());
            expect(csp).to.contain('default-src \'none\'');
            expect(csp).to.contain('script-src \'self\';');
            expect(csp).to.contain('frame-ancestors \'none\'');
            expect(csp).to.contain('base-uri \'none\'');
            expect(csp).to.contain('form-action \'none\'');
            expect(csp).to.not.contain('unsafe-inline');
            expect(csp).to.not.contain('unsafe-eval');
            expect(res.headers['x-frame-options']).to.equal('DENY');
            expect(res.headers['referrer-policy']).to.equal('no-referrer');
            expect(res.headers['x-content-type-options']).to.equal('nosniff');
        });

        it('has no inline script in the page', async () => {
            const res = await p.server.inject('/ui/');
            const scripts = res.payload.match(/<script\b[^>]*>/g) ?? [];
            expect(scripts.length).to.equal(1);
            expect(scripts.every((tag) => / src="/.test(tag))).to.be.true();
            expect(res.payload).to.not.match(/<script\b[^>]*>[^<]+<\/script>/);
            expect(res.payload).to.not.match(/\son[a-z]+=/i);
        });

        it('redirects /ui to /ui/ so relative URLs resolve under it', async () => {
            const res = await p.server.inject('/ui');
            expect(res.statusCode).to.equal(302);
            expect(res.headers.location).to.equal('/ui/');
        });

        it('serves the modules, with the headers, as JavaScript', async () => {
            const res = await p.server.inject('/ui/js/web-ui/main.js');
            expect(res.statusCode).to.equal(200);
            expect(res.headers['content-type'] as string).to.startWith('text/javascript');
            expect(res.headers['x-frame-options']).to.equal('DENY');
            expect(res.headers['content-security-policy']).to.equal(uiCsp());
            const client = await p.server.inject('/ui/js/client/index.js');
            expect(client.statusCode).to.equal(200);
        });

        it('lets only our own pages frame the viewer', async () => {
            const res = await p.server.inject('/ui/viewer.html');
            expect(res.statusCode).to.equal(200);
            expect(res.headers['content-security-policy']).to.equal(VIEWER_CSP);
            expect(VIEWER_CSP).to.contain('frame-ancestors \'self\'');
            expect(VIEWER_CSP).to.not.contain('script-src');
            expect(res.headers['x-frame-options']).to.equal('SAMEORIGIN');
            expect(res.payload).to.contain('sandbox=""');
        });

        it('answers 304 to a repeated request with the ETag, and must-revalidate caching', async () => {
            const first = await p.server.inject('/ui/ui.css');
            expect(first.statusCode).to.equal(200);
            expect(first.headers['cache-control']).to.equal('no-cache');
            const etag = first.headers.etag as string;
            expect(etag).to.match(/^"[0-9a-f]{40}"$/);
            const again = await p.server.inject({ url: '/ui/ui.css', headers: { 'if-none-match': etag } });
            expect(again.statusCode).to.equal(304);
        });

        it('answers 404 NOT_FOUND for a missing file and stays inside its directory', async () => {
            for (const url of ['/ui/nope.js', '/ui/../package.json', '/ui/%2e%2e/%2e%2e/package.json', '/ui/js/../../../package.json']) {
                const res = await p.server.inject(url);
                expect(res.statusCode, url).to.not.equal(200);
                expect(res.payload, url).to.not.contain('"name": "inbox-capture"');
            }

            const missing = await p.server.inject('/ui/nope.js');
            expect(missing.statusCode).to.equal(404);
            expect(JSON.parse(missing.payload)).to.equal({ error: 'NOT_FOUND' });
        });

        it('needs no key', async () => {
            const res = await p.server.inject({ url: '/ui/', headers: { authorization: 'Bearer wrong' } });
            expect(res.statusCode).to.equal(200);
        });
    });

    describe('loadUiFiles()', () => {

        it('reads nothing from a directory that does not exist (an unbuilt package answers 404)', async () => {
            const dir = await tempDir('no-ui');
            try {
                expect(loadUiFiles(Path.join(dir, 'missing')).size).to.equal(0);
            }
            finally {
                await removeDir(dir);
            }
        });

        it('keeps only files of known media types, by their path under /ui/', async () => {
            const dir = await tempDir('ui-files');
            try {
                await Fs.mkdir(Path.join(dir, 'js'));
                await Fs.writeFile(Path.join(dir, 'index.html'), '<!doctype html>');
                await Fs.writeFile(Path.join(dir, 'js', 'a.js'), 'export {};');
                await Fs.writeFile(Path.join(dir, 'secret.key'), 'no');
                const files = loadUiFiles(dir);
                expect([...files.keys()].sort()).to.equal(['index.html', 'js/a.js']);
                expect(files.get('js/a.js')!.type).to.equal('text/javascript; charset=utf-8');
            }
            finally {
                await removeDir(dir);
            }
        });
    });

    describe('downloadOrigins()', () => {

        it('is empty for a store that serves its own links', async () => {
            const p = await provisionServer();
            try {
                expect(await downloadOrigins(p.api.capture.blobStore)).to.equal([]);
                expect((await p.server.inject('/ui/')).headers['content-security-policy']).to.contain('connect-src \'self\';');
            }
            finally {
                await p.cleanup();
            }
        });

        it('names the S3 endpoint, so the pages may fetch downloads from it', async () => {
            const s3 = await startS3();
            try {
                const store = createS3BlobStore({ client: s3.createClient(), bucket: s3.bucket });
                expect(await downloadOrigins(store)).to.equal([s3.endpoint]);
                expect(uiCsp([s3.endpoint])).to.contain(`connect-src 'self' ${s3.endpoint};`);
            }
            finally {
                await s3.stop();
            }
        });
    });

    describe('the served files', () => {

        it('weigh under 110 KB together, uncompressed', async () => {
            const files = await filesUnder(webUiDir());
            const sizes = await Promise.all(files.map(async (file) => (await Fs.stat(file)).size));
            const total = sizes.reduce((a, b) => a + b, 0);
            expect(files.length).to.be.above(10);
            expect(total).to.be.below(MAX_UI_BYTES);
        });

        it('insert no mail data as HTML: no innerHTML, outerHTML, insertAdjacentHTML or document.write', async () => {
            const scripts = (await filesUnder(Path.join(webUiDir(), 'js'))).filter((file) => file.endsWith('.js'));
            for (const file of scripts) {
                const text = await Fs.readFile(file, 'utf8');
                expect(text, file).to.not.match(/innerHTML|insertAdjacentHTML|document\.write|createContextualFragment/);
                // One module parses a mail into an inert document (DOMParser) and serialises it
                // (outerHTML) for the sandboxed frame's srcdoc, and only mail-frame.js writes srcdoc.
                if (Path.basename(file) !== 'mail-html.js') {
                    expect(text, file).to.not.match(/outerHTML|DOMParser/);
                }

                if (Path.basename(file) !== 'mail-frame.js') {
                    expect(text, file).to.not.match(/srcdoc\s*=/);
                }
            }
        });
    });

    describe('plugin option ui', () => {

        it('false removes /ui and everything under it (404)', async () => {
            const p = await provisionServer({ plugin: { ui: false } });
            try {
                for (const url of ['/ui', '/ui/', '/ui/js/web-ui/main.js']) {
                    expect((await p.server.inject(url)).statusCode, url).to.equal(404);
                }
            }
            finally {
                await p.cleanup();
            }
        });

        it('is a boolean', async () => {
            await expect(provisionServer({ plugin: { ui: 'yes' as unknown as boolean } })).to.reject(/"ui" must be a boolean/);
        });

        it('keeps a route prefix in the redirect', async () => {
            const p = await provisionServer({ prefix: '/mail' });
            try {
                const res = await p.server.inject('/mail/ui');
                expect(res.headers.location).to.equal('/mail/ui/');
                expect((await p.server.inject('/mail/ui/')).statusCode).to.equal(200);
            }
            finally {
                await p.cleanup();
            }
        });
    });

    describe('the standalone service', () => {

        it('redirects / to the interface', { timeout: 60_000 }, async () => {
            const service = await startStandalone();
            try {
                const res = await fetch(`${service.baseUrl}/`, { redirect: 'manual' });
                expect(res.status).to.equal(302);
                expect(res.headers.get('location')).to.equal('/ui/');
                const page = await fetch(`${service.baseUrl}/`);
                expect(page.url).to.equal(`${service.baseUrl}/ui/`);
                expect(await page.text()).to.contain('inbox-capture');
            }
            finally {
                await service.stop();
            }
        });
    });
});
