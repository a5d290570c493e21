import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createHmac, randomBytes } from 'node:crypto';
import { isInboxCaptureError } from '../../../lib/errors';
import type { SignedLinkTarget } from '../../../lib/blob-store/blob-store';
import { createLinkSigner, MIN_SIGNING_SECRET_BYTES } from '../../../lib/blob-store/signed-links';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const SECRET = 'a signing secret of at least sixteen bytes';
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
const OPTIONS = { expiresInSeconds: 900, filename: '1-r\u00e9sum\u00e9 "final" & more.pdf', contentType: 'application/pdf' };

/** A signer on SECRET whose clock the test sets. */
function signerAt(): { signer: ReturnType<typeof createLinkSigner>; clock: { now: number } } {
    const clock = { now: T0 };
    return { signer: createLinkSigner({ signingSecret: SECRET, now: () => clock.now }), clock };
}

/** The query of a link as a server would present it: a copy a test may tamper with. */
function presented(link: SignedLinkTarget): Record<string, unknown> {
    return { ...link.query };
}

describe('signed-links', () => {

    describe('createLinkSigner()', () => {

        it('refuses a secret shorter than 16 bytes, as a string or a Buffer', () => {
            expect(MIN_SIGNING_SECRET_BYTES).to.equal(16);
            expect(() => createLinkSigner({ signingSecret: 'fifteen bytes!!' })).to.throw(TypeError, /signingSecret/);
            expect(() => createLinkSigner({ signingSecret: randomBytes(15) })).to.throw(TypeError, /signingSecret/);
            expect(() => createLinkSigner({ signingSecret: undefined as unknown as string })).to.throw(TypeError, /signingSecret/);
            expect(() => createLinkSigner({ signingSecret: 'sixteen bytes!!!' })).to.not.throw();
            expect(() => createLinkSigner({ signingSecret: randomBytes(16) })).to.not.throw();
        });

        it('signs the same with a string secret and its UTF-8 bytes', async () => {
            const fromString = createLinkSigner({ signingSecret: SECRET, now: () => T0 });
            const fromBuffer = createLinkSigner({ signingSecret: Buffer.from(SECRET, 'utf8'), now: () => T0 });
            const link = await fromString.createDownloadLink('abc123/raw.eml', OPTIONS);

            expect(await fromBuffer.createDownloadLink('abc123/raw.eml', OPTIONS)).to.equal(link);
            expect(fromBuffer.verifyDownload(link.key, presented(link))).to.not.be.null();
        });
    });

    describe('createDownloadLink()', () => {

        it('returns the key and the query expires&filename&type&sig, in that order', async () => {
            const { signer } = signerAt();
            const link = await signer.createDownloadLink('abc123/att/2', OPTIONS);

            expect(link.key).to.equal('abc123/att/2');
            expect(Object.keys(link.query)).to.equal(['expires', 'filename', 'type', 'sig']);
            expect(link.query.expires).to.equal(String(T0 / 1000 + 900));
            expect(link.query.filename).to.equal(OPTIONS.filename);
            expect(link.query.type).to.equal('application/pdf');
        });

        it('signs key, expiry, filename and type with HMAC-SHA256, newline-separated, in hex', async () => {
            const { signer } = signerAt();
            const { query } = await signer.createDownloadLink('abc123/att/2', OPTIONS);
            const expected = createHmac('sha256', SECRET)
                .update(`abc123/att/2\n${query.expires}\n${OPTIONS.filename}\napplication/pdf`, 'utf8')
                .digest('hex');

            expect(query.sig).to.equal(expected);
        });

        it('rounds the expiry down to whole seconds', async () => {
            const signer = createLinkSigner({ signingSecret: SECRET, now: () => T0 + 999 });

            expect((await signer.createDownloadLink('k/raw.eml', { ...OPTIONS, expiresInSeconds: 60 })).query.expires).to.equal(String(T0 / 1000 + 60));
        });

        const refused: Array<[string, string, Partial<typeof OPTIONS>]> = [
            ['an invalid key', '../etc/passwd', {}],
            ['an empty key', '', {}],
            ['a zero expiry', 'k/raw.eml', { expiresInSeconds: 0 }],
            ['a negative expiry', 'k/raw.eml', { expiresInSeconds: -1 }],
            ['a fractional expiry', 'k/raw.eml', { expiresInSeconds: 1.5 }],
            ['an empty filename', 'k/raw.eml', { filename: '' }],
            ['a filename with a newline', 'k/raw.eml', { filename: 'a\nb' }],
            ['a media type with CR LF', 'k/raw.eml', { contentType: 'text/plain\r\nX-Evil: 1' }],
            ['a filename with DEL', 'k/raw.eml', { filename: 'a\u007fb' }],
            ['a filename over 1024 characters', 'k/raw.eml', { filename: 'x'.repeat(1025) }],
            ['a media type over 1024 characters', 'k/raw.eml', { contentType: `text/${'x'.repeat(1020)}` }]
        ];

        for (const [name, key, change] of refused) {
            it(`rejects ${name} with INVALID_INPUT`, async () => {
                const { signer } = signerAt();
                const err = await expect(signer.createDownloadLink(key, { ...OPTIONS, ...change })).to.reject();

                expect(isInboxCaptureError(err, 'INVALID_INPUT')).to.be.true();
            });
        }

        it('accepts fields of exactly 1024 characters', async () => {
            const { signer } = signerAt();
            const long = 'x'.repeat(1024);
            const link = await signer.createDownloadLink('k/raw.eml', { ...OPTIONS, filename: long, contentType: long });

            expect(signer.verifyDownload(link.key, presented(link))).to.equal({ filename: long, contentType: long });
        });
    });

    describe('verifyDownload()', () => {

        it('returns the signed filename and type of a genuine link', async () => {
            const { signer } = signerAt();
            const link = await signer.createDownloadLink('abc123/att/2', OPTIONS);

            expect(signer.verifyDownload(link.key, presented(link))).to.equal({ filename: OPTIONS.filename, contentType: 'application/pdf' });
        });

        it('ignores fields other than the signed four', async () => {
            const { signer } = signerAt();
            const link = await signer.createDownloadLink('abc123/att/2', OPTIONS);

            expect(signer.verifyDownload(link.key, { ...presented(link), utm_source: 'mail', download: '1' })).to.not.be.null();
        });

        it('accepts a link until its expiry and refuses it from then on', async () => {
            const { signer, clock } = signerAt();
            const link = await signer.createDownloadLink('abc123/raw.eml', OPTIONS);

            clock.now = T0 + 899_999;
            expect(signer.verifyDownload(link.key, presented(link))).to.not.be.null();
            clock.now = T0 + 900_000;
            expect(signer.verifyDownload(link.key, presented(link))).to.be.null();
            clock.now = T0 + 86_400_000;
            expect(signer.verifyDownload(link.key, presented(link))).to.be.null();
        });

        it('refuses a link signed with another secret', async () => {
            const { signer } = signerAt();
            const other = createLinkSigner({ signingSecret: randomBytes(32), now: () => T0 });
            const link = await other.createDownloadLink('abc123/att/2', OPTIONS);

            expect(signer.verifyDownload(link.key, presented(link))).to.be.null();
        });

        // Each tampering of a genuine link, one field at a time: [name, new key or null, change to the query].
        const tamperings: Array<[string, string | null, (query: Record<string, unknown>) => void]> = [
            ['another key', 'abc123/att/3', () => undefined],
            ['a traversal key', '../abc123/att/2', () => undefined],
            ['another filename', null, (q) => { q.filename = 'evil.html'; }],
            ['another type', null, (q) => { q.type = 'text/html'; }],
            ['a later expiry', null, (q) => { q.expires = String(Number(q.expires) + 3600); }],
            ['a non-numeric expiry', null, (q) => { q.expires = `${q.expires as string}.0`; }],
            ['an expiry of more than 12 digits', null, (q) => { q.expires = `000${q.expires as string}`; }],
            ['a changed signature', null, (q) => { q.sig = ((q.sig as string)[0] === '0' ? '1' : '0') + (q.sig as string).slice(1); }],
            ['an upper-case signature', null, (q) => { q.sig = (q.sig as string).toUpperCase().replace(/^[0-9]/, 'A'); }],
            ['a signature cut short', null, (q) => { q.sig = (q.sig as string).slice(0, 62); }],
            ['a signature made longer', null, (q) => { q.sig = `${q.sig as string}00`; }],
            ['a filename over 1024 characters', null, (q) => { q.filename = 'x'.repeat(1025); }],
            ['a type over 1024 characters', null, (q) => { q.type = 'x'.repeat(1025); }],
            ['the separator moved between filename and type', null, (q) => { q.filename = `${q.filename as string}\n${q.type as string}`; q.type = ''; }],
            ['a missing signature', null, (q) => { delete q.sig; }],
            ['a missing filename', null, (q) => { delete q.filename; }],
            ['a missing type', null, (q) => { delete q.type; }],
            ['a missing expiry', null, (q) => { delete q.expires; }],
            ['a repeated signature', null, (q) => { q.sig = [q.sig, q.sig]; }],
            ['a repeated filename', null, (q) => { q.filename = [q.filename, q.filename]; }],
            ['a repeated type', null, (q) => { q.type = [q.type, q.type]; }],
            ['a repeated expiry', null, (q) => { q.expires = [q.expires, q.expires]; }]
        ];

        for (const [name, key, tamper] of tamperings) {
            it(`refuses a link with ${name}`, async () => {
                const { signer } = signerAt();
                const link = await signer.createDownloadLink('abc123/att/2', OPTIONS);
                const query = presented(link);
                expect(signer.verifyDownload(link.key, query)).to.not.be.null();

                tamper(query);
                expect(signer.verifyDownload(key ?? link.key, query)).to.be.null();
            });
        }

        it('refuses a missing or empty query', async () => {
            const { signer } = signerAt();
            const link = await signer.createDownloadLink('abc123/att/2', OPTIONS);

            expect(signer.verifyDownload(link.key, {})).to.be.null();
            expect(signer.verifyDownload(link.key, undefined as unknown as Record<string, unknown>)).to.be.null();
        });
    });
});
