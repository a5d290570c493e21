import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { BLOB_LINK_PATH, downloadLocation, servesOwnLinks } from '../../../../adapters/hapi/routes/blobs';
import type { BlobStore } from '../../../../lib/blob-store/blob-store';
import { createFsBlobStore } from '../../../../lib/blob-store/fs-blob-store';
import { createLinkSigner } from '../../../../lib/blob-store/signed-links';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

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
