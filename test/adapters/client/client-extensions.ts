import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { InboxCaptureApiError, InboxCaptureClient } from '../../../adapters/client';
import { POSTGRES_S3, SQLITE_FS, type ClientBackend, type ClientBackendKind } from '../../helpers/client-backends';
import { buildMail } from '../../helpers/mail';
import { recordingFetch } from '../../helpers/recording-fetch';

// The client methods of the header fields, the inbox list, and the links and codes of the
// email object (docs/api.md, "The client: inbox-capture/client").

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

function suite(kind: ClientBackendKind): void {
    describe(`InboxCaptureClient on ${kind.name}`, () => {
        let backend: ClientBackend;
        let client: InboxCaptureClient;

        before(async () => {
            backend = await kind.start();
            client = new InboxCaptureClient({ baseUrl: backend.baseUrl, apiKey: backend.p.apiKey });
        });

        after(() => backend?.cleanup());

        describe('getHeaders()', () => {
            it('answers the top-level header fields in message order, unfolded and decoded', async () => {
                const raw = [
                    'From: App <app@sender.test>',
                    'To: headers@test.example',
                    'Subject: =?UTF-8?B?SGVsbG8=?= =?UTF-8?B?IFfDtnJsZA==?=',
                    'Message-ID: <headers-1@test.example>',
                    'X-Trace: one',
                    'X-Trace: two',
                    'X-Folded: first',
                    '\tsecond',
                    'X-Empty:',
                    '',
                    'body',
                    ''
                ].join('\r\n');
                await backend.p.api.ingestForApi(raw);
                expect(await client.getHeaders('headers-1@test.example')).to.equal([
                    { name: 'From', value: 'App <app@sender.test>' },
                    { name: 'To', value: 'headers@test.example' },
                    { name: 'Subject', value: 'Hello Wörld' },
                    { name: 'Message-ID', value: '<headers-1@test.example>' },
                    { name: 'X-Trace', value: 'one' },
                    { name: 'X-Trace', value: 'two' },
                    { name: 'X-Folded', value: 'first\tsecond' },
                    { name: 'X-Empty', value: '' }
                ]);
            });

            it('rejects with NOT_FOUND for an unknown id and UNAUTHORIZED for a bad key', async () => {
                const notFound = await expect(client.getHeaders('missing@nowhere.test')).to.reject(InboxCaptureApiError);
                expect([notFound.status, notFound.code]).to.equal([404, 'NOT_FOUND']);
                const stranger = new InboxCaptureClient({ baseUrl: backend.baseUrl, apiKey: 'ic_nope' });
                const unauthorized = await expect(stranger.getHeaders('headers-1@test.example')).to.reject(InboxCaptureApiError);
                expect([unauthorized.status, unauthorized.code]).to.equal([401, 'UNAUTHORIZED']);
            });
        });

        describe('listInboxes()', () => {
            it('pages the inboxes that hold mail, most recent first, filtered by prefix', async () => {
                for (const [inbox, count] of [['inb-a', 1], ['inb-b', 2], ['inb-c', 1], ['other', 1]] as const) {
                    for (let i = 0; i < count; i++) {
                        await backend.p.api.ingestForApi(buildMail({ to: `${inbox}@test.example` }));
                        await new Promise((resolve) => setTimeout(resolve, 2));
                    }
                }

                const first = await client.listInboxes({ prefix: 'inb-', limit: 2 });
                expect(first.inboxes.map((i) => [i.name, i.count])).to.equal([['inb-c', 1], ['inb-b', 2]]);
                expect(first.hasMore).to.be.true();
                expect(first.inboxes[0].lastReceivedAt).to.be.a.number();
                const second = await client.listInboxes({ prefix: 'inb-', limit: 2, cursor: first.nextCursor });
                expect(second.inboxes.map((i) => i.name)).to.equal(['inb-a']);
                expect(second.hasMore).to.be.false();
                expect(second.nextCursor).to.not.exist();
                expect((await client.listInboxes()).inboxes.map((i) => i.name)).to.include(['other', 'inb-a']);
            });

            it('rejects with INVALID_LIMIT and VALIDATION_ERROR', async () => {
                const limit = await expect(client.listInboxes({ limit: 0 })).to.reject(InboxCaptureApiError);
                expect([limit.status, limit.code]).to.equal([400, 'INVALID_LIMIT']);
                const prefix = await expect(client.listInboxes({ prefix: 'UPPER' })).to.reject(InboxCaptureApiError);
                expect([prefix.status, prefix.code]).to.equal([400, 'VALIDATION_ERROR']);
            });
        });

        describe('currentKey()', () => {
            it('answers the calling key\'s name and scope', async () => {
                const key = await backend.p.api.capture.createKey(`scoped-${Date.now()}`, { inboxPrefix: 'team-', readOnly: true });
                const scoped = new InboxCaptureClient({ baseUrl: backend.baseUrl, apiKey: key });
                expect(await scoped.currentKey()).to.include({ inboxPrefix: 'team-', readOnly: true });
                expect(await client.currentKey()).to.include({ inboxPrefix: null, readOnly: false });
            });
        });

        describe('q', () => {
            it('is sent as the API\'s `q` by listEmails() and waitForEmail()', async () => {
                const { fetch, calls } = recordingFetch();
                const recorded = new InboxCaptureClient({ baseUrl: backend.baseUrl, apiKey: backend.p.apiKey, fetch });
                await recorded.listEmails({ inbox: 'q-box', q: 'from:app "a b"' }).catch(() => undefined);
                await recorded.waitForEmail({ inbox: 'q-box', q: 'has:code', timeoutMs: 1000 }).catch(() => undefined);
                expect(calls.map((c) => new URL(c.url).searchParams.get('q'))).to.equal(['from:app "a b"', 'has:code']);
            });
        });

        describe('links and codes', () => {
            it('come with the email that waitForEmail answers', async () => {
                await backend.p.api.ingestForApi(buildMail({
                    to: 'codes@test.example',
                    subject: 'Your code is 482913',
                    text: 'Use 482913 or open https://app.example.test/verify?t=abc.',
                    html: '<p>Use <b>482913</b> or <a href="https://app.example.test/verify?t=abc&amp;x=1">verify</a>.</p>'
                }));
                const email = await client.waitForEmail({ inbox: 'codes', timeoutMs: 10_000 });
                expect(email.codes).to.equal(['482913']);
                expect(email.links).to.equal([
                    { href: 'https://app.example.test/verify?t=abc&x=1', text: 'verify' },
                    { href: 'https://app.example.test/verify?t=abc', text: 'https://app.example.test/verify?t=abc' }
                ]);
            });
        });
    });
}

describe('InboxCaptureClient: headers, inboxes, links and codes', () => {
    suite(SQLITE_FS);
    suite(POSTGRES_S3);
});
