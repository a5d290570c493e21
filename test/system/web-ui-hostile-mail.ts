import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Browser, BrowserContext, FrameLocator, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser';
import { buildMail } from '../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../helpers/provision-server';
import { contextWithKey, openUi, startRequestRecorder, type RequestRecorder } from '../helpers/web-ui';

const { expect } = Code;
const { describe, it, before, after, beforeEach, afterEach } = exports.lab = Lab.script();

/** What the page functions read of an image (the tests' TypeScript has no DOM library). */
interface Img {
    complete: boolean;
    naturalWidth: number;
    addEventListener(type: 'load', listener: () => void): void;
}

/** Milliseconds given to anything hostile to happen before its absence is checked. */
const SETTLE_MS = 1500;

/** Every trick of hostile HTML mail at once, each aimed at the recorder. */
function hostileHtml(evil: string): string {
    return `<html><head>
<meta http-equiv="refresh" content="0;url=${evil}/refresh">
<link rel="stylesheet" href="${evil}/link.css">
<style>@import url(${evil}/import.css); p.bg { background: url(${evil}/bg.png); }</style>
</head><body>
<p id="hello">Hostile body</p>
<script>document.getElementById('hello').textContent = 'script ran'; fetch('${evil}/script'); top.location = '${evil}/top-script';</script>
<img id="broken" src="no-such-image" onerror="fetch('${evil}/onerror')">
<img id="inline" alt="inline" src="data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==">
<img id="remote" alt="remote" src="${evil}/pixel.png">
<p class="bg">background</p>
<form action="${evil}/form" method="post"><input name="a" value="b"><button id="submit" type="submit">Send</button></form>
<a id="top" href="${evil}/top" target="_top">Top</a>
<a id="self" href="${evil}/self">Self</a>
<a id="blank" href="${evil}/blank" target="_blank">Blank</a>
<iframe src="${evil}/frame"></iframe>
<object data="${evil}/object"></object>
</body></html>`;
}

describe('web interface: hostile HTML mail', () => {
    let browser: Browser;
    let p: ProvisionedServer;
    let evil: RequestRecorder;
    let baseUrl: string;
    let messageId: string;
    let context: BrowserContext;
    let page: Page;

    before(async () => {
        browser = await launchBrowser();
        p = await provisionServer({ listen: true });
        baseUrl = p.server.info.uri;
        evil = await startRequestRecorder();
        const [email] = await p.api.ingestForApi(buildMail({ subject: 'hostile', html: hostileHtml(evil.origin), text: 'plain' }), { recipients: ['hostile@test.example'] });
        messageId = email.messageId;
    });

    after(async () => {
        await browser?.close();
        await evil?.close();
        await p?.cleanup();
    });

    beforeEach(async () => {
        evil.paths.length = 0;
        context = await contextWithKey(browser, p.apiKey);
        page = await context.newPage();
    });

    afterEach(() => context.close());

    const mailFrame = (): FrameLocator => page.frameLocator('iframe.mail-frame').frameLocator('#mail');

    const openHostile = async () => {
        const hash = `#/inbox/hostile/email/${encodeURIComponent(messageId)}/html`;
        await openUi(page, baseUrl, hash);
        await mailFrame().locator('#hello').waitFor();
        return `${baseUrl}/ui/${hash}`;
    };

    it('runs no script, submits no form, follows no refresh and no target=_top link', async () => {
        const url = await openHostile();
        const frame = mailFrame();
        // The mail is shown: its text and an inline data: image render.
        expect(await frame.locator('#hello').textContent()).to.equal('Hostile body');
        expect(await frame.locator('#inline').evaluate((img: Img) => img.complete && img.naturalWidth)).to.equal(1);

        await frame.locator('#submit').click();
        await frame.locator('#top').click();
        await frame.locator('#self').click();
        await frame.locator('#blank').click();
        await page.waitForTimeout(SETTLE_MS);

        expect(evil.paths).to.equal([]);
        expect(page.url()).to.equal(url);
        expect(context.pages().length).to.equal(1);
        // The script's side effect is absent, and the frame still shows the mail (nothing navigated it).
        expect(await frame.locator('#hello').textContent()).to.equal('Hostile body');
    });

    it('requests no remote image or style until "Load remote content", then does', async () => {
        await openHostile();
        await page.waitForTimeout(SETTLE_MS);
        expect(evil.paths).to.equal([]);
        expect(await mailFrame().locator('#remote').evaluate((img: Img) => img.naturalWidth)).to.equal(0);

        await page.getByRole('button', { name: 'Load remote content' }).click();
        await mailFrame().locator('#remote').evaluate((img: Img) => img.complete && img.naturalWidth > 0 ? true : new Promise((resolve) => img.addEventListener('load', () => resolve(true))));
        expect(evil.paths).to.include(['/pixel.png', '/bg.png', '/link.css', '/import.css']);
        // Still nothing that runs or navigates.
        expect(evil.paths.filter((path) => !/^\/(pixel\.png|bg\.png|link\.css|import\.css)$/.test(path))).to.equal([]);
        expect(await mailFrame().locator('#hello').textContent()).to.equal('Hostile body');
    });

    it('loads remote content for that email only', async () => {
        await openHostile();
        await page.getByRole('button', { name: 'Load remote content' }).click();
        await mailFrame().locator('#remote').evaluate((img: Img) => img.complete && img.naturalWidth > 0 ? true : new Promise((resolve) => img.addEventListener('load', () => resolve(true))));
        const [other] = await p.api.ingestForApi(buildMail({ subject: 'second', html: `<p id="hello">Second</p><img src="${evil.origin}/second.png">` }), { recipients: ['hostile@test.example'] });
        await page.evaluate(`location.hash = ${JSON.stringify(`#/inbox/hostile/email/${encodeURIComponent(other.messageId)}/html`)}`);
        await mailFrame().locator('#hello').filter({ hasText: 'Second' }).waitFor();
        await page.waitForTimeout(SETTLE_MS);
        expect(evil.paths).to.not.include('/second.png');
    });
});
