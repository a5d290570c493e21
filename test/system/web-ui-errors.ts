import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser';
import { buildMail } from '../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../helpers/provision-server';
import { contextWithKey, openUi } from '../helpers/web-ui';

const { expect } = Code;
const { describe, it, before, after, afterEach } = exports.lab = Lab.script();

// The web interface shows what the server said is wrong (docs/api.md, "Errors"), read by
// the page's own client from the detail header, in a real browser.

describe('web interface: errors that say what is wrong', () => {
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

    const open = async (hash: string, apiKey = p.apiKey): Promise<Page> => {
        context = await contextWithKey(browser, apiKey);
        const page = await context.newPage();
        await openUi(page, p.server.info.uri, hash);
        return page;
    };

    it('the search box says where the search cannot be read', async () => {
        await p.api.ingestForApi(buildMail({ to: 'errors-inbox@test.example', subject: 'Hello' }));
        const page = await open('#/inbox/errors-inbox');
        await page.locator('#email-list a.item').first().waitFor();

        await page.fill('#search-q', 'subject:"unclosed');
        const status = page.locator('#emails-status', { hasText: 'The search cannot be read' });
        await status.waitFor();
        expect(await status.textContent()).to.equal('The search cannot be read: q: unclosed quote at character 9 (How to search).');

        await page.fill('#search-q', 'has:html');
        await page.locator('#emails-status', { hasText: 'has:html' }).waitFor();
        expect(await page.locator('#emails-status').textContent()).to.equal('The search cannot be read: q: has:html is not a known has: value (attachment, link, code) (How to search).');
    });

    it('an email that is not there says which', async () => {
        const page = await open(`#/inbox/errors-inbox/email/${encodeURIComponent('gone@example.test')}`);
        const pane = page.locator('#pane-email', { hasText: 'Not found' });
        await pane.waitFor();
        expect(await pane.textContent()).to.contain('Not found: it may have been deleted. messageId: no email "gone@example.test"');
    });
});
