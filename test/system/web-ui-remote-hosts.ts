import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as Nodemailer from 'nodemailer';
import type { Browser, BrowserContext, FrameLocator, Page } from 'playwright-core';
import { createSmtpListener, type SmtpListener } from '../../adapters/smtp';
import { fullChromiumPath, launchBrowser } from '../helpers/browser';
import { provisionServer, type ProvisionedServer } from '../helpers/provision-server';
import { contextWithKey, openUi } from '../helpers/web-ui';

const { expect } = Code;
const { describe, it, before, after, afterEach } = exports.lab = Lab.script();

/** Milliseconds given to the browser to open any connection it would open (preconnects take a few). */
const SETTLE_MS = 1500;

/**
 * Every way HTML can name a host, one host each (`<name>.tracker.test`), so a count per
 * host says which construct opened a connection. `remote`: content the person may ask
 * for ("Load remote content": images, styles, fonts); all others never connect.
 */
const CONSTRUCTS: Array<{ name: string; remote?: true; alone?: true; html: (url: (path?: string) => string, host: string) => string }> = [
    { name: 'iframe', html: (u) => `<iframe src="${u()}"></iframe>` },
    { name: 'iframe-https', html: (_u, host) => `<iframe src="https://${host}/"></iframe>` },
    { name: 'iframe-relative-scheme', html: (_u, host) => `<iframe src="//${host}/"></iframe>` },
    { name: 'iframe-srcdoc', html: (u) => `<iframe srcdoc="<iframe src='${u()}'></iframe><img src='${u('i.png')}'>"></iframe>` },
    { name: 'frameset-in-srcdoc', html: (u) => `<iframe srcdoc="<frameset><frame src='${u()}'></frameset>"></iframe>` },
    { name: 'object', html: (u) => `<object data="${u('o.swf')}" type="application/x-shockwave-flash"></object>` },
    { name: 'object-image', html: (u) => `<object data="${u('o.png')}" type="image/png"></object>` },
    { name: 'embed', html: (u) => `<embed src="${u('e.swf')}">` },
    { name: 'link-preconnect', html: (u) => `<link rel="preconnect" href="${u()}">` },
    { name: 'link-dns-prefetch', html: (u) => `<link rel="dns-prefetch" href="${u()}">` },
    { name: 'link-prefetch', html: (u) => `<link rel="prefetch" href="${u('p.html')}">` },
    { name: 'link-prerender', html: (u) => `<link rel="prerender" href="${u('p.html')}">` },
    { name: 'link-preload', html: (u) => `<link rel="preload" as="image" href="${u('p.png')}">` },
    { name: 'link-modulepreload', html: (u) => `<link rel="modulepreload" href="${u('m.js')}">` },
    { name: 'link-icon', html: (u) => `<link rel="icon" href="${u('favicon.ico')}">` },
    { name: 'meta-refresh', html: (u) => `<meta http-equiv="refresh" content="0;url=${u()}">` },
    { name: 'meta-link-header', html: (u) => `<meta http-equiv="Link" content="<${u()}>; rel=preconnect">` },
    { name: 'base', html: (u) => `<base href="${u()}"><img src="relative.png" alt="">` },
    { name: 'script', html: (u) => `<script src="${u('s.js')}"></script>` },
    { name: 'speculation-rules', html: (u) => `<script type="speculationrules">{"prefetch":[{"source":"list","urls":["${u('spec.html')}"]}]}</script>` },
    { name: 'ping', html: (_u, host) => `<a id="ping" href="#x" ping="http://${host}/ping">ping</a>` },
    { name: 'anchor', html: (u) => `<a id="anchor" href="${u('landing')}">a link</a>` },
    { name: 'form', html: (u) => `<form action="${u('form')}" method="post"><button id="form-submit" type="submit">Send</button></form>` },
    { name: 'formaction', html: (u) => `<form><button id="formaction" formaction="${u('formaction')}">Go</button></form>` },
    { name: 'video-poster', remote: true, html: (u) => `<video poster="${u('poster.png')}"></video>` },
    { name: 'video-src', html: (u) => `<video src="${u('v.mp4')}" preload="auto"></video>` },
    { name: 'audio-src', html: (u) => `<audio src="${u('a.mp3')}" preload="auto"></audio>` },
    { name: 'source-src', html: (u) => `<video preload="auto"><source src="${u('s.mp4')}" type="video/mp4"></video>` },
    { name: 'track-src', html: (u) => `<video><track default kind="captions" src="${u('t.vtt')}"></video>` },
    { name: 'template-shadow-root', html: (u) => `<div><template shadowrootmode="open"><iframe src="${u()}"></iframe></template></div>` },
    { name: 'noscript', html: (u) => `<noscript><iframe src="${u()}"></iframe></noscript>` },
    { name: 'svg-use', html: (u) => `<svg width="10" height="10"><use href="${u('u.svg#a')}"></use></svg>` },
    { name: 'svg-xlink-use', html: (u) => `<svg width="10" height="10" xmlns:xlink="http://www.w3.org/1999/xlink"><use xlink:href="${u('x.svg#a')}"></use></svg>` },
    { name: 'svg-feimage', remote: true, html: (u) => `<svg width="10" height="10"><filter id="f"><feImage href="${u('fe.png')}"/></filter><rect width="10" height="10" filter="url(#f)"/></svg>` },
    // Markup whose serialisation parses into another tree (mutation XSS): the frame must still
    // name no host. Each in a mail of its own, as its unclosed elements swallow what follows.
    { name: 'mutation-svg-style', alone: true, html: (u) => `<svg></p><style><a id="</style><iframe src=${u()}>">` },
    { name: 'mutation-mglyph', alone: true, html: (u) => `<math><mtext><table><mglyph><style><!--</style><img title="--&gt;&lt;/mglyph&gt;&lt;iframe src=${u()}&gt;">` },
    { name: 'mutation-nested-form', alone: true, html: (u) => `<form><math><mtext></form><form><mglyph><style></math><iframe src=${u()}>` },
    { name: 'img', remote: true, html: (u) => `<img id="remote-img" src="${u('pixel.png')}" alt="">` },
    { name: 'img-https', remote: true, html: (_u, host) => `<img src="https://${host}/pixel.png" alt="">` },
    { name: 'img-lazy', remote: true, html: (u) => `<img src="${u('lazy.png')}" loading="lazy" alt="">` },
    { name: 'img-srcset', remote: true, html: (u) => `<img srcset="${u('srcset.png')} 1x" alt="">` },
    { name: 'picture-source', remote: true, html: (u) => `<picture><source srcset="${u('picture.png')}"><img alt=""></picture>` },
    { name: 'input-image', remote: true, html: (u) => `<input type="image" src="${u('input.png')}" alt="go">` },
    { name: 'background-attribute', remote: true, html: (u) => `<table background="${u('table.png')}"><tr><td background="${u('td.png')}">cell</td></tr></table>` },
    { name: 'svg-image', remote: true, html: (u) => `<svg width="10" height="10"><image href="${u('svg.png')}" width="10" height="10"/></svg>` },
    { name: 'link-stylesheet', remote: true, html: (u) => `<link rel="stylesheet" href="${u('s.css')}">` },
    { name: 'style-import', remote: true, html: (u) => `<style>@import url(${u('import.css')});</style>` },
    { name: 'style-url', remote: true, html: (u) => `<style>.bg-style { background: url(${u('bg.png')}); }</style><p class="bg-style">bg</p>` },
    { name: 'style-attribute', remote: true, html: (u) => `<p style="background-image: url('${u('inline.png')}')">inline</p>` },
    { name: 'style-font', remote: true, html: (u) => `<style>@font-face { font-family: F; src: url(${u('f.woff')}); } .font { font-family: F; }</style><p class="font">font</p>` }
];

