import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Nodemailer from 'nodemailer';
import * as Path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createSmtpListener, type SmtpListener } from '../../adapters/smtp';
import { launchBrowser } from '../helpers/browser';
import { buildMail } from '../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../helpers/provision-server';
import { contextWithKey, openUi, startRequestRecorder, waitForCount, waitForHash } from '../helpers/web-ui';

const { expect } = Code;
const { describe, it, before, after, afterEach } = exports.lab = Lab.script();

const AXE = Path.join(__dirname, '..', '..', 'node_modules', 'axe-core', 'axe.min.js');
const ATTACHMENT = Buffer.from([0, 1, 2, 3, 250, 251, 252, 253, 254, 255]);
/** A 1×1 GIF: an inline image that renders. */
const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

/** What the page functions of these tests read (their TypeScript has no DOM library). */
interface PageRows {
    document: {
        querySelectorAll(selector: string): ArrayLike<{ dataset: { id?: string } }>;
        activeElement: { dataset?: { id?: string } } | null;
    };
}

describe('web interface in a browser', () => {
    let browser: Browser;
    let p: ProvisionedServer;
    let smtp: SmtpListener;
    let smtpPort: number;
    let baseUrl: string;
    let context: BrowserContext | undefined;
    let apiRequests: string[] = [];

    before(async () => {
        browser = await launchBrowser();
        p = await provisionServer({ listen: true });
        baseUrl = p.server.info.uri;
        smtp = createSmtpListener({ capture: p.api.capture, port: 0 });
        smtpPort = (await smtp.listen()).port;
        p.server.ext('onRequest', (request, h) => {
            if (request.path.startsWith('/v1/')) {
                apiRequests.push(request.url.pathname + request.url.search);
            }

            return h.continue;
        });
    });

    after(async () => {
        await browser?.close();
        await smtp?.close();
        await p?.cleanup();
    });

    afterEach(async () => {
        await context?.close();
        context = undefined;
        apiRequests = [];
    });

    const deliver = (inbox: string, mail: Parameters<typeof buildMail>[0] = {}) => p.api.ingestForApi(buildMail({ to: `${inbox}@test.example`, ...mail }), { recipients: [`${inbox}@test.example`] });

    const open = async (hash: string, options: Parameters<Browser['newContext']>[0] = {}): Promise<Page> => {
        context = await contextWithKey(browser, p.apiKey, options);
        const page = await context.newPage();
        await openUi(page, baseUrl, hash);
        return page;
    };

    const rows = (page: Page) => page.locator('#email-list a.item');

    /**
     * Gives the row of `messageId` keyboard focus and waits until the page says it has it,
     * so that the next key press goes to that row and not to whatever held focus before.
     */
    const focusRow = async (page: Page, messageId: string) => {
        const row = rows(page).nth(await page.evaluate((id) => Array.from((globalThis as unknown as PageRows).document.querySelectorAll('#email-list a.item')).findIndex((a) => a.dataset.id === id), messageId));
        await row.focus();
        await page.waitForFunction((id) => (globalThis as unknown as PageRows).document.activeElement?.dataset?.id === id, messageId);
    };

    describe('key entry', () => {

        it('asks once per tab, says so when a key is refused, and keeps it in sessionStorage only', async () => {
            await deliver('keyed-inbox');
            context = await browser.newContext();
            const page = await context.newPage();
            await page.goto(`${baseUrl}/ui/`);
            const dialog = page.locator('#key-dialog');
            await dialog.waitFor();
            expect(await page.locator('#inbox-list a.item').count()).to.equal(0);
            // A newcomer learns where a key comes from.
            const help = await page.locator('#key-help').textContent();
            expect(help).to.contain('npx inbox-capture keys create <name>');
            expect(help).to.contain('on the machine that runs the service');

            await page.fill('#key-input', 'not-a-key');
            await page.click('#key-dialog button[type=submit]');
            await page.locator('#key-message', { hasText: 'refused' }).waitFor();
            expect(await dialog.isVisible()).to.be.true();

            await page.fill('#key-input', p.apiKey);
            await page.click('#key-dialog button[type=submit]');
            await page.locator('#inbox-list a.item', { hasText: 'keyed-inbox' }).waitFor();
            expect(await dialog.isVisible()).to.be.false();
            expect(await page.evaluate('[sessionStorage.getItem("inbox-capture.apiKey"), localStorage.length, document.cookie]')).to.equal([p.apiKey, 0, '']);

            // A reload keeps the tab's key; another tab asks again.
            await page.reload();
            await page.locator('#inbox-list a.item', { hasText: 'keyed-inbox' }).waitFor();
            expect(await dialog.isVisible()).to.be.false();
            const other = await context.newPage();
            await other.goto(`${baseUrl}/ui/`);
            await other.locator('#key-dialog').waitFor();
            expect(await other.locator('#key-message').textContent()).to.contain('Enter an API key');
        });
    });

    describe('inboxes', () => {

        it('lists inboxes with counts and last arrival, and filters them by prefix', async () => {
            await deliver('filter-alpha-1');
            await deliver('filter-alpha-1');
            await deliver('filter-alpha-2');
            await deliver('filter-beta-1');
            await deliver('unfiltered');
            const page = await open('#/');
            await page.locator('#inbox-list a.item', { hasText: 'unfiltered' }).waitFor();
            await page.fill('#inbox-prefix', 'filter-');
            await waitForCount(page, '#inbox-list a.item', 3);
            const names = await page.locator('#inbox-list a.item .name').allTextContents();
            expect(names).to.equal(['filter-beta-1', 'filter-alpha-2', 'filter-alpha-1']);
            expect(await page.locator('#inbox-list a.item', { hasText: 'filter-alpha-1' }).locator('.count').textContent()).to.equal('2 emails');
            expect(await page.locator('#inbox-list a.item', { hasText: 'filter-alpha-1' }).locator('time').getAttribute('datetime')).to.match(/^\d{4}-\d\d-\d\dT/);

            await page.fill('#inbox-prefix', 'filter-alpha');
            await waitForCount(page, '#inbox-list a.item', 2);
            expect(await page.locator('#inbox-list a.item .name').allTextContents()).to.equal(['filter-alpha-2', 'filter-alpha-1']);
            expect(apiRequests).to.include('/v1/inboxes?limit=50&prefix=filter-alpha');
        });
    });

    describe('emails', () => {

        it('shows mail sent over SMTP in the open inbox without a reload', async () => {
            await deliver('live-inbox', { subject: 'already here' });
            const page = await open('#/inbox/live-inbox');
            await rows(page).first().waitFor();
            await page.evaluate('window.notReloaded = true');

            const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
            try {
                await transport.sendMail({ from: 'app@test.example', to: 'live-inbox@test.example', subject: 'arrived live', text: 'hi', attachments: [{ filename: 'a.bin', content: ATTACHMENT }] });
            }
            finally {
                transport.close();
            }

            await rows(page).filter({ hasText: 'arrived live' }).waitFor();
            expect(await rows(page).locator('.subject').allTextContents()).to.equal(['arrived live', 'already here']);
            expect(await rows(page).first().locator('.from').textContent()).to.equal('app@test.example');
            expect(await rows(page).first().locator('.clip').count()).to.equal(1);
            expect(await rows(page).nth(1).locator('.clip').count()).to.equal(0);
            expect(await page.evaluate('window.notReloaded')).to.be.true();
            expect(apiRequests.some((url) => url.includes('wait=true'))).to.be.true();
            // The inbox list follows: its count is up to date.
            await page.locator('#inbox-list a.item', { hasText: 'live-inbox' }).locator('.count', { hasText: '2 emails' }).waitFor();
        });

        it('pages by cursor while scrolling, 50 at a time, never all at once', { timeout: 60_000 }, async () => {
            for (let i = 0; i < 120; i++) {
                await deliver('many-inbox', { subject: `number ${String(i).padStart(3, '0')}` });
            }

            const page = await open('#/inbox/many-inbox');
            await rows(page).nth(49).waitFor();
            await page.waitForTimeout(300);
            expect(await rows(page).count()).to.equal(50);

            for (const expected of [100, 120]) {
                await page.locator('#emails-more').scrollIntoViewIfNeeded();
                await rows(page).nth(expected - 1).waitFor();
            }

            const subjects = await rows(page).locator('.subject').allTextContents();
            expect(subjects.length).to.equal(120);
            expect(subjects[0]).to.equal('number 119');
            expect(subjects[119]).to.equal('number 000');
            const pages = apiRequests.filter((url) => url.startsWith('/v1/emails?') && !url.includes('wait=true'));
            expect(pages.length).to.equal(3);
            expect(pages.every((url) => url.includes('limit=50'))).to.be.true();
            expect(pages.filter((url) => url.includes('cursor=')).length).to.equal(2);
        });

        it('searches in the API\'s language, with its help at hand, and says when a search cannot be read', async () => {
            await deliver('search-inbox', { from: 'alice@test.example', subject: 'Welcome aboard', text: 'Nothing to pay' });
            await deliver('search-inbox', { from: 'bob@test.example', subject: 'Your invoice', text: 'Order 4242 is due' });
            await deliver('search-inbox', { from: 'alice@test.example', subject: 'Invoice reminder', html: '<p>Order <b>4242</b> is late</p>', headers: ['X-Tags: late'] });
            const page = await open('#/inbox/search-inbox');
            await rows(page).nth(2).waitFor();
            expect(await page.locator('#search-help').textContent()).to.contain('has:attachment');

            await page.fill('#search-q', 'from:alice');
            await waitForCount(page, '#email-list a.item', 2);
            await page.fill('#search-q', 'from:alice invoice');
            await waitForCount(page, '#email-list a.item', 1);
            expect(await rows(page).locator('.subject').allTextContents()).to.equal(['Invoice reminder']);
            // The HTML's text is searched too.
            await page.fill('#search-q', 'body:"order 4242" -tag:late');
            await rows(page).filter({ hasText: 'Your invoice' }).waitFor();
            expect(await rows(page).locator('.subject').allTextContents()).to.equal(['Your invoice']);
            expect(apiRequests.some((url) => url.includes(`q=${encodeURIComponent('body:"order 4242" -tag:late').replace(/%20/g, '+')}`))).to.be.true();

            await page.fill('#search-q', '"unclosed');
            await page.locator('#emails-status', { hasText: 'The search cannot be read' }).waitFor();
            expect(await rows(page).count()).to.equal(0);
        });

        it('brings in live only the new mail that matches the search', async () => {
            await deliver('live-search', { subject: 'first order', text: 'order 1' });
            const page = await open('#/inbox/live-search');
            await rows(page).first().waitFor();
            await page.fill('#search-q', 'body:order');
            // The search's own long-poll is waiting.
            const start = Date.now();
            while (!apiRequests.some((url) => url.includes('wait=true') && url.includes('q=body%3Aorder'))) {
                expect(Date.now() - start).to.be.below(10_000);
                await page.waitForTimeout(20);
            }

            await deliver('live-search', { subject: 'not this one', text: 'nothing' });
            await deliver('live-search', { subject: 'second order', text: 'order 2' });
            await rows(page).filter({ hasText: 'second order' }).waitFor();
            expect(await rows(page).locator('.subject').allTextContents()).to.equal(['second order', 'first order']);
        });

        it('shows the sender\'s name, a one-line preview and the tags of each email, and a paperclip that needs no emoji font', async () => {
            await deliver('rows-inbox', { from: 'bob@test.example', subject: 'Plain' });
            await deliver('rows-inbox', {
                from: 'Alice Example <alice@test.example>',
                subject: 'With everything',
                text: 'First line of the text,\n\n   then more   text after blank lines.',
                headers: ['X-Tags: Welcome, beta'],
                attachments: [{ filename: 'a.bin', contentType: 'application/octet-stream', content: ATTACHMENT }]
            });
            const page = await open('#/inbox/rows-inbox');
            await rows(page).nth(1).waitFor();
            const first = rows(page).first();
            expect(await first.locator('.from').textContent()).to.equal('Alice Example');
            expect(await first.locator('.from').getAttribute('title')).to.equal('alice@test.example');
            expect(await first.locator('.preview').textContent()).to.equal('First line of the text, then more text after blank lines.');
            expect(await first.locator('.tag').allTextContents()).to.equal(['welcome', 'beta']);
            expect(await rows(page).nth(1).locator('.from').textContent()).to.equal('bob@test.example');
            expect(await rows(page).nth(1).locator('.tag').count()).to.equal(0);
            // A drawn mark (an SVG in the style sheet), not a character a font may lack.
            const clip = await first.locator('.clip').evaluate((node) => {
                const box = (node as unknown as { getBoundingClientRect(): { width: number; height: number } }).getBoundingClientRect();
                const style = (globalThis as unknown as { getComputedStyle(n: unknown): { backgroundImage: string } }).getComputedStyle(node);
                return { width: box.width, height: box.height, image: style.backgroundImage, text: (node as unknown as { textContent: string }).textContent };
            });
            expect(clip.width).to.be.above(8);
            expect(clip.height).to.be.above(8);
            expect(clip.image).to.startWith('url("data:image/svg+xml');
            expect(clip.text).to.equal('has attachments');
        });

        it('closes the open email when a search leaves it out, and keeps it open when the search finds it', async () => {
            const [alpha] = await deliver('search-close', { subject: 'alpha report' });
            const [beta] = await deliver('search-close', { subject: 'beta news' });
            const page = await open(`#/inbox/search-close/email/${encodeURIComponent(beta.messageId)}`, { viewport: { width: 1280, height: 800 } });
            await page.locator('#email-subject', { hasText: 'beta news' }).waitFor();
            await rows(page).nth(1).waitFor();

            await page.fill('#search-q', 'news');
            await waitForCount(page, '#email-list a.item', 1);
            expect(page.url()).to.contain(encodeURIComponent(beta.messageId));
            expect(await page.locator('#email-subject').textContent()).to.equal('beta news');

            await page.fill('#search-q', 'report');
            await rows(page).filter({ hasText: 'alpha report' }).waitFor();
            await waitForHash(page, '#/inbox/search-close');
            await page.locator('#email-subject', { hasText: 'No email open' }).waitFor();
            expect(await page.locator('#email-body').isHidden()).to.be.true();
            expect(await rows(page).getAttribute('data-id')).to.equal(alpha.messageId);
        });

        it('shows a 64-character inbox name whole, wrapped, at 1280 and at 375 px', async () => {
            const name = `long-${'abcdefghij'.repeat(5)}-name-of-64-ch`.slice(0, 64);
            expect(name.length).to.equal(64);
            await deliver(name, { subject: 'to a long name' });
            for (const viewport of [{ width: 1280, height: 800 }, { width: 375, height: 740 }]) {
                const page = await open('#/', { viewport });
                const label = page.locator('#inbox-list a.item .name', { hasText: name });
                await label.waitFor();
                const box = await label.evaluate((node) => {
                    const n = node as unknown as { scrollWidth: number; clientWidth: number; textContent: string; title: string };
                    return { cut: n.scrollWidth > n.clientWidth, text: n.textContent, title: n.title };
                });
                expect(box, `${viewport.width} px`).to.equal({ cut: false, text: name, title: name });
                expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), `${viewport.width} px`).to.be.true();
                await context!.close();
                context = undefined;
            }
        });

        it('moves with up and down, opens with enter', async () => {
            await deliver('keys-inbox', { subject: 'older' });
            await deliver('keys-inbox', { subject: 'newer' });
            const page = await open('#/inbox/keys-inbox');
            await rows(page).nth(1).waitFor();
            await focusRow(page, (await rows(page).first().getAttribute('data-id'))!);
            await page.keyboard.press('ArrowDown');
            expect(await page.evaluate("document.activeElement.querySelector('.subject').textContent")).to.equal('older');
            await page.keyboard.press('ArrowUp');
            await page.keyboard.press('ArrowDown');
            await page.keyboard.press('Enter');
            await page.locator('#email-subject', { hasText: 'older' }).waitFor();
            expect(page.url()).to.contain('#/inbox/keys-inbox/email/');
        });
    });

    describe('one email', () => {

        it('shows subject, from, to, time, text, headers, links and codes, as text, and survives a reload', async () => {
            const [email] = await deliver('one-inbox', {
                from: 'shop@test.example',
                subject: 'Your code is 482913 <b>bold?</b>',
                text: 'Confirm at https://example.test/confirm?t=1 <img src=x onerror=alert(1)>',
                html: '<p>Hi</p><a href="https://example.test/button">Confirm my account</a>'
            });
            const hash = `#/inbox/one-inbox/email/${encodeURIComponent(email.messageId)}/headers`;
            const page = await open(hash);
            await page.locator('table.headers').waitFor();
            await page.reload();
            await page.locator('table.headers td', { hasText: 'Your code is 482913' }).waitFor();
            expect(await page.locator('#email-subject').textContent()).to.equal('Your code is 482913 <b>bold?</b>');
            expect(await page.locator('#email-subject b').count()).to.equal(0);
            expect(await page.locator('#email-from').textContent()).to.equal('shop@test.example');
            expect(await page.locator('#email-to').textContent()).to.equal('one-inbox@test.example');
            expect(await page.locator('#email-time').textContent()).to.not.equal('');
            expect(await page.locator('#tab-headers').getAttribute('aria-selected')).to.equal('true');
            expect(await page.evaluate('document.body.dataset.view')).to.equal('email');

            await page.click('#tab-text');
            await page.locator('pre.text-body').waitFor();
            expect(await page.locator('pre.text-body').textContent()).to.contain('<img src=x onerror=alert(1)>');
            expect(await page.locator('pre.text-body img').count()).to.equal(0);
            expect(page.url()).to.endWith('/text');

            await page.click('#tab-links');
            await page.locator('ul.codes button', { hasText: '482913' }).waitFor();
            expect(await page.locator('ul.links a').allTextContents()).to.equal(['Confirm my account', 'https://example.test/confirm?t=1']);
            expect(await page.locator('ul.links a').first().getAttribute('rel')).to.equal('noopener noreferrer');
            await context!.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
            await page.click('ul.codes button');
            await page.locator('#toast', { hasText: 'Copied 482913' }).waitFor();
            expect(await page.evaluate('navigator.clipboard.readText()')).to.equal('482913');
        });

        it('shows the sender\'s name and the tags', async () => {
            const [email] = await deliver('named-inbox', { from: 'Shop Team <shop@test.example>', subject: 'Tagged', headers: ['X-Tags: orders'] });
            const page = await open(`#/inbox/named-inbox/email/${encodeURIComponent(email.messageId)}/text`);
            await page.locator('#email-subject', { hasText: 'Tagged' }).waitFor();
            expect(await page.locator('#email-from').textContent()).to.equal('Shop Team <shop@test.example>');
            expect(await page.locator('#email-tags .tag').allTextContents()).to.equal(['orders']);
        });

        it('shows inline cid: images through their signed attachment links, inside the sandbox, remote images still blocked', async () => {
            const recorder = await startRequestRecorder();
            try {
                const [email] = await deliver('cid-inbox', {
                    subject: 'With a logo',
                    html: `<p>Logo: <img id="logo" src="cid:logo@test.example"> <img id="remote" src="${recorder.origin}/pixel.gif"> <img id="unknown" src="cid:nope@test.example"></p>`,
                    attachments: [{ filename: 'logo.gif', contentType: 'image/gif', content: GIF, contentId: 'logo@test.example' }]
                });
                expect(email.attachments[0].contentId).to.equal('logo@test.example');
                const page = await open(`#/inbox/cid-inbox/email/${encodeURIComponent(email.messageId)}/html`);
                const frame = page.frameLocator('iframe.mail-frame').frameLocator('#mail');
                const logo = frame.locator('#logo');
                await logo.waitFor({ state: 'attached' });
                const loaded = await logo.evaluate((img) => {
                    const image = img as unknown as { complete: boolean; naturalWidth: number; src: string; addEventListener(e: string, f: () => void): void };
                    return image.complete && image.naturalWidth > 0 ? image.src : new Promise<string>((resolve) => image.addEventListener('load', () => resolve(image.src)));
                });
                expect(loaded).to.startWith(`${baseUrl}/v1/blobs/`);
                expect(loaded).to.contain('sig=');
                expect(await frame.locator('#unknown').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).to.equal(0);
                expect(recorder.paths).to.equal([]);
                expect(await page.locator('iframe.mail-frame').getAttribute('sandbox')).to.equal('allow-same-origin');
                expect(await page.frameLocator('iframe.mail-frame').locator('#mail').getAttribute('sandbox')).to.equal('');
            }
            finally {
                await recorder.close();
            }
        });

        it('renders a styled mail without a single policy violation in the console, its styles applied', async () => {
            const [email] = await deliver('styled-inbox', {
                subject: 'Styled',
                html: '<html><head><style>p.lead { color: rgb(200, 0, 0) }</style></head><body style="margin:8px">'
                    + '<table style="width:100%" bgcolor="#eeeeee"><tr><td style="padding:4px"><p class="lead" id="lead" style="font-weight:700">Hello</p>'
                    + '<span style="color:blue">one</span> <span style="color:green">two</span> <img id="dot" alt="" src="data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="></td></tr></table></body></html>'
            });
            context = await contextWithKey(browser, p.apiKey);
            const page = await context.newPage();
            const messages: string[] = [];
            page.on('console', (message) => messages.push(`${message.type()}: ${message.text()}`));
            await openUi(page, baseUrl, `#/inbox/styled-inbox/email/${encodeURIComponent(email.messageId)}/html`);
            const lead = page.frameLocator('iframe.mail-frame').frameLocator('#mail').locator('#lead');
            await lead.waitFor();
            const style = await lead.evaluate((node) => {
                const computed = (globalThis as unknown as { getComputedStyle(n: unknown): { color: string; fontWeight: string } }).getComputedStyle(node);
                return { color: computed.color, weight: computed.fontWeight };
            });
            expect(style).to.equal({ color: 'rgb(200, 0, 0)', weight: '700' });
            // Messages come asynchronously: a load of the same page settles them first.
            await page.locator('#tab-text').click();
            await page.locator('pre.text-body, #panel-text p').first().waitFor();
            expect(messages).to.equal([]);
            // No remote content here: nothing to say is blocked.
            await page.locator('#tab-html').click();
            await lead.waitFor();
            expect(await page.locator('#remote-notice').isHidden()).to.be.true();
            expect(messages).to.equal([]);
        });

        it('says remote content is blocked only for mail that has some: an image, or a CSS url()', async () => {
            const recorder = await startRequestRecorder();
            try {
                const mails = [
                    { subject: 'plain', html: '<p id="body">no remote content, <a href="https://example.test/">a link</a>, <img src="cid:nothing@test.example"></p>', blocked: false },
                    { subject: 'image', html: `<p id="body"><img src="${recorder.origin}/pixel.gif"></p>`, blocked: true },
                    { subject: 'css', html: `<p id="body" style="background: url('${recorder.origin}/bg.gif')">styled</p>`, blocked: true }
                ];
                for (const mail of mails) {
                    const [email] = await deliver('remote-notice', { subject: mail.subject, html: mail.html });
                    const page = await open(`#/inbox/remote-notice/email/${encodeURIComponent(email.messageId)}/html`);
                    await page.frameLocator('iframe.mail-frame').frameLocator('#mail').locator('#body').waitFor();
                    expect(await page.locator('#remote-notice').isVisible(), mail.subject).to.equal(mail.blocked);
                    await context!.close();
                    context = undefined;
                }

                expect(recorder.paths).to.equal([]);
            }
            finally {
                await recorder.close();
            }
        });

        it('takes the hosts out of template contents too (a declarative shadow root renders them)', async () => {
            const [email] = await deliver('template-inbox', { subject: 'template', html: '<p id="body">x</p><div><template shadowrootmode="open"><iframe src="http://shadow.tracker.test/"></iframe><img src="http://shadow.tracker.test/i.png"></template></div>' });
            const page = await open(`#/inbox/template-inbox/email/${encodeURIComponent(email.messageId)}/html`);
            await page.frameLocator('iframe.mail-frame').frameLocator('#mail').locator('#body').waitFor();
            const srcdoc = await page.frameLocator('iframe.mail-frame').locator('#mail').getAttribute('srcdoc');
            expect(srcdoc).to.contain('<template shadowrootmode="open">');
            expect(srcdoc).to.not.contain('tracker.test');
        });

        it('downloads attachments and the raw message, byte for byte', async () => {
            const raw = buildMail({ to: 'dl-inbox@test.example', subject: 'with file', attachments: [{ filename: 'data.bin', contentType: 'application/octet-stream', content: ATTACHMENT }] });
            const [email] = await p.api.ingestForApi(raw, { recipients: ['dl-inbox@test.example'] });
            const page = await open(`#/inbox/dl-inbox/email/${encodeURIComponent(email.messageId)}/attachments`);
            const button = page.getByRole('button', { name: `Download ${email.attachments[0].filename}` });
            const [attachment] = await Promise.all([page.waitForEvent('download'), button.click()]);
            expect(await Fs.readFile(await attachment.path())).to.equal(ATTACHMENT);
            expect(attachment.suggestedFilename()).to.equal(email.attachments[0].filename);

            const [eml] = await Promise.all([page.waitForEvent('download'), page.click('#download-raw')]);
            expect((await Fs.readFile(await eml.path())).toString('utf8')).to.equal(raw);
            expect(eml.suggestedFilename()).to.endWith('.eml');
        });
    });

    describe('deletes', () => {

        it('deletes one email from the list with the Delete key, after a confirmation', async () => {
            const [keep] = await deliver('del-one', { subject: 'keep me' });
            const [gone] = await deliver('del-one', { subject: 'delete me' });
            const page = await open('#/inbox/del-one');
            await rows(page).nth(1).waitFor();
            await focusRow(page, gone.messageId);

            await page.keyboard.press('Delete');
            await page.locator('#confirm-dialog').waitFor();
            expect(await page.locator('#confirm-text').textContent()).to.contain('"delete me"');
            await page.click('#confirm-cancel');
            // Closed first: while the modal dialog is open, the list is inert and takes no focus.
            await page.locator('#confirm-dialog').waitFor({ state: 'hidden' });
            expect(await p.api.capture.getEmail(gone.messageId)).to.not.be.null();

            await focusRow(page, gone.messageId);
            await page.keyboard.press('Delete');
            await page.locator('#confirm-dialog').waitFor();
            await page.click('#confirm-ok');
            await waitForCount(page, '#email-list a.item', 1);
            expect(await p.api.capture.getEmail(gone.messageId)).to.be.null();
            expect(await p.api.capture.getEmail(keep.messageId)).to.not.be.null();
        });

        it('keeps the keyboard on the list when a burst of new mail loads it again, so Delete still asks', { timeout: 60_000 }, async () => {
            const [first] = await deliver('burst-focus', { subject: 'before the burst' });
            context = await contextWithKey(browser, p.apiKey);
            const page = await context.newPage();
            // The first live poll is held back while more than a page of new mail (100)
            // arrives, so that its answer is a burst, which loads the list again from the newest.
            let waiting = () => {};
            let release = () => {};
            const holding = new Promise<void>((resolve) => (waiting = resolve));
            const released = new Promise<void>((resolve) => (release = resolve));
            let firstPoll = true;
            await page.route((url) => url.pathname.endsWith('/v1/emails') && url.searchParams.get('wait') === 'true', async (route) => {
                if (firstPoll) {
                    firstPoll = false;
                    waiting();
                    await released;
                }

                await route.continue();
            });
            await openUi(page, baseUrl, '#/inbox/burst-focus');
            await rows(page).first().waitFor();
            await holding;
            await focusRow(page, first.messageId);
            for (let i = 0; i < 101; i++) {
                await deliver('burst-focus', { subject: `burst ${String(i).padStart(3, '0')}` });
            }

            release();
            await page.locator('#email-list a.item .subject', { hasText: 'burst 100' }).waitFor();
            expect(await page.evaluate('document.activeElement.matches("#email-list a.item") && document.activeElement.querySelector(".subject").textContent')).to.equal('burst 100');
            await page.keyboard.press('Delete');
            await page.locator('#confirm-dialog').waitFor();
            expect(await page.locator('#confirm-text').textContent()).to.contain('"burst 100"');
            await page.click('#confirm-cancel');
        });

        it('deletes the open email with its button', async () => {
            const [email] = await deliver('del-open', { subject: 'open and delete' });
            const page = await open(`#/inbox/del-open/email/${encodeURIComponent(email.messageId)}`);
            await page.locator('#email-subject', { hasText: 'open and delete' }).waitFor();
            await page.click('#delete-email');
            await page.click('#confirm-ok');
            await waitForHash(page, '#/inbox/del-open');
            expect(await p.api.capture.getEmail(email.messageId)).to.be.null();
        });

        it('says so when a read-only key may not delete, and the email stays', async () => {
            const [email] = await deliver('del-readonly', { subject: 'read only' });
            context = await contextWithKey(browser, await p.api.capture.createKey('viewer', { readOnly: true }));
            const page = await context.newPage();
            await openUi(page, baseUrl, `#/inbox/del-readonly/email/${encodeURIComponent(email.messageId)}`);
            await page.locator('#email-subject', { hasText: 'read only' }).waitFor();
            await page.click('#delete-email');
            await page.click('#confirm-ok');
            await page.locator('#toast', { hasText: 'This key may not do that: it is read-only' }).waitFor();
            expect(await p.api.capture.getEmail(email.messageId)).to.not.be.null();
        });

        it('deletes the inbox after a confirmation', async () => {
            await deliver('del-inbox', { subject: 'a' });
            await deliver('del-inbox', { subject: 'b' });
            const page = await open('#/inbox/del-inbox');
            await rows(page).nth(1).waitFor();
            await page.click('#delete-inbox');
            expect(await page.locator('#confirm-text').textContent()).to.contain('del-inbox');
            await page.click('#confirm-ok');
            await waitForHash(page, '#/');
            expect((await p.api.capture.listEmails({ inbox: 'del-inbox', limit: 10 })).records).to.equal([]);
            await page.locator('#inbox-list .name', { hasText: /^del-inbox$/ }).waitFor({ state: 'detached' });
        });
    });

    describe('layout and accessibility', () => {

        const visiblePanes = (page: Page) => page.evaluate("Array.from(document.querySelectorAll('.pane')).filter((pane) => pane.offsetParent !== null).map((pane) => pane.id)");

        it('has a favicon the page names and the server serves', async () => {
            const page = await open('#/');
            const href = await page.locator('link[rel="icon"]').evaluate((link) => (link as unknown as { href: string }).href);
            expect(href).to.equal(`${baseUrl}/ui/favicon.svg`);
            const res = await page.request.get(href);
            expect(res.status()).to.equal(200);
            expect(res.headers()['content-type']).to.equal('image/svg+xml');
            expect((await res.text()).startsWith('<svg')).to.be.true();
        });

        it('shows three panes on a wide screen', async () => {
            const [email] = await deliver('wide-inbox');
            const page = await open(`#/inbox/wide-inbox/email/${encodeURIComponent(email.messageId)}`, { viewport: { width: 1280, height: 800 } });
            await page.locator('#email-body:not([hidden])').waitFor();
            expect(await visiblePanes(page)).to.equal(['pane-inboxes', 'pane-emails', 'pane-email']);
        });

        it('shows one pane at a time at 375 px, without horizontal scrolling', async () => {
            const [email] = await deliver('narrow-inbox', { subject: 'a rather long subject line that would not fit on a phone screen at all, not even close' });
            const page = await open('#/', { viewport: { width: 375, height: 740 } });
            const noScroll = () => page.evaluate('document.documentElement.scrollWidth <= window.innerWidth');
            await page.locator('#inbox-list a.item').first().waitFor();
            expect(await visiblePanes(page)).to.equal(['pane-inboxes']);
            expect(await noScroll()).to.be.true();

            await page.locator('#inbox-list a.item', { hasText: 'narrow-inbox' }).click();
            await rows(page).first().waitFor();
            expect(await visiblePanes(page)).to.equal(['pane-emails']);
            expect(await noScroll()).to.be.true();

            await rows(page).first().click();
            await page.locator('#email-body:not([hidden])').waitFor();
            expect(await visiblePanes(page)).to.equal(['pane-email']);
            expect(page.url()).to.contain(encodeURIComponent(email.messageId));
            expect(await noScroll()).to.be.true();

            await page.click('#email-back');
            await rows(page).first().waitFor();
            expect(await visiblePanes(page)).to.equal(['pane-emails']);
        });

        it('has no serious or critical axe-core violations', async () => {
            const [email] = await deliver('axe-inbox', { subject: 'check me', html: '<p>Hello</p>', attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'a' }] });
            const axe = await Fs.readFile(AXE, 'utf8');
            const run = async (page: Page) => {
                // Evaluated over the DevTools protocol, not as a page script, so the page's CSP stays as it is.
                await page.evaluate(axe);
                const violations = await page.evaluate('axe.run().then((result) => result.violations.map((v) => `${v.impact}: ${v.id}`))') as string[];
                return violations.filter((v) => /^(serious|critical)/.test(v));
            };

            const wide = await open(`#/inbox/axe-inbox/email/${encodeURIComponent(email.messageId)}/links`, { viewport: { width: 1280, height: 800 } });
            await wide.locator('#email-body:not([hidden])').waitFor();
            await rows(wide).first().waitFor();
            expect(await run(wide)).to.equal([]);

            await context!.close();
            const narrow = await open('#/inbox/axe-inbox', { viewport: { width: 375, height: 740 } });
            await rows(narrow).first().waitFor();
            expect(await run(narrow)).to.equal([]);

            await context!.close();
            context = await browser.newContext();
            const keyPage = await context.newPage();
            await keyPage.goto(`${baseUrl}/ui/`);
            await keyPage.locator('#key-dialog').waitFor();
            expect(await run(keyPage)).to.equal([]);
        });
    });
});
