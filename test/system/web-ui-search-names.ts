import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createSmtpListener, type SmtpListener } from '../../adapters/smtp';
import { launchBrowser } from '../helpers/browser';
import { smtpSender, type MailSender } from '../helpers/mcp-scenario';
import { provisionServer, type ProvisionedServer } from '../helpers/provision-server';
import { contextWithKey, openUi, waitForCount } from '../helpers/web-ui';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

// The web interface's search box finds mail by the display name its list shows
// (docs/api.md, "Search"): mail sent over SMTP, searched in a real browser.

describe('web interface: search by the sender\'s display name', () => {
    let browser: Browser;
    let p: ProvisionedServer;
    let smtp: SmtpListener;
    let sender: MailSender;
    let context: BrowserContext | undefined;

    before(async () => {
        browser = await launchBrowser();
        p = await provisionServer({ listen: true });
        smtp = createSmtpListener({ capture: p.api.capture, host: '127.0.0.1', port: 0 });
        sender = smtpSender((await smtp.listen()).port);
    });

    after(async () => {
        await context?.close();
        sender?.close();
        await browser?.close();
        await smtp?.close();
        await p?.cleanup();
    });

    const open = async (hash: string): Promise<Page> => {
        context = await contextWithKey(browser, p.apiKey);
        const page = await context.newPage();
        await openUi(page, p.server.info.uri, hash);
        return page;
    };

    const shownSenders = (page: Page) => page.locator('#email-list a.item .from').allTextContents();

    it('finds the mail whose display name the list shows: two words, from:"…", negated', { timeout: 60_000 }, async () => {
        const inbox = 'named-senders';
        await sender.send(`${inbox}@test.example`, { from: 'Shop Newsletter <news@shop.test>', subject: 'This week\'s deals', text: 'Deals inside' });
        await sender.send(`${inbox}@test.example`, { from: 'Billing Team <accounts@corp.test>', subject: 'Your invoice', text: 'Amount due' });
        await sender.send(`${inbox}@test.example`, { from: 'plain@other.test', subject: 'No name', text: 'Hello' });
        const page = await open(`#/inbox/${inbox}`);
        await waitForCount(page, '#email-list a.item', 3);
        expect(await shownSenders(page)).to.equal(['plain@other.test', 'Billing Team', 'Shop Newsletter']);

        await page.fill('#search-q', 'Shop Newsletter');
        await waitForCount(page, '#email-list a.item', 1);
        expect(await shownSenders(page)).to.equal(['Shop Newsletter']);

        await page.fill('#search-q', 'from:"Billing Team"');
        await page.locator('#email-list a.item .from', { hasText: 'Billing Team' }).waitFor();
        await waitForCount(page, '#email-list a.item', 1);
        expect(await page.locator('#email-list a.item .subject').allTextContents()).to.equal(['Your invoice']);

        await page.fill('#search-q', '-from:"billing team" -newsletter');
        await page.locator('#email-list a.item .from', { hasText: 'plain@other.test' }).waitFor();
        await waitForCount(page, '#email-list a.item', 1);
    });
});