/** One listener per construct, each counting the TCP connections it accepts (and answering HTTP with a GIF). */
interface Trackers {
    /** `--host-resolver-rules` mapping `<name>.tracker.test` to its listener. */
    rules: string;
    /** Connections per construct name, those with none left out. */
    counts(): Record<string, number>;
    reset(): void;
    close(): Promise<void>;
}

async function startTrackers(): Promise<Trackers> {
    const gif = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
    const counts = new Map<string, number>();
    const servers: Http.Server[] = [];
    const rules: string[] = [];
    for (const { name } of CONSTRUCTS) {
        const server = Http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/gif', 'access-control-allow-origin': '*' }).end(gif));
        server.on('connection', (socket) => {
            counts.set(name, (counts.get(name) ?? 0) + 1);
            // An https:// URL sends a TLS hello: close instead of answering it.
            socket.once('data', (chunk: Buffer) => chunk[0] === 0x16 && socket.destroy());
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        servers.push(server);
        rules.push(`MAP ${name}.tracker.test 127.0.0.1:${(server.address() as AddressInfo).port}`);
    }

    return {
        rules: rules.join(', '),
        counts: () => Object.fromEntries([...counts].sort()),
        reset: () => counts.clear(),
        close: () => Promise.all(servers.map((server) => new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
        }))).then(() => undefined)
    };
}

/** The construct's markup, aimed at its own host. */
function constructHtml({ name, html }: typeof CONSTRUCTS[number]): string {
    const host = `${name}.tracker.test`;
    return html((path = '') => `http://${host}/${path}`, host);
}

/** The mails' HTML: the first holds every construct that is not `alone`, then one mail for each that is. */
function trackingMails(): string[] {
    const page = (body: string) => `<html><head><title>tracked</title></head><body><p id="hello">Hello</p>\n${body}\n</body></html>`;
    return [page(CONSTRUCTS.filter((c) => !c.alone).map(constructHtml).join('\n')), ...CONSTRUCTS.filter((c) => c.alone).map((c) => page(constructHtml(c)))];
}

