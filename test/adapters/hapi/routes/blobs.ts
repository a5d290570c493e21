import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { BLOB_LINK_PATH, downloadLocation, servesOwnLinks } from '../../../../adapters/hapi/routes/blobs';
import type { BlobStore } from '../../../../lib/blob-store/blob-store';
import { createFsBlobStore } from '../../../../lib/blob-store/fs-blob-store';
import { createLinkSigner } from '../../../../lib/blob-store/signed-links';
import { openEmbeddedRecordStore } from '../../../../lib/service/embedded-stores';
import type { RecordStore } from '../../../../lib/record-store/record-store';
import { buildMail } from '../../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import { tempDir } from '../../../helpers/temp-dir';
import { TEST_SIGNING_SECRET } from '../../../helpers/test-stores';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('Hapi plugin GET /v1/blobs/{key} (filesystem download links)', () => {
    let p: ProvisionedServer;
    let dir: string;
    let recordStore: RecordStore;
    let clock = Date.now();
    let rawLink: string;
    let htmlLink: string;
    let notesUrl: string;
    const raw = buildMail({
        messageId: 'blob@x',
        attachments: [
            { filename: 'page.html', contentType: 'text/html', content: '<script>alert(document.cookie)</script>' },
            { filename: 'na\u00efve notes; 100%.txt', contentType: 'text/plain', content: 'caf\u00e9' }
        ]
    });

    before(async () => {
        dir = await tempDir('blobs');
        recordStore = await openEmbeddedRecordStore({ dataDir: dir });
        // A store whose clock the tests move, to expire links without waiting.
        const blobStore = createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: TEST_SIGNING_SECRET, now: () => clock });
        p = await provisionServer({ recordStore, blobStore });
        const [view] = await p.api.ingestForApi(raw, { recipients: ['blob@x'] });
        notesUrl = view.attachments[1].url;
        rawLink = (await p.server.inject({ url: '/v1/emails/blob%40x/raw', headers: p.auth })).headers.location as string;
        htmlLink = (await p.server.inject({ url: '/v1/emails/blob%40x/attachments/0-page.html', headers: p.auth })).headers.location as string;
    });

    after(async () => {
        await p.cleanup();
        await recordStore.close();
        await Fs.rm(dir, { recursive: true, force: true });
    });

    it('serves the raw message without an API key, with every protective header', async () => {
        const res = await p.server.inject(rawLink);
        expect(res.statusCode).to.equal(200);
        expect(res.rawPayload.equals(Buffer.from(raw))).to.be.true();
        expect(res.headers['content-type']).to.equal('message/rfc822');
        expect(res.headers['content-disposition']).to.equal('attachment; filename="message.eml"; filename*=UTF-8\'\'message.eml');
        expect(res.headers['x-content-type-options']).to.equal('nosniff');
        expect(res.headers['content-security-policy']).to.equal('default-src \'none\'; sandbox; frame-ancestors \'none\'');
        expect(res.headers['cache-control']).to.equal('private, no-store');
        expect(res.headers['content-length']).to.equal(Buffer.byteLength(raw));
    });

    it('serves an HTML attachment as a download with its stored media type, no charset added', async () => {
        const res = await p.server.inject(htmlLink);
        expect(res.statusCode).to.equal(200);
        expect(res.headers['content-type']).to.equal('text/html');
        expect(res.headers['content-disposition'] as string).to.startWith('attachment;');
        expect(res.headers['x-content-type-options']).to.equal('nosniff');
    });

    it('puts an awkward file name safely into Content-Disposition', async () => {
        const link = (await p.server.inject({ url: notesUrl, headers: p.auth })).headers.location as string;
        const res = await p.server.inject(link);
        expect(res.payload).to.equal('caf\u00e9');
        expect(res.headers['content-disposition']).to.equal('attachment; filename="1-na_ve notes; 100_.txt"; filename*=UTF-8\'\'1-na%C3%AFve%20notes%3B%20100%25.txt');
    });

    it('answers HEAD with the headers and no body', async () => {
        const res = await p.server.inject({ method: 'HEAD', url: rawLink });
        expect(res.statusCode).to.equal(200);
        expect(res.payload).to.equal('');
        expect(res.headers['content-disposition'] as string).to.startWith('attachment');
    });

    // Each tampering of a genuine link, one field at a time.
    const TAMPER: Array<[string, (url: URL) => void]> = [
        ['a changed signature', (url) => url.searchParams.set('sig', url.searchParams.get('sig')!.replace(/^./, (c) => (c === '0' ? '1' : '0')))],
        ['a signature cut short', (url) => url.searchParams.set('sig', url.searchParams.get('sig')!.slice(0, 63))],
        ['an uppercase signature', (url) => url.searchParams.set('sig', url.searchParams.get('sig')!.toUpperCase())],
        ['no signature', (url) => url.searchParams.delete('sig')],
        ['two signatures', (url) => url.searchParams.append('sig', url.searchParams.get('sig')!)],
        ['a later expiry', (url) => url.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600))],
        ['no expiry', (url) => url.searchParams.delete('expires')],
        ['another media type', (url) => url.searchParams.set('type', 'text/html')],
        ['another file name', (url) => url.searchParams.set('filename', 'evil.html')],
        ['another blob key', (url) => {
            url.pathname = url.pathname.replace(/raw\.eml$/, 'att%2F0').replace(/%2Fraw\.eml$/, '%2Fatt%2F0');
        }],
        ['a key leaving the blob root', (url) => {
            url.pathname = '/v1/blobs/..%2F..%2Fsigning-secret';
        }],
        ['no query at all', (url) => {
            url.search = '';
        }]
    ];

    for (const [name, tamper] of TAMPER) {
        it(`answers 403 FORBIDDEN for a link with ${name}`, async () => {
            const url = new URL(rawLink, 'http://x');
            tamper(url);
            expect(url.pathname + url.search).to.not.equal(rawLink);
            const res = await p.server.inject(url.pathname + url.search);
            expect(res.statusCode).to.equal(403);
            expect(res.result).to.equal({ error: 'FORBIDDEN' });
            expect(res.headers['x-content-type-options']).to.equal('nosniff');
        });
    }

    it('answers 403 FORBIDDEN once the link has expired', async () => {
        const link = (await p.server.inject({ url: '/v1/emails/blob%40x/raw', headers: p.auth })).headers.location as string;
        expect((await p.server.inject(link)).statusCode).to.equal(200);
        const saved = clock;
        clock += 901_000;
        try {
            const res = await p.server.inject(link);
            expect(res.statusCode).to.equal(403);
            expect(res.result).to.equal({ error: 'FORBIDDEN' });
        }
        finally {
            clock = saved;
        }
    });

    it('ignores an API key: the signature alone decides', async () => {
        const url = new URL(rawLink, 'http://x');
        url.searchParams.set('sig', '0'.repeat(64));
        const res = await p.server.inject({ url: url.pathname + url.search, headers: p.auth });
        expect(res.statusCode).to.equal(403);
    });

    it('answers 404 NOT_FOUND for a genuine link whose email was deleted', async () => {
        await p.api.ingestForApi(buildMail({ messageId: 'soon-gone@x' }), { recipients: ['blob@x'] });
        const link = (await p.server.inject({ url: '/v1/emails/soon-gone%40x/raw', headers: p.auth })).headers.location as string;
        await p.server.inject({ method: 'DELETE', url: '/v1/emails/soon-gone%40x', headers: p.auth });
        const res = await p.server.inject(link);
        expect(res.statusCode).to.equal(404);
        expect(res.result).to.equal({ error: 'NOT_FOUND' });
    });

    it('is absent when the blob store serves its own links', async () => {
        const q = await provisionServer();
        const store = q.stores.blobStore as { verifyDownload?: unknown };
        try {
            expect(typeof store.verifyDownload).to.equal('function');
            expect(q.server.table().some((r) => r.path === '/v1/blobs/{key}')).to.be.true();
        }
        finally {
            await q.cleanup();
        }

        // An object-storage store (no verifyDownload): nothing to serve, no route.
        const dir2 = await tempDir('no-blob-route');
        const rs = await openEmbeddedRecordStore({ dataDir: dir2 });
        const fs = createFsBlobStore({ root: Path.join(dir2, 'blobs'), signingSecret: TEST_SIGNING_SECRET });
        const objectStore = { ...fs, verifyDownload: undefined, createDownloadLink: async () => ({ url: 'https://bucket.example/signed' }) };
        const r = await provisionServer({ recordStore: rs, blobStore: objectStore });
        try {
            expect(r.server.table().some((route) => route.path.startsWith('/v1/blobs'))).to.be.false();
            await r.api.ingestForApi(buildMail({ messageId: 'obj@x' }), { recipients: ['obj@x'] });
            const res = await r.server.inject({ url: '/v1/emails/obj%40x/raw', headers: r.auth });
            expect(res.statusCode).to.equal(302);
            expect(res.headers.location).to.equal('https://bucket.example/signed');
            expect(res.headers['cache-control']).to.equal('no-store');
            expect((await r.server.inject('/v1/blobs/abc')).result).to.equal({ error: 'NOT_FOUND' });
        }
        finally {
            await r.cleanup();
            await rs.close();
            await Fs.rm(dir2, { recursive: true, force: true });
        }
    });
});

