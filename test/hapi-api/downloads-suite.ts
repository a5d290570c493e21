import * as Code from '@hapi/code';
import { buildMail } from '../helpers/mail';
import { followDownload, provisionServer, type ProvisionedServer, type StoreFactory } from '../helpers/provision-server';
import { AWKWARD_IDS } from './awkward-ids';
import type { SuiteLab } from './lab-types';

const { expect } = Code;

/** Spec §4.6–§4.7 and DECISIONS: 302 to a time-limited link that serves the exact bytes as an attachment. */
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
            await p.api.ingestRawEmail(raw, { recipients: ['dl@x'] });
        });

        after(() => p.cleanup());

        describe('GET /v1/emails/{messageId}/raw', () => {
            it('answers 302 with Cache-Control: no-store and an empty body', async () => {
                const res = await p.server.inject({ url: '/v1/emails/dl%40x/raw', headers: p.auth });
                expect(res.statusCode).to.equal(302);
                expect(res.headers['cache-control']).to.equal('no-store');
                expect(res.headers.location).to.be.a.string();
                expect(res.payload).to.equal('');
            });

            it('redirects to the exact bytes received, as message/rfc822 attachment, without an API key', async () => {
                const res = await p.server.inject({ url: '/v1/emails/dl%40x/raw', headers: p.auth });
                const download = await followDownload(p.server, res.headers.location as string);
                expect(download.statusCode).to.equal(200);
                expect(download.body.equals(Buffer.from(raw, 'utf8'))).to.be.true();
                expect(download.headers['content-type']).to.equal('message/rfc822');
                expect(download.headers['content-disposition']).to.startWith('attachment');
            });

            it('answers 404 NOT_FOUND for an unknown email', async () => {
                const res = await p.server.inject({ url: '/v1/emails/nope%40x/raw', headers: p.auth });
                expect(res.statusCode).to.equal(404);
                expect(res.result).to.equal({ error: 'NOT_FOUND' });
            });
        });

        describe('GET /v1/emails/{messageId}/attachments/{filename}', () => {
            it('answers 302 with Cache-Control: no-store to the exact bytes with the stored media type', async () => {
                const res = await p.server.inject({ url: '/v1/emails/dl%40x/attachments/0-report.pdf', headers: p.auth });
                expect(res.statusCode).to.equal(302);
                expect(res.headers['cache-control']).to.equal('no-store');
                const download = await followDownload(p.server, res.headers.location as string);
                expect(download.statusCode).to.equal(200);
                expect(download.body.equals(pdf)).to.be.true();
                expect(download.headers['content-type']).to.equal('application/pdf');
                expect(download.headers['content-disposition']).to.startWith('attachment');
                expect(download.headers['content-disposition']).to.include('0-report.pdf');
            });

            it('serves an HTML attachment as an attachment, never inline', async () => {
                const res = await p.server.inject({ url: '/v1/emails/dl%40x/attachments/1-page.html', headers: p.auth });
                const download = await followDownload(p.server, res.headers.location as string);
                expect(download.body.toString()).to.equal(html);
                expect(download.headers['content-disposition']).to.startWith('attachment');
                expect(download.headers['content-type']).to.startWith('text/html');
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
                await p.api.ingestRawEmail(buildMail({ messageId: 'gone@x', attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'a' }] }), { recipients: ['dl@x'] });
                await p.server.inject({ method: 'DELETE', url: '/v1/emails/gone%40x', headers: p.auth });
                for (const url of ['/v1/emails/gone%40x/raw', '/v1/emails/gone%40x/attachments/0-a.txt']) {
                    expect((await p.server.inject({ url, headers: p.auth })).statusCode).to.equal(404);
                }
            });

            it('finds attachments whose names need encoding', async () => {
                const name = 'résumé & notes #1.txt';
                const [view] = await p.api.ingestRawEmail(buildMail({ attachments: [{ filename: name, contentType: 'text/plain', content: 'cv' }] }), { recipients: ['dl@x'] });
                const res = await p.server.inject({ url: view.attachments[0].url, headers: p.auth });
                expect(res.statusCode).to.equal(302);
                const download = await followDownload(p.server, res.headers.location as string);
                expect(download.body.toString()).to.equal('cv');
            });
        });

        describe('awkward Message-IDs', () => {
            for (const id of AWKWARD_IDS) {
                it(`downloads the raw message and attachment of ${JSON.stringify(id)}`, async () => {
                    const message = buildMail({ messageId: id, attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: id }] });
                    const [view] = await p.api.ingestRawEmail(message, { recipients: ['dl-awkward@x'] });
                    const rawRes = await p.server.inject({ url: view.rawUrl, headers: p.auth });
                    expect(rawRes.statusCode).to.equal(302);
                    expect((await followDownload(p.server, rawRes.headers.location as string)).body.toString()).to.equal(message);
                    const attRes = await p.server.inject({ url: view.attachments[0].url, headers: p.auth });
                    expect(attRes.statusCode).to.equal(302);
                    expect((await followDownload(p.server, attRes.headers.location as string)).body.toString()).to.equal(id);
                });
            }
        });
    });
}
