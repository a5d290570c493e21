import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { InboxCaptureApiError, InboxCaptureClient, UNEXPECTED_RESPONSE, type Email } from '../../../adapters/client';
import { POSTGRES_S3, SQLITE_FS, type ClientBackend, type ClientBackendKind } from '../../helpers/client-backends';
import { buildMail } from '../../helpers/mail';
import { recordingFetch } from '../../helpers/recording-fetch';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** Bytes no text decoding survives: the download must hand back exactly these. */
const BINARY = Buffer.from([0, 255, 1, 254, 13, 10, 46, 13, 10, 128, 37, 80, 68, 70]);

/** Rejects unless `promise` rejects with an API error of this status and code. */
async function expectApiError(promise: Promise<unknown>, status: number, code: string): Promise<void> {
    const err = await expect(promise).to.reject(InboxCaptureApiError);
    expect(err.status).to.equal(status);
    expect(err.code).to.equal(code);
}

function suite(kind: ClientBackendKind): void {
    describe(`InboxCaptureClient on ${kind.name}`, () => {
        let backend: ClientBackend;
        let client: InboxCaptureClient;
        let stored: Email[];
        let rawMessage: string;

        const ingest = async (raw: string): Promise<Email> => {
            const [view] = await backend.p.api.ingestForApi(raw);
            return client.getEmail(view.messageId);
        };

        before(async () => {
            backend = await kind.start();
            client = new InboxCaptureClient({ baseUrl: backend.baseUrl, apiKey: backend.p.apiKey });
            // Seven in one inbox, one second apart in receive order; the fourth has an attachment.
            stored = [];
            for (let i = 0; i < 7; i++) {
                const raw = buildMail({
                    to: 'paging@test.example',
                    from: i % 2 === 0 ? 'even@sender.test' : 'odd@sender.test',
                    subject: `message ${i}`,
                    messageId: i === 3 ? 'a/b#c?d%e f@awkward.test' : undefined,
                    attachments: i === 3 ? [{ filename: 'data.bin', contentType: 'application/octet-stream', content: BINARY }] : []
                });
                if (i === 3) {
                    rawMessage = raw;
                }

                stored.push(await ingest(raw));
                await new Promise((resolve) => setTimeout(resolve, 2));
            }
        });

        after(() => backend?.cleanup());

        describe('listEmails()', () => {
            it('answers one page, newest first, with nextCursor exactly when hasMore', async () => {
                const first = await client.listEmails({ inbox: 'paging', limit: 3 });
                expect(first.emails.map((e) => e.subject)).to.equal(['message 6', 'message 5', 'message 4']);
                expect(first.hasMore).to.be.true();
                const second = await client.listEmails({ inbox: 'paging', limit: 3, cursor: first.nextCursor });
                expect(second.emails.map((e) => e.subject)).to.equal(['message 3', 'message 2', 'message 1']);
                const last = await client.listEmails({ inbox: 'paging', limit: 3, cursor: second.nextCursor });
                expect(last.emails.map((e) => e.subject)).to.equal(['message 0']);
                expect(last.hasMore).to.be.false();
                expect(last.nextCursor).to.not.exist();
            });

            it('sends every filter: sender, subject, hasAttachments, receivedAfter and receivedBefore (numbers and Dates)', async () => {
                const subjects = async (query: Parameters<InboxCaptureClient['listEmails']>[0]) => (await client.listEmails(query)).emails.map((e) => e.subject);
                expect(await subjects({ inbox: 'paging', sender: 'ODD@' })).to.equal(['message 5', 'message 3', 'message 1']);
                expect(await subjects({ inbox: 'paging', subject: 'message 2' })).to.equal(['message 2']);
                expect(await subjects({ inbox: 'paging', hasAttachments: true })).to.equal(['message 3']);
                expect(await subjects({ inbox: 'paging', hasAttachments: false, limit: 1 })).to.equal(['message 6']);
                expect(await subjects({ inbox: 'paging', receivedAfter: stored[5].receivedAt })).to.equal(['message 6', 'message 5']);
                expect(await subjects({ inbox: 'paging', receivedAfter: new Date(stored[5].receivedAt), receivedBefore: new Date(stored[6].receivedAt) })).to.equal(['message 5']);
                expect(await subjects({ inbox: 'paging', receivedBefore: new Date(stored[1].receivedAt).toISOString() })).to.equal(['message 0']);
            });

            it('sends q, the search language, with the other filters', async () => {
                const subjects = async (query: Parameters<InboxCaptureClient['listEmails']>[0]) => (await client.listEmails(query)).emails.map((e) => e.subject);
                expect(await subjects({ inbox: 'paging', q: 'from:odd@ -subject:"message 5"' })).to.equal(['message 3', 'message 1']);
                expect(await subjects({ inbox: 'paging', q: 'has:attachment filename:data' })).to.equal(['message 3']);
                expect(await subjects({ inbox: 'paging', q: 'message', sender: 'even', limit: 2 })).to.equal(['message 6', 'message 4']);
                await expectApiError(client.listEmails({ inbox: 'paging', q: '"unclosed' }), 400, 'VALIDATION_ERROR');
                const seen: string[] = [];
                for await (const email of client.emails({ inbox: 'paging', limit: 1, q: '-from:odd@' })) {
                    seen.push(email.subject);
                }

                expect(seen).to.equal(['message 6', 'message 4', 'message 2', 'message 0']);
            });

            it('answers at once with what already matches when wait is true', async () => {
                const page = await client.listEmails({ inbox: 'paging', subject: 'message 0', wait: true, timeout: 28 });
                expect(page.emails.map((e) => e.subject)).to.equal(['message 0']);
            });
        });

        describe('emails()', () => {
            it('iterates every email of every page, newest first, as listEmails orders them', async () => {
                const { fetch, calls } = recordingFetch();
                const paging = new InboxCaptureClient({ baseUrl: backend.baseUrl, apiKey: backend.p.apiKey, fetch });
                const seen: string[] = [];
                for await (const email of paging.emails({ inbox: 'paging', limit: 2 })) {
                    seen.push(email.messageId);
                }

                expect(seen).to.equal(stored.map((e) => e.messageId).reverse());
                expect(calls).to.have.length(4);
                expect(calls.slice(1).every((c) => new URL(c.url).searchParams.get('cursor')!.includes('#'))).to.be.true();
            });

            it('stops fetching when the loop stops', async () => {
                const { fetch, calls } = recordingFetch();
                const paging = new InboxCaptureClient({ baseUrl: backend.baseUrl, apiKey: backend.p.apiKey, fetch });
                for await (const email of paging.emails({ inbox: 'paging', limit: 2, sender: 'even@' })) {
                    expect(email.subject).to.equal('message 6');
                    break;
                }

                expect(calls).to.have.length(1);
            });

            it('yields nothing for an empty inbox', async () => {
                const seen: Email[] = [];
                for await (const email of client.emails({ inbox: 'nobody-here' })) {
                    seen.push(email);
                }

                expect(seen).to.equal([]);
            });
        });

        describe('getEmail()', () => {
            it('answers the email object as the list shows it, for an id with / # ? % and a space', async () => {
                const email = await client.getEmail('a/b#c?d%e f@awkward.test');
                expect(email.messageId).to.equal('a/b#c?d%e f@awkward.test');
                expect(email).to.equal(stored[3]);
                const listed = (await client.listEmails({ inbox: 'paging', hasAttachments: true })).emails[0];
                expect(listed).to.equal(email);
                expect(email.attachments.map((a) => [a.filename, a.size])).to.equal([['0-data.bin', BINARY.length]]);
            });

            it('rejects with NOT_FOUND for an unknown id', async () => {
                await expectApiError(client.getEmail('missing@nowhere.test'), 404, 'NOT_FOUND');
            });
        });

        describe('downloadRaw()', () => {
            it('answers the raw message byte for byte, following the 302 without the API key', async () => {
                const { fetch, calls } = recordingFetch();
                const downloads = new InboxCaptureClient({ baseUrl: backend.baseUrl, apiKey: backend.p.apiKey, fetch });
                const before = backend.linkHostRequests?.length ?? 0;
                const bytes = await downloads.downloadRaw(stored[3].messageId);
                expect(bytes).to.be.an.instanceof(Uint8Array);
                expect(Buffer.from(bytes).equals(Buffer.from(rawMessage, 'utf8'))).to.be.true();

                // The API call carries the key and does not follow; the link is fetched without it.
                expect(calls).to.have.length(2);
                expect(calls[0].url).to.equal(`${backend.baseUrl}${stored[3].rawUrl}`);
                expect(calls[0].headers.authorization).to.equal(`Bearer ${backend.p.apiKey}`);
                expect(calls[0].redirect).to.equal('manual');
                expect(calls[1].headers).to.equal({});
                expectLinkHost(backend, calls[1].url, before);
            });
        });

        describe('rawLink()', () => {
            it('answers the raw message\'s link, which needs no key; NOT_FOUND for an unknown email', async () => {
                const link = await client.rawLink(stored[3].messageId);
                const response = await fetch(link);
                expect(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(rawMessage, 'utf8'))).to.be.true();
                await expectApiError(client.rawLink('missing@nowhere.test'), 404, 'NOT_FOUND');
            });
        });

        describe('downloadAttachment()', () => {
            it('answers the attachment\'s bytes, following the 302 without the API key', async () => {
                const { fetch, calls } = recordingFetch();
                const downloads = new InboxCaptureClient({ baseUrl: backend.baseUrl, apiKey: backend.p.apiKey, fetch });
                const before = backend.linkHostRequests?.length ?? 0;
                const bytes = await downloads.downloadAttachment(stored[3].messageId, '0-data.bin');
                expect(Buffer.from(bytes).equals(BINARY)).to.be.true();
                expect(calls).to.have.length(2);
                expect(calls[0].url).to.equal(`${backend.baseUrl}${stored[3].attachments[0].url}`);
                expect(calls[1].headers).to.equal({});
                expectLinkHost(backend, calls[1].url, before);
            });

            it('rejects with NOT_FOUND for an unknown attachment or email', async () => {
                await expectApiError(client.downloadAttachment(stored[3].messageId, '1-none.bin'), 404, 'NOT_FOUND');
                await expectApiError(client.downloadRaw('missing@nowhere.test'), 404, 'NOT_FOUND');
            });
        });

        describe('deleteEmail()', () => {
            it('deletes one email; then it is NOT_FOUND, and so is a second delete', async () => {
                const email = await ingest(buildMail({ to: 'delete-one@test.example', subject: 'to delete' }));
                await client.deleteEmail(email.messageId);
                await expectApiError(client.getEmail(email.messageId), 404, 'NOT_FOUND');
                await expectApiError(client.deleteEmail(email.messageId), 404, 'NOT_FOUND');
            });
        });

        describe('setTags()', () => {
            it('replaces the tags and resolves to the email with them; NOT_FOUND and VALIDATION_ERROR as the API answers', async () => {
                const email = await ingest(buildMail({ to: 'tagging@test.example', headers: ['X-Tags: first'] }));
                expect(email.tags).to.equal(['first']);
                expect(await client.setTags(email.messageId, ['Second', 'third'])).to.equal({ ...email, tags: ['second', 'third'] });
                expect(await client.setSeen(email.messageId, true)).to.equal({ ...email, tags: ['second', 'third'], seen: true });
                expect((await client.listEmails({ inbox: 'tagging', q: 'is:read' })).emails.map((e) => e.messageId)).to.equal([email.messageId]);
                await expectApiError(client.setSeen('no-such@x', true), 404, 'NOT_FOUND');
                expect((await client.listEmails({ inbox: 'tagging', q: 'tag:third' })).emails.map((e) => e.messageId)).to.equal([email.messageId]);
                await expectApiError(client.setTags('no-such@x', ['a']), 404, 'NOT_FOUND');
                await expectApiError(client.setTags(email.messageId, ['not a tag']), 400, 'VALIDATION_ERROR');
            });
        });

        describe('checkHtml()', () => {
            it('answers the HTML check, with the clients globs sent as the API reads them; NOT_FOUND and VALIDATION_ERROR as the API answers', async () => {
                const email = await ingest(buildMail({ to: 'checks@test.example', html: '<div style="display:flex"><video></video></div>' }));
                const all = await client.checkHtml(email.messageId);
                expect(all.clients).to.have.length(16);
                expect(all.findings.map((f) => f.title)).to.include(['<video> element', 'display:flex']);
                const outlook = await client.checkHtml(email.messageId, { clients: ['outlook.windows', 'apple-mail.*'] });
                expect(outlook.clients).to.equal(['apple-mail.ios', 'apple-mail.macos', 'outlook.windows']);
                expect(outlook.findings.find((f) => f.title === 'display:flex')!.unsupported).to.equal(['outlook.windows']);
                await expectApiError(client.checkHtml('no-such@x'), 404, 'NOT_FOUND');
                await expectApiError(client.checkHtml(email.messageId, { clients: ['nobody.*'] }), 400, 'VALIDATION_ERROR');
            });
        });

        describe('deleteInbox()', () => {
            it('deletes only what q matches when given one', async () => {
                await ingest(buildMail({ to: 'delete-some@test.example', subject: 'drop me' }));
                const kept = await ingest(buildMail({ to: 'delete-some@test.example', subject: 'keep me' }));
                expect(await client.deleteInbox('delete-some', { q: 'subject:drop' })).to.equal(1);
                expect((await client.listEmails({ inbox: 'delete-some' })).emails).to.equal([kept]);
            });

            it('resolves to the number deleted, 0 for an empty inbox', async () => {
                await ingest(buildMail({ to: 'delete-all@test.example' }));
                await ingest(buildMail({ to: 'delete-all@test.example' }));
                expect(await client.deleteInbox('delete-all')).to.equal(2);
                expect(await client.deleteInbox('delete-all')).to.equal(0);
                expect((await client.listEmails({ inbox: 'delete-all' })).emails).to.equal([]);
            });
        });

        describe('API errors', () => {
            it('rejects every method with UNAUTHORIZED (401) for an unknown key', async () => {
                const stranger = new InboxCaptureClient({ baseUrl: backend.baseUrl, apiKey: 'ic_not-a-key' });
                await expectApiError(stranger.listEmails({ inbox: 'paging' }), 401, 'UNAUTHORIZED');
                await expectApiError(stranger.getEmail(stored[0].messageId), 401, 'UNAUTHORIZED');
                await expectApiError(stranger.deleteEmail(stored[0].messageId), 401, 'UNAUTHORIZED');
                await expectApiError(stranger.deleteInbox('paging'), 401, 'UNAUTHORIZED');
                await expectApiError(stranger.downloadRaw(stored[0].messageId), 401, 'UNAUTHORIZED');
                await expectApiError(stranger.waitForEmail({ inbox: 'paging', timeoutMs: 5000 }), 401, 'UNAUTHORIZED');
                expect((await client.listEmails({ inbox: 'paging' })).emails).to.have.length(7);
            });

            it('carries the query errors\' codes (400)', async () => {
                await expectApiError(client.listEmails({ inbox: 'Not Valid' }), 400, 'INVALID_INBOX');
                await expectApiError(client.listEmails({ inbox: '' }), 400, 'MISSING_INBOX');
                await expectApiError(client.listEmails({ inbox: 'paging', limit: 101 }), 400, 'INVALID_LIMIT');
                await expectApiError(client.listEmails({ inbox: 'paging', cursor: 'not a cursor' }), 400, 'VALIDATION_ERROR');
                await expectApiError(client.listEmails({ inbox: 'paging', receivedAfter: 'yesterday' }), 400, 'VALIDATION_ERROR');
                await expectApiError(client.deleteInbox('UPPER'), 400, 'INVALID_INBOX');
            });
        });
    });
}

