import * as Fs from 'node:fs';
import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { ERROR_DETAIL_HEADER } from '../../../../adapters/error-detail/detail-line';
import type { HtmlCheckView, HtmlFindingView } from '../../../../adapters/hapi/api-types';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import { postgresFsStores, sqliteFsStores, type StoreFactory } from '../../../helpers/test-stores';

// GET /v1/emails/{messageId}/checks/html (docs/api.md, "Checks") on both record stores.

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const NEWSLETTER = Fs.readFileSync(Path.join(__dirname, '..', '..', '..', 'fixtures', 'html', 'newsletter.html'), 'utf8');

const DEFAULT_CLIENTS = [
    'apple-mail.ios', 'apple-mail.macos',
    'gmail.android', 'gmail.desktop-webmail', 'gmail.ios', 'gmail.mobile-webmail',
    'outlook.android', 'outlook.ios', 'outlook.macos', 'outlook.outlook-com', 'outlook.windows', 'outlook.windows-mail',
    'samsung-email.android',
    'yahoo.android', 'yahoo.desktop-webmail', 'yahoo.ios'
];

/** A message with `html` as its HTML part (and a text part), or text only when `html` is undefined. */
function message(id: string, html?: string): string {
    const head = `From: News <news@example.test>\r\nTo: reader@example.test\r\nSubject: The Weekly Brew\r\nMessage-ID: <${id}>\r\nMIME-Version: 1.0\r\n`;
    if (html === undefined) {
        return `${head}Content-Type: text/plain; charset=utf-8\r\n\r\nNo HTML here.\r\n`;
    }

    return `${head}Content-Type: multipart/alternative; boundary="b1"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe text part.\r\n` +
        `--b1\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${html.replace(/\r?\n/g, '\r\n')}\r\n--b1--\r\n`;
}

function finding(result: HtmlCheckView, title: string): HtmlFindingView {
    const found = result.findings.find((f) => f.title === title);
    expect(found, title).to.exist();
    return found!;
}

