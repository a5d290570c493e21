import * as Code from '@hapi/code';
import { attachmentDisposition } from '../../../../lib/blob-store/content-disposition';
import { buildMail } from '../../../helpers/mail';
import { followDownload, linkTerms, type Download } from '../../../helpers/downloads';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import type { StoreFactory } from '../../../helpers/test-stores';
import { AWKWARD_IDS } from './awkward-ids';
import type { SuiteLab } from './lab-types';

const { expect } = Code;

/** Download links live 15 minutes (docs/design.md, "Deletes and downloads"). */
const LINK_LIFETIME_SECONDS = 900;

/** What a download link must promise for one blob. */
interface ExpectedLink {
    contentType: string;
    filename: string;
    /** Unix seconds just before and just after the link was asked for. */
    issuedFrom: number;
    issuedTo: number;
}

/**
 * Checks a link's own terms for the factory's blob store: a signed path the plugin
 * serves (fs), or a presigned S3 GetObject URL whose query sets the lifetime, the
 * media type and an attachment disposition (s3).
 */
function expectLinkTerms(factory: StoreFactory, location: string, expected: ExpectedLink): void {
    const terms = linkTerms(location);
    expect(terms.expiresAt, location).to.be.within(expected.issuedFrom + LINK_LIFETIME_SECONDS, expected.issuedTo + LINK_LIFETIME_SECONDS);
    expect(terms.contentType).to.equal(expected.contentType);
    if (factory.blobs === 's3') {
        expect(terms.kind, location).to.equal('presigned');
        expect(terms.lifetimeSeconds).to.equal(LINK_LIFETIME_SECONDS);
        expect(terms.disposition ?? '').to.startWith('attachment');
        expect(terms.disposition).to.equal(attachmentDisposition(expected.filename));
    }
    else {
        expect(terms.kind, location).to.equal('server');
        expect(terms.filename).to.equal(expected.filename);
    }
}