/**
 * The browsers: the bundled headless shell, and a full Chromium (Debian's `chromium`),
 * which connected to the host of a blocked frame where the shell did not. npm cannot
 * install it: its half runs where the machine has one (docs/testing.md, "Browsers").
 */
const BROWSERS = [
    { name: 'the headless shell of @sparticuz/chromium', path: undefined, missing: false },
    { name: 'a full Chromium', path: fullChromiumPath(), missing: fullChromiumPath() === undefined }
];

describe('web interface: no connection to a host named in a mail', () => {
    for (const { name: browserName, path, missing } of BROWSERS) {
        describe(`in ${browserName}`, { skip: missing }, () => {
            let trackers: Trackers;
            let browser: Browser;
            let p: ProvisionedServer;
            let smtp: SmtpListener;
            let baseUrl: string;
            // The first mail, then one for each construct that must be alone.
            let messageIds: string[];
            let context: BrowserContext | undefined;

            before(async () => {
                trackers = await startTrackers();
                if (missing) {
                    throw new Error('no full Chromium: install Debian\'s (apt-get install chromium) or set INBOX_CAPTURE_CHROMIUM');
                }

                browser = await launchBrowser([`--host-resolver-rules=${trackers.rules}`], path);
                p = await provisionServer({ listen: true });
                baseUrl = p.server.info.uri;
                smtp = createSmtpListener({ capture: p.api.capture, port: 0 });
                const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: (await smtp.listen()).port, secure: false, ignoreTLS: true });
                try {
                    messageIds = [];
                    for (const html of trackingMails()) {
                        const info = await transport.sendMail({ from: 'sender@test.example', to: 'tracked@test.example', subject: 'tracked', text: 'plain', html });
                        messageIds.push(info.messageId.replace(/^<|>$/g, ''));
                    }
                }
                finally {
                    transport.close();
                }
            });

            after(async () => {
                await browser?.close();
                await smtp?.close();
                await p?.cleanup();
                await trackers?.close();
            });

            afterEach(async () => {
                await context?.close();
                context = undefined;
            });

            /** Opens one mail in a new context (closing the last); connections are counted from here. */
            const openMail = async (messageId: string): Promise<{ page: Page; frame: FrameLocator }> => {
                await context?.close();
                context = await contextWithKey(browser, p.apiKey);
                const page = await context.newPage();
                await openUi(page, baseUrl, `#/inbox/tracked/email/${encodeURIComponent(messageId)}/html`);
                const frame = page.frameLocator('iframe.mail-frame').frameLocator('#mail');
                await frame.locator('#hello').waitFor();
                return { page, frame };
            };

            it('maps every tracker host to a listener that counts (the browser reaches them)', async () => {
                context = await browser.newContext();
                const page = await context.newPage();
                trackers.reset();
                const answer = await page.goto('http://iframe.tracker.test/');
                expect(answer?.status()).to.equal(200);
                expect(trackers.counts()).to.equal({ iframe: 1 });
            });

            it('opens no connection while the mail is shown, hovered and clicked, before the person asks for remote content', { timeout: 60_000 }, async () => {
                trackers.reset();
                const [first, ...alone] = messageIds;
                const { page, frame } = await openMail(first!);
                await frame.locator('#anchor').hover();
                await frame.locator('#anchor').click();
                await frame.locator('#ping').click();
                await frame.locator('#form-submit').click();
                await frame.locator('#formaction').click();
                await page.waitForTimeout(SETTLE_MS);
                for (const messageId of alone) {
                    await (await openMail(messageId)).page.waitForTimeout(SETTLE_MS);
                }

                expect(trackers.counts()).to.equal({});
            });

            it('after "Load remote content", connects only for images, styles and fonts', { timeout: 60_000 }, async () => {
                trackers.reset();
                for (const [i, messageId] of messageIds.entries()) {
                    const { page, frame } = await openMail(messageId);
                    const load = page.getByRole('button', { name: 'Load remote content' });
                    if (i > 0) {
                        // The mutation-XSS mails name hosts only in frames, which never load:
                        // no remote content, so nothing is offered (docs/ui.md, "Security model").
                        expect(await load.isVisible()).to.be.false();
                    }
                    else {
                        await load.click();
                        await frame.locator('#remote-img').evaluate((img: { complete: boolean; naturalWidth: number; addEventListener(type: 'load', listener: () => void): void }) =>
                            img.complete && img.naturalWidth > 0 ? true : new Promise((resolve) => img.addEventListener('load', () => resolve(true))));
                        await frame.locator('#anchor').click();
                    }

                    await page.waitForTimeout(SETTLE_MS);
                }

                const counts = trackers.counts();
                const notRemote = CONSTRUCTS.filter((c) => !c.remote).map((c) => c.name);
                expect(Object.keys(counts).filter((name) => notRemote.includes(name))).to.equal([]);
                // The person's choice works: remote images, styles and fonts were fetched.
                for (const name of ['img', 'img-srcset', 'background-attribute', 'link-stylesheet', 'style-url', 'style-attribute']) {
                    expect(counts[name], name).to.be.above(0);
                }
            });
        });
    }
});