function htmlCheckSuite(factory: StoreFactory): void {
    describe(`GET /v1/emails/{messageId}/checks/html (${factory.name})`, () => {
        let p: ProvisionedServer;
        let release: (() => Promise<void>) | undefined;

        const check = async (messageId: string, query = '', headers: Record<string, string> = p.auth) => p.server.inject({ url: `/v1/emails/${encodeURIComponent(messageId)}/checks/html${query}`, headers });

        const stored = async (id: string, html?: string, recipient = 'reader@example.test') => {
            const [view] = await p.api.ingestForApi(message(id, html), { recipients: [recipient] });
            return view!.messageId;
        };

        before(async () => {
            release = await factory.hold?.();
            p = await provisionServer({ stores: factory });
        });

        after(async () => {
            await p?.cleanup();
            await release?.();
        });

        it('finds the newsletter\'s features with the clients that lack them and how often they occur', async () => {
            const messageId = await stored('newsletter@example.test', NEWSLETTER);
            const res = await check(messageId);
            expect(res.statusCode).to.equal(200);
            const result = res.result as HtmlCheckView;
            expect(result.clients).to.equal(DEFAULT_CLIENTS);
            expect(result.data.source).to.equal('caniemail');
            expect(result.data.updated).to.match(/^\d{4}-\d\d-\d\dT/);
            expect(result.html).to.not.exist();
            expect(result.score).to.equal(84);

            expect(finding(result, '<video> element')).to.equal({
                title: '<video> element', slug: 'html-video', url: 'https://www.caniemail.com/features/html-video/', category: 'html',
                unsupported: ['gmail.android', 'gmail.desktop-webmail', 'gmail.ios', 'gmail.mobile-webmail', 'outlook.android', 'outlook.ios', 'outlook.outlook-com', 'outlook.windows', 'outlook.windows-mail', 'yahoo.android', 'yahoo.desktop-webmail', 'yahoo.ios'],
                partial: ['apple-mail.ios', 'samsung-email.android'],
                count: 1
            });
            const flex = finding(result, 'display:flex');
            expect(flex.category).to.equal('css');
            expect(flex.unsupported).to.equal(['outlook.windows', 'outlook.windows-mail']);
            expect(flex.partial).to.equal(['gmail.android', 'gmail.ios']);
            expect(flex.count).to.equal(1);
            expect(finding(result, 'background-image').unsupported).to.include(['outlook.windows']);
            expect(finding(result, '@media').unsupported).to.equal(['gmail.mobile-webmail', 'outlook.windows', 'outlook.windows-mail']);
            // Five class selectors in the <style> block, and padding in three style attributes and one rule.
            expect(finding(result, 'Class selector').count).to.equal(5);
            expect(finding(result, 'padding').count).to.equal(4);
            // The worst first: most clients without support.
            expect(result.findings[0]!.title).to.equal('<video> element');
            const unsupported = result.findings.map((f) => f.unsupported.length);
            expect(unsupported).to.equal([...unsupported].sort((a, b) => b - a));
            // Only features some client lacks or half-supports are findings.
            expect(result.findings.every((f) => f.unsupported.length + f.partial.length > 0)).to.be.true();
        });

        it('scores the share of (feature, client) pairs supported, a partial one counting half, supported features counted too', async () => {
            const video = await stored('video@example.test', '<video src="https://x.test/a.mp4"></video>');
            const scores: Record<string, number> = {};
            for (const clients of ['outlook.windows', 'apple-mail.ios', 'apple-mail.macos', 'outlook.windows,apple-mail.ios']) {
                const res = await check(video, `?clients=${clients}`);
                expect(res.statusCode, clients).to.equal(200);
                scores[clients] = (res.result as HtmlCheckView).score;
            }

            expect(scores).to.equal({ 'outlook.windows': 0, 'apple-mail.ios': 50, 'apple-mail.macos': 100, 'outlook.windows,apple-mail.ios': 25 });
            // <table> (supported everywhere) beside <video>: half the pairs are supported.
            const mixed = await stored('video-table@example.test', '<video src="https://x.test/a.mp4"></video><table><tr><td>x</td></tr></table>');
            const res = await check(mixed, '?clients=outlook.windows');
            expect((res.result as HtmlCheckView).score).to.equal(50);
            expect((res.result as HtmlCheckView).findings.map((f) => f.title)).to.equal(['<video> element']);
        });

        it('counts every occurrence of a feature', async () => {
            const messageId = await stored('three-videos@example.test', '<video></video><p>a</p><video></video><video></video>');
            const res = await check(messageId, '?clients=gmail.*');
            expect(finding(res.result as HtmlCheckView, '<video> element').count).to.equal(3);
        });

        it('narrows the clients with caniemail globs', async () => {
            const messageId = await stored('narrow@example.test', NEWSLETTER);
            const outlook = (await check(messageId, '?clients=outlook.*')).result as HtmlCheckView;
            expect(outlook.clients).to.equal(['outlook.android', 'outlook.ios', 'outlook.macos', 'outlook.outlook-com', 'outlook.windows', 'outlook.windows-mail']);
            expect(outlook.findings.every((f) => [...f.unsupported, ...f.partial].every((c) => c.startsWith('outlook.')))).to.be.true();
            expect(finding(outlook, 'display:flex').unsupported).to.equal(['outlook.windows', 'outlook.windows-mail']);

            const two = (await check(messageId, '?clients=*.ios,gmail.android')).result as HtmlCheckView;
            expect(two.clients).to.equal(['aol.ios', 'apple-mail.ios', 'gmail.android', 'gmail.ios', 'gmx.ios', 'laposte.ios', 'orange.ios', 'outlook.ios', 'protonmail.ios', 'sfr.ios', 'web-de.ios', 'yahoo.ios']);
        });

        it('answers an email without HTML with score 100, no findings and html false', async () => {
            const messageId = await stored('plain@example.test');
            const res = await check(messageId);
            expect(res.statusCode).to.equal(200);
            expect(res.result).to.include({ score: 100, findings: [], html: false });
        });

        it('refuses clients that are not globs, or match no client, with VALIDATION_ERROR and a detail', async () => {
            const messageId = await stored('refused@example.test', NEWSLETTER);
            for (const [query, detail] of [
                ['?clients=Outlook!', /^clients: with value "Outlook!" fails to match the comma-separated client globs/],
                ['?clients=', /^clients: /],
                ['?clients=nope.*', /^clients: "nope\.\*" matches no email client$/]
            ] as const) {
                const res = await check(messageId, query);
                expect(res.statusCode, query).to.equal(400);
                expect(res.result, query).to.equal({ error: 'VALIDATION_ERROR' });
                expect(res.headers[ERROR_DETAIL_HEADER.toLowerCase()], query).to.match(detail);
            }
        });

        it('answers 401 first, then 404 for an email the key may not see, as for reading the email', async () => {
            const mine = await stored('team-a@example.test', NEWSLETTER, 'team-a-news@example.test');
            const theirs = await stored('team-b@example.test', NEWSLETTER, 'team-b-news@example.test');
            for (const id of [mine, theirs, 'no-such@example.test']) {
                const res = await check(id, '', {});
                expect(res.statusCode, id).to.equal(401);
                expect(res.result, id).to.equal({ error: 'UNAUTHORIZED' });
                expect((await check(id, '?clients=Outlook!', {})).statusCode, id).to.equal(401);
            }

            const scoped = { authorization: `Bearer ${await p.api.capture.createKey('checks-team-a', { inboxPrefix: 'team-a-', readOnly: true })}` };
            expect((await check(mine, '', scoped)).statusCode).to.equal(200);
            for (const id of [theirs, 'no-such@example.test']) {
                const res = await check(id, '', scoped);
                expect(res.statusCode, id).to.equal(404);
                expect(res.result, id).to.equal({ error: 'NOT_FOUND' });
            }
        });
    });
}

htmlCheckSuite(sqliteFsStores());
htmlCheckSuite(postgresFsStores());