/** The link was fetched from where the blob store points, and its host never saw the key. */
function expectLinkHost(backend: ClientBackend, linkUrl: string, before: number): void {
    const requests = backend.linkHostRequests;
    if (requests === null) {
        // Files: the API's own host serves the signed link.
        expect(linkUrl.startsWith(`${backend.baseUrl}/`)).to.be.true();
        return;
    }

    // S3: a presigned URL on another host, which recorded what reached it.
    expect(linkUrl.startsWith(`${backend.baseUrl}/`)).to.be.false();
    const downloads = requests.slice(before).filter((r) => r.method === 'GET' && r.url.includes('X-Amz-Signature='));
    expect(downloads).to.have.length(1);
    expect(downloads[0].headers.authorization).to.not.exist();
    for (const request of requests) {
        expect(JSON.stringify(request.headers)).to.not.include(backend.p.apiKey);
    }
}

describe('InboxCaptureClient', () => {
    describe('constructor', () => {
        it('refuses a missing or non-http baseUrl, a missing apiKey and a longPollSeconds outside 1 to 28', () => {
            expect(() => new InboxCaptureClient({ baseUrl: '127.0.0.1:3000', apiKey: 'k' })).to.throw(TypeError, /baseUrl/);
            expect(() => new InboxCaptureClient({ baseUrl: 'http://127.0.0.1', apiKey: '' })).to.throw(TypeError, /apiKey/);
            expect(() => new InboxCaptureClient(undefined as never)).to.throw(TypeError, /baseUrl/);
            for (const longPollSeconds of [0, 29, 1.5]) {
                expect(() => new InboxCaptureClient({ baseUrl: 'http://127.0.0.1', apiKey: 'k', longPollSeconds })).to.throw(TypeError, /longPollSeconds/);
            }
        });

        it('joins baseUrl and the /v1 paths with one slash, a route prefix kept', async () => {
            const calls: string[] = [];
            const stub = async (input: string, init: RequestInit) => {
                calls.push(`${init.method} ${input}`);
                return new Response(JSON.stringify({ deleted: 3 }), { status: 200 });
            };
            const client = new InboxCaptureClient({ baseUrl: 'http://127.0.0.1:9/mail//', apiKey: 'k', fetch: stub });
            expect(await client.deleteInbox('x.y_z-1')).to.equal(3);
            expect(calls).to.equal(['DELETE http://127.0.0.1:9/mail/v1/emails?inbox=x.y_z-1']);
        });
    });

    describe('error answers that are not the API\'s', () => {
        it('rejects with UNEXPECTED_RESPONSE and the status when the body is no { error } JSON', async () => {
            for (const body of ['<html>Bad Gateway</html>', '{"message":"no"}', 'null']) {
                const client = new InboxCaptureClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', fetch: async () => new Response(body, { status: 502 }) });
                await expectApiError(client.getEmail('x@y'), 502, UNEXPECTED_RESPONSE);
            }
        });
    });

    suite(SQLITE_FS);
    suite(POSTGRES_S3);
});
