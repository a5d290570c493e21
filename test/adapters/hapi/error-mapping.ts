import * as Boom from '@hapi/boom';
import * as Code from '@hapi/code';
import type { Request, RequestEvent } from '@hapi/hapi';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { apiError, toErrorReply, type ApiErrorCode } from '../../../adapters/hapi/error-mapping';
import { createFsBlobStore } from '../../../lib/blob-store/fs-blob-store';
import type { BlobStore } from '../../../lib/blob-store/blob-store';
import { openEmbeddedRecordStore } from '../../../lib/service/embedded-stores';
import { InboxCaptureError } from '../../../lib/errors';
import type { RecordStore } from '../../../lib/record-store/record-store';
import { buildMail } from '../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';
import { tempDir } from '../../helpers/temp-dir';
import { TEST_SIGNING_SECRET } from '../../helpers/test-stores';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const SECRET_DETAIL = 'connection to db-internal.example:5432 refused (password=hunter2)';

describe('Hapi plugin errors', () => {
    let p: ProvisionedServer;
    let dir: string;
    let recordStore: RecordStore;
    let failure: (() => Error) | null = null;
    const logged: RequestEvent[] = [];

    // The real stores, with every read and delete able to fail on demand.
    const failing = <T extends object>(store: T, methods: string[]): T => {
        const wrapped = { ...store } as Record<string, unknown>;
        for (const name of methods) {
            const original = (store as Record<string, (...args: unknown[]) => unknown>)[name];
            wrapped[name] = (...args: unknown[]) => {
                if (failure) {
                    return Promise.reject(failure());
                }

                return original.apply(store, args);
            };
        }

        return wrapped as T;
    };

    before(async () => {
        dir = await tempDir('errors');
        recordStore = await openEmbeddedRecordStore({ dataDir: dir });
        const blobStore = createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: TEST_SIGNING_SECRET });
        p = await provisionServer({
            recordStore: failing(recordStore, ['listEmails', 'getEmail', 'deleteEmail', 'deleteInboxBatch', 'findActiveKeyByHash', 'inboxVersion']),
            blobStore: failing<BlobStore>(blobStore, ['createDownloadLink', 'get'])
        });
        p.server.events.on({ name: 'request', channels: 'app' }, (_request, event) => {
            logged.push(event);
        });
        await p.api.ingestForApi(buildMail({ messageId: 'err@x', attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'a' }] }), { recipients: ['err@x'] });
    });

    after(async () => {
        await p.cleanup();
        await recordStore.close();
        await Fs.rm(dir, { recursive: true, force: true });
    });

    const ENDPOINTS: Array<[string, string]> = [
        ['GET', '/v1/emails?inbox=err'],
        ['GET', '/v1/emails?inbox=err&wait=true&timeout=1'],
        ['DELETE', '/v1/emails?inbox=err'],
        ['GET', '/v1/emails/err%40x'],
        ['DELETE', '/v1/emails/err%40x'],
        ['GET', '/v1/emails/err%40x/raw'],
        ['GET', '/v1/emails/err%40x/attachments/0-a.txt']
    ];

    const withFailure = async <T>(make: () => Error, fn: () => Promise<T>): Promise<T> => {
        // The key is checked before the failure starts, so the route itself meets it.
        const key = await p.api.capture.verifyKey(p.apiKey);
        expect(key).to.not.be.null();
        failure = make;
        try {
            return await fn();
        }
        finally {
            failure = null;
        }
    };

    describe('an unexpected failure', () => {
        for (const [method, url] of ENDPOINTS) {
            it(`answers 500 INTERNAL_ERROR for ${method} ${url}, logging the cause and never sending it`, async () => {
                // Authentication runs first and would meet the failure too: let it through.
                const res = await withFailure(() => new Error(SECRET_DETAIL), () => p.server.inject({
                    method,
                    url,
                    auth: { strategy: 'inbox-capture-api-key', credentials: { app: { keyName: 'test' } } }
                }));
                expect(res.statusCode).to.equal(500);
                expect(res.result).to.equal({ error: 'INTERNAL_ERROR' });
                expect(res.payload).to.not.include('hunter2');
                expect(res.headers['x-content-type-options']).to.equal('nosniff');
                const entry = logged.pop()!;
                expect(entry.tags).to.include(['error', 'inbox-capture']);
                expect(entry.error).to.be.an.error(SECRET_DETAIL);
            });
        }

        it('answers 500, not 401, when the key lookup itself fails', async () => {
            const res = await withFailure(() => new Error(SECRET_DETAIL), () => p.server.inject({ url: '/v1/emails?inbox=err', headers: p.auth }));
            expect(res.statusCode).to.equal(500);
            expect(res.result).to.equal({ error: 'INTERNAL_ERROR' });
            expect(res.headers['www-authenticate']).to.not.exist();
        });

        it('answers 500 when a signed link meets a broken blob store', async () => {
            const link = (await p.server.inject({ url: '/v1/emails/err%40x/raw', headers: p.auth })).headers.location as string;
            const res = await withFailure(() => new Error(SECRET_DETAIL), () => p.server.inject(link));
            expect(res.statusCode).to.equal(500);
            expect(res.result).to.equal({ error: 'INTERNAL_ERROR' });
        });

        it('keeps the email when its delete failed', async () => {
            await withFailure(() => new Error(SECRET_DETAIL), () => p.server.inject({ method: 'DELETE', url: '/v1/emails/err%40x', headers: p.auth }));
            expect(await p.api.capture.getEmail('err@x')).to.not.be.null();
        });
    });

    describe('an unavailable record store', () => {
        it('answers 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
            const res = await withFailure(
                () => new InboxCaptureError('RECORD_STORE_UNAVAILABLE', SECRET_DETAIL),
                () => p.server.inject({ url: '/v1/emails/err%40x', auth: { strategy: 'inbox-capture-api-key', credentials: { app: { keyName: 'test' } } } })
            );
            expect(res.statusCode).to.equal(503);
            expect(res.result).to.equal({ error: 'SERVICE_UNAVAILABLE' });
            expect(res.headers['retry-after']).to.equal('5');
            expect(res.payload).to.not.include('hunter2');
        });
    });

    describe('hapi\'s own errors on plugin routes', () => {
        it('answers a malformed JSON body on DELETE with 400 VALIDATION_ERROR', async () => {
            const res = await p.server.inject({ method: 'DELETE', url: '/v1/emails/none%40x', headers: { ...p.auth, 'content-type': 'application/json' }, payload: '{not json' });
            expect(res.statusCode).to.equal(400);
            expect(res.result).to.equal({ error: 'VALIDATION_ERROR' });
        });

        it('answers an unsupported body type with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
            const res = await p.server.inject({ method: 'DELETE', url: '/v1/emails/none%40x', headers: { ...p.auth, 'content-type': 'application/x-nothing' }, payload: 'x' });
            expect(res.statusCode).to.equal(415);
            expect(res.result).to.equal({ error: 'UNSUPPORTED_MEDIA_TYPE' });
        });
    });

    describe('toErrorReply()', () => {
        const request = { log: () => undefined } as unknown as Request;
        const TABLE: Array<[string, unknown, number, ApiErrorCode]> = [
            ['our 404', apiError(404, 'NOT_FOUND'), 404, 'NOT_FOUND'],
            ['our 403', apiError(403, 'FORBIDDEN'), 403, 'FORBIDDEN'],
            ['our 400', apiError(400, 'INVALID_LIMIT'), 400, 'INVALID_LIMIT'],
            ['core NOT_FOUND', new InboxCaptureError('NOT_FOUND', 'x'), 404, 'NOT_FOUND'],
            ['core RECORD_STORE_UNAVAILABLE', new InboxCaptureError('RECORD_STORE_UNAVAILABLE', 'x'), 503, 'SERVICE_UNAVAILABLE'],
            ['core BUSY (memory budget spent)', new InboxCaptureError('BUSY', 'x'), 503, 'SERVICE_UNAVAILABLE'],
            ['core BLOB_STORE_FAILED', new InboxCaptureError('BLOB_STORE_FAILED', 'x'), 500, 'INTERNAL_ERROR'],
            ['core INVALID_INPUT', new InboxCaptureError('INVALID_INPUT', 'x'), 500, 'INTERNAL_ERROR'],
            ['a plain Error', new Error('x'), 500, 'INTERNAL_ERROR'],
            ['a thrown string', 'x', 500, 'INTERNAL_ERROR'],
            ['Boom 401', Boom.unauthorized('x', 'Bearer'), 401, 'UNAUTHORIZED'],
            ['Boom 404', Boom.notFound(), 404, 'NOT_FOUND'],
            ['Boom 405', Boom.methodNotAllowed(), 405, 'METHOD_NOT_ALLOWED'],
            ['Boom 413', Boom.entityTooLarge(), 413, 'PAYLOAD_TOO_LARGE'],
            ['Boom 409', Boom.conflict(), 400, 'VALIDATION_ERROR'],
            ['Boom 503', Boom.serverUnavailable(), 503, 'SERVICE_UNAVAILABLE'],
            ['Boom 502', Boom.badGateway(), 500, 'INTERNAL_ERROR'],
            ['a boomified Error', Boom.boomify(new Error('x')), 500, 'INTERNAL_ERROR']
        ];

        for (const [name, err, status, code] of TABLE) {
            it(`maps ${name} to ${status} ${code}`, () => {
                const reply = toErrorReply(err, request);
                expect(reply.statusCode).to.equal(status);
                expect(reply.code).to.equal(code);
            });
        }

        it('gives every 401 the same WWW-Authenticate and every 503 a Retry-After', () => {
            expect(toErrorReply(apiError(401, 'UNAUTHORIZED'), request).headers).to.equal({ 'WWW-Authenticate': 'Bearer' });
            expect(toErrorReply(Boom.unauthorized('other', 'Basic'), request).headers).to.equal({ 'WWW-Authenticate': 'Bearer' });
            expect(toErrorReply(new InboxCaptureError('RECORD_STORE_UNAVAILABLE', 'x'), request).headers).to.equal({ 'Retry-After': '5' });
            expect(toErrorReply(new Error('x'), request).headers).to.equal({});
        });
    });
});
