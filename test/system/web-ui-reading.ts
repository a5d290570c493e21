import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser';
import { buildMail } from '../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../helpers/provision-server';
import { contextWithKey, openUi, waitForCount, waitForHash } from '../helpers/web-ui';

const { expect } = Code;
const { describe, it, before, after, afterEach } = exports.lab = Lab.script();

// What people expect of a mail reader (docs/ui.md, "What it does"): dark mode, the raw
// source, unread in bold, recipient and size in the list, and j / k / Delete, in Chromium.

const AXE = Path.join(__dirname, '..', '..', 'node_modules', 'axe-core', 'axe.min.js');

/** What the page functions of these tests read (their TypeScript has no DOM library). */
interface PageGlobals {
    document: { body: unknown; querySelector(selector: string): unknown };
    getComputedStyle(node: unknown): { backgroundColor: string; fontWeight: string };
}

describe('web interface: reading mail', () => {
    let browser: Browser;
    let p: ProvisionedServer;
    let context: BrowserContext | undefined;

    before(async () => {
        browser = await launchBrowser();
        p = await provisionServer({ listen: true });
    });

    after(async () => {
        await browser?.close();
        await p?.cleanup();
    });

    afterEach(async () => {
        await context?.close();
        context = undefined;
    });

    const deliver = async (inbox: string, mail: Parameters<typeof buildMail>[0] = {}) => {
        const [email] = await p.api.ingestForApi(buildMail({ to: `${inbox}@test.example`, ...mail }), { recipients: [`${inbox}@test.example`] });
        return email!;
    };

    const open = async (hash: string, options: Parameters<Browser['newContext']>[0] = {}): Promise<Page> => {
        context = await contextWithKey(browser, p.apiKey, options);
        const page = await context.newPage();
        await openUi(page, p.server.info.uri, hash);
        return page;
    };

    const rows = (page: Page) => page.locator('#email-list a.item');
    const background = (page: Page) => page.evaluate(() => {
        const g = globalThis as unknown as PageGlobals;
        return g.getComputedStyle(g.document.body).backgroundColor;
    });
    const weightOf = (page: Page, id: string) => page.evaluate((messageId) => {
        const g = globalThis as unknown as PageGlobals;
        return g.getComputedStyle(g.document.querySelector(`#email-list a.item[data-id="${messageId}"] .subject`)).fontWeight;
    }, id);

    const axeProblems = async (page: Page) => {
        // Evaluated over the DevTools protocol, not as a page script, so the page's CSP stays as it is.
        await page.evaluate(await Fs.readFile(AXE, 'utf8'));
        const violations = await page.evaluate('axe.run().then((result) => result.violations.map((v) => `${v.impact}: ${v.id}`))') as string[];
        return violations.filter((v) => /^(serious|critical)/.test(v));
    };

    it('follows the system\'s dark scheme, and a toggle that is remembered across a reload; axe finds nothing serious in dark', async () => {
        const email = await deliver('dark-inbox', { subject: 'in the dark', html: '<p>Hello</p>' });
        const dark = await open('#/inbox/dark-inbox', { colorScheme: 'dark' });
        await rows(dark).first().waitFor();
        expect(await background(dark)).to.equal('rgb(13, 17, 23)');
        expect(await dark.getAttribute('#theme-toggle', 'aria-pressed')).to.equal('true');
        await context!.close();

        const page = await open(`#/inbox/dark-inbox/email/${encodeURIComponent(email.messageId)}/links`, { colorScheme: 'light' });
        await page.locator('#email-body:not([hidden])').waitFor();
        expect(await background(page)).to.equal('rgb(255, 255, 255)');
        expect(await page.getAttribute('#theme-toggle', 'aria-pressed')).to.equal('false');
        await page.click('#theme-toggle');
        expect(await background(page)).to.equal('rgb(13, 17, 23)');
        expect(await page.evaluate('localStorage.getItem("inbox-capture.theme")')).to.equal('dark');

        await page.reload();
        await page.locator('#email-body:not([hidden])').waitFor();
        await rows(page).first().waitFor();
        expect(await background(page)).to.equal('rgb(13, 17, 23)');
        expect(await page.getAttribute('#theme-toggle', 'aria-pressed')).to.equal('true');
        expect(await axeProblems(page)).to.equal([]);

        // Back to light, also remembered.
        await page.click('#theme-toggle');
        await page.reload();
        await rows(page).first().waitFor();
        expect(await background(page)).to.equal('rgb(255, 255, 255)');
    });

    it('shows the raw source as text: markup in a mail stays markup, and only the first MiB with a note past it', async () => {
        const hostile = await deliver('source-inbox', { subject: 'scripted', text: 'plain', html: '<p>hi</p><script>window.sourceRan = true</script><img src=x onerror="window.sourceRan = true">' });
        const page = await open(`#/inbox/source-inbox/email/${encodeURIComponent(hostile.messageId)}/source`);
        const source = page.locator('#panel-source pre.source');
        await source.waitFor();
        const text = await source.textContent();
        expect(text).to.contain('<script>window.sourceRan = true</script>');
        expect(text).to.contain('Subject: scripted');
        expect(await page.locator('#panel-source script, #panel-source img').count()).to.equal(0);
        expect(await page.evaluate('window.sourceRan === undefined')).to.be.true();
        expect(await page.locator('#source-note').count()).to.equal(0);

        // 2 MiB of text: the first MiB shows, and a note says how much of how much.
        const big = await deliver('source-inbox', { subject: 'big', text: 'abcdefghijklmnopqrstuvwxyz012345678901234567890123456789012345678\n'.repeat(32 * 1024) });
        expect(big.size).to.be.above(2 * 1024 * 1024);
        await page.evaluate((id) => {
            (globalThis as unknown as { location: { hash: string } }).location.hash = `#/inbox/source-inbox/email/${encodeURIComponent(id)}/source`;
        }, big.messageId);
        await page.locator('#source-note').waitFor();
        expect(await page.locator('#source-note').textContent()).to.contain(`first 1.0 MB of ${(big.size / 1024 / 1024).toFixed(1)} MB`);
        expect(await page.evaluate('document.querySelector("#panel-source pre.source").textContent.length')).to.equal(1024 * 1024);
    });

    it('shows unread emails in bold until opened, then not, also after a reload; the store keeps it', async () => {
        const first = await deliver('bold-inbox', { subject: 'first' });
        const second = await deliver('bold-inbox', { subject: 'second' });
        const page = await open('#/inbox/bold-inbox');
        await waitForCount(page, '#email-list a.item', 2);
        expect(await weightOf(page, first.messageId)).to.equal('700');
        expect(await weightOf(page, second.messageId)).to.equal('700');
        expect(await page.locator(`#email-list a.item[data-id="${first.messageId}"]`).textContent()).to.contain('Unread');

        await page.locator(`#email-list a.item[data-id="${first.messageId}"]`).click();
        await page.locator(`#email-list a.item.unread[data-id="${first.messageId}"]`).waitFor({ state: 'detached' });
        expect(await weightOf(page, first.messageId)).to.equal('400');
        expect(await weightOf(page, second.messageId)).to.equal('700');
        expect((await p.api.capture.getEmail(first.messageId))!.seen).to.be.true();
        expect((await p.api.capture.getEmail(second.messageId))!.seen).to.be.false();

        await page.reload();
        await waitForCount(page, '#email-list a.item', 2);
        expect(await weightOf(page, first.messageId)).to.equal('400');
        expect(await weightOf(page, second.messageId)).to.equal('700');
    });

    it('shows each email\'s recipient and size in the list', async () => {
        const email = await deliver('sized-inbox', { subject: 'sized', text: 'x'.repeat(3000) });
        const page = await open('#/inbox/sized-inbox');
        await rows(page).first().waitFor();
        expect(await rows(page).first().locator('.to').textContent()).to.equal('To sized-inbox@test.example');
        expect(await rows(page).first().locator('.size').textContent()).to.equal(`${(email.size / 1024).toFixed(1)} KB`);
        expect(email.size).to.be.above(3000);
    });

    it('j / k open the next and previous email, Delete deletes the open one after the question; not while typing', async () => {
        const oldest = await deliver('keys-inbox', { subject: 'oldest' });
        const middle = await deliver('keys-inbox', { subject: 'middle' });
        const newest = await deliver('keys-inbox', { subject: 'newest' });
        const hashOf = (id: string) => `#/inbox/keys-inbox/email/${encodeURIComponent(id)}`;
        const page = await open('#/inbox/keys-inbox');
        await waitForCount(page, '#email-list a.item', 3);

        await page.keyboard.press('j');
        await waitForHash(page, hashOf(newest.messageId));
        await page.keyboard.press('j');
        await waitForHash(page, hashOf(middle.messageId));
        await page.keyboard.press('j');
        await waitForHash(page, hashOf(oldest.messageId));
        await page.keyboard.press('k');
        await waitForHash(page, hashOf(middle.messageId));
        await page.locator('#email-subject', { hasText: 'middle' }).waitFor();

        // Typed into a field: text, not keys.
        await page.click('#inbox-prefix');
        await page.keyboard.type('jk');
        await page.keyboard.press('Home');
        await page.keyboard.press('Delete');
        expect(await page.inputValue('#inbox-prefix')).to.equal('k');
        expect(await page.evaluate('location.hash')).to.equal(hashOf(middle.messageId));
        expect(await page.locator('#confirm-dialog').isVisible()).to.be.false();
        await page.fill('#inbox-prefix', '');

        // Delete from the page (the search field left): the question names the open email.
        await page.locator('#email-subject').click();
        await page.keyboard.press('Delete');
        await page.locator('#confirm-dialog').waitFor();
        expect(await page.locator('#confirm-text').textContent()).to.contain('"middle"');
        await page.click('#confirm-ok');
        await waitForCount(page, '#email-list a.item', 2);
        expect(await p.api.capture.getEmail(middle.messageId)).to.be.null();
        expect(await p.api.capture.getEmail(newest.messageId)).to.not.be.null();
    });
});