const SECRET = 'a signing secret of at least sixteen bytes';
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

describe('routes/blobs', () => {

    describe('downloadLocation()', () => {

        it('answers an object-storage URL as it is, whatever the prefix', () => {
            const url = 'https://bucket.s3.example/ic/k/raw.eml?X-Amz-Signature=abc&response-content-type=message%2Frfc822';

            expect(downloadLocation({ url }, '')).to.equal(url);
            expect(downloadLocation({ url }, '/mail')).to.equal(url);
        });

        it('turns a signed target into /v1/blobs/<encoded key>?expires&filename&type&sig', async () => {
            const signer = createLinkSigner({ signingSecret: SECRET, now: () => T0 });
            const link = await signer.createDownloadLink('abc123/att/2', { expiresInSeconds: 900, filename: '1-r\u00e9sum\u00e9 "final" & more.pdf', contentType: 'application/pdf' });
            const location = downloadLocation(link, '');

            expect(BLOB_LINK_PATH).to.equal('/v1/blobs');
            expect(location).to.equal(`/v1/blobs/abc123%2Fatt%2F2?expires=${T0 / 1000 + 900}` +
                `&filename=1-r%C3%A9sum%C3%A9+%22final%22+%26+more.pdf&type=application%2Fpdf&sig=${link.query.sig}`);

            // What the route reads back is what was signed.
            const url = new URL(location, 'http://x');
            expect(decodeURIComponent(url.pathname.slice('/v1/blobs/'.length))).to.equal('abc123/att/2');
            expect(signer.verifyDownload('abc123/att/2', Object.fromEntries(url.searchParams))).to.not.be.null();
        });

        it('puts the plugin prefix in front of the blob route', () => {
            const link = { key: 'k/raw.eml', query: { expires: '1', filename: 'message.eml', type: 'message/rfc822', sig: 'ab' } };

            expect(downloadLocation(link, '/mail')).to.equal('/mail/v1/blobs/k%2Fraw.eml?expires=1&filename=message.eml&type=message%2Frfc822&sig=ab');
        });
    });

    describe('servesOwnLinks()', () => {

        it('is true for a store that verifies its own links and false for object storage', () => {
            const fs = createFsBlobStore({ root: '/nonexistent-root-never-touched', signingSecret: SECRET });
            const objectStore: BlobStore = { ...fs, verifyDownload: undefined, createDownloadLink: async () => ({ url: 'https://bucket.example/signed' }) } as BlobStore;

            expect(servesOwnLinks(fs)).to.be.true();
            expect(servesOwnLinks(objectStore)).to.be.false();
        });
    });
});