/** Downloads (docs/design.md, "Deletes and downloads"): 302 to a time-limited link that serves the exact bytes as an attachment. */
export function downloadsSuite(lab: SuiteLab, factory: StoreFactory): void {
    const { describe, it, before, after } = lab;

    describe('downloads', () => {
        let p: ProvisionedServer;
        const pdf = Buffer.from('%PDF-1.4\n\u0000\u00ff binary \r\n bytes', 'latin1');
        const html = '<script>alert(1)</script>';
        let raw: string;

        before(async () => {
            p = await provisionServer({ stores: factory });
            raw = buildMail({
                messageId: 'dl@x',
                subject: 'downloads',
                attachments: [
                    { filename: 'report.pdf', contentType: 'application/pdf', content: pdf },
                    { filename: 'page.html', contentType: 'text/html', content: html }
                ]
            });
            await p.api.ingestForApi(raw, { recipients: ['dl@x'] });
        });

        after(() => p.cleanup());

        // Every download goes through here: the 302, the link's own terms, then the bytes behind it.
        const download = async (url: string, expected: { contentType: string; filename: string }): Promise<Download> => {
            const issuedFrom = Math.floor(Date.now() / 1000);
            const res = await p.server.inject({ url, headers: p.auth });
            const issuedTo = Math.ceil(Date.now() / 1000);
            expect(res.statusCode, url).to.equal(302);
            expect(res.headers['cache-control']).to.equal('no-store');
            expect(res.payload).to.equal('');
            const location = res.headers.location as string;
            expectLinkTerms(factory, location, { ...expected, issuedFrom, issuedTo });
            const followed = await followDownload(p.server, location);
            expect(followed.statusCode, location).to.equal(200);
            return followed;
        };

        const RAW = { contentType: 'message/rfc822', filename: 'message.eml' };

        describe('GET /v1/emails/{messageId}/raw', () => {
            it('answers 302 with Cache-Control: no-store and an empty body', async () => {
                const res = await p.server.inject({ url: '/v1/emails/dl%40x/raw', headers: p.auth });
                expect(res.statusCode).to.equal(302);
                expect(res.headers['cache-control']).to.equal('no-store');
                expect(res.headers.location).to.be.a.string();
                expect(res.payload).to.equal('');
            });

            it('redirects to the exact bytes received, as message/rfc822 attachment, without an API key', async () => {
                const downloaded = await download('/v1/emails/dl%40x/raw', RAW);
                expect(downloaded.body.equals(Buffer.from(raw, 'utf8'))).to.be.true();
                expect(downloaded.headers['content-type']).to.equal('message/rfc822');
                expect(downloaded.headers['content-disposition']).to.startWith('attachment');
            });

            it(`links for ${LINK_LIFETIME_SECONDS} s to message.eml as message/rfc822, ${factory.blobs === 's3' ? 'presigned by S3' : 'signed and served by the plugin'}`, async () => {
                // The terms themselves are checked inside download(); this names the rule.
                await download('/v1/emails/dl%40x/raw', RAW);
            });

            it('answers 404 NOT_FOUND for an unknown email', async () => {
                const res = await p.server.inject({ url: '/v1/emails/nope%40x/raw', headers: p.auth });
                expect(res.statusCode).to.equal(404);
                expect(res.result).to.equal({ error: 'NOT_FOUND' });
            });
        });

        describe('GET /v1/emails/{messageId}/attachments/{filename}', () => {
            it('answers 302 with Cache-Control: no-store to the exact bytes with the stored media type', async () => {
                const downloaded = await download('/v1/emails/dl%40x/attachments/0-report.pdf', { contentType: 'application/pdf', filename: '0-report.pdf' });
                expect(downloaded.body.equals(pdf)).to.be.true();
                expect(downloaded.headers['content-type']).to.equal('application/pdf');
                expect(downloaded.headers['content-disposition']).to.startWith('attachment');
                expect(downloaded.headers['content-disposition']).to.include('0-report.pdf');
            });

            it('serves an HTML attachment as an attachment, never inline', async () => {
                const downloaded = await download('/v1/emails/dl%40x/attachments/1-page.html', { contentType: 'text/html', filename: '1-page.html' });
                expect(downloaded.body.toString()).to.equal(html);
                expect(downloaded.headers['content-disposition']).to.startWith('attachment');
                expect(downloaded.headers['content-type']).to.startWith('text/html');
            });

            it('follows the url given in the email object', async () => {
                const one = await p.server.inject({ url: '/v1/emails/dl%40x', headers: p.auth });
                const url = (one.result as { attachments: Array<{ url: string }> }).attachments[0].url;
                const res = await p.server.inject({ url, headers: p.auth });
                expect(res.statusCode).to.equal(302);
            });

            it('answers 404 NOT_FOUND for an unknown attachment, the name without its index, or an unknown email', async () => {
                for (const url of ['/v1/emails/dl%40x/attachments/2-none.txt', '/v1/emails/dl%40x/attachments/report.pdf', '/v1/emails/nope%40x/attachments/0-report.pdf']) {
                    const res = await p.server.inject({ url, headers: p.auth });
                    expect(res.statusCode, url).to.equal(404);
                    expect(res.result).to.equal({ error: 'NOT_FOUND' });
                }
            });

            it('answers 404 NOT_FOUND once the email is deleted', async () => {
                await p.api.ingestForApi(buildMail({ messageId: 'gone@x', attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'a' }] }), { recipients: ['dl@x'] });
                await p.server.inject({ method: 'DELETE', url: '/v1/emails/gone%40x', headers: p.auth });
                for (const url of ['/v1/emails/gone%40x/raw', '/v1/emails/gone%40x/attachments/0-a.txt']) {
                    expect((await p.server.inject({ url, headers: p.auth })).statusCode).to.equal(404);
                }
            });

            it('finds attachments whose names need encoding', async () => {
                const name = 'résumé & notes #1.txt';
                const [view] = await p.api.ingestForApi(buildMail({ attachments: [{ filename: name, contentType: 'text/plain', content: 'cv' }] }), { recipients: ['dl@x'] });
                const downloaded = await download(view.attachments[0].url, { contentType: 'text/plain', filename: view.attachments[0].filename });
                expect(downloaded.body.toString()).to.equal('cv');
            });
        });

        describe('awkward Message-IDs', () => {
            for (const id of AWKWARD_IDS) {
                it(`downloads the raw message and attachment of ${JSON.stringify(id)}`, async () => {
                    const message = buildMail({ messageId: id, attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: id }] });
                    const [view] = await p.api.ingestForApi(message, { recipients: ['dl-awkward@x'] });
                    expect((await download(view.rawUrl, RAW)).body.toString()).to.equal(message);
                    expect((await download(view.attachments[0].url, { contentType: 'text/plain', filename: '0-a.txt' })).body.toString()).to.equal(id);
                });
            }
        });
    });
}
