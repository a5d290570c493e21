import SwaggerParser from '@apidevtools/swagger-parser';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs';
import * as Path from 'node:path';
import { provisionServer, type ProvisionedServer, type ProvisionOptions } from '../../../helpers/provision-server';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const HOST_404 = { statusCode: 404, error: 'Not Found', message: 'Not Found' };

interface ErrorSchema {
    properties?: { error?: { enum?: string[] } };
    allOf?: ErrorSchema[];
}

interface Operation {
    security?: Array<Record<string, string[]>>;
    parameters?: Array<{ name: string; in: string; required?: boolean }>;
    responses: Record<string, { content?: Record<string, { schema: ErrorSchema }>; headers?: Record<string, unknown> }>;
}

interface OpenApiDocument {
    openapi: string;
    info: { version: string };
    paths: Record<string, Record<string, Operation>>;
    components: { securitySchemes: Record<string, unknown> };
}

// The codes an operation documents for one status, from its (dereferenced) error schema:
// the shared `Error` narrowed by the route's own enum (the last part of the allOf).
function codes(operation: Operation, status: number): string[] | undefined {
    const schema = operation.responses[status]?.content?.['application/json']?.schema;
    return schema?.allOf?.at(-1)?.properties?.error?.enum;
}

describe('Hapi plugin public endpoints', () => {
    let p: ProvisionedServer;

    before(async () => {
        p = await provisionServer();
    });

    after(() => p.cleanup());

    describe('GET /health', () => {
        it('answers { status: "ok", timestamp } without a key', async () => {
            const before = Date.now();
            const res = await p.server.inject('/health');
            expect(res.statusCode).to.equal(200);
            const body = res.result as { status: string; timestamp: number };
            expect(Object.keys(body)).to.equal(['status', 'timestamp']);
            expect(body.status).to.equal('ok');
            expect(body.timestamp).to.be.within(before, Date.now());
            expect(res.headers['x-content-type-options']).to.equal('nosniff');
        });
    });

    describe('GET /version', () => {
        it('answers the package\'s own version and apiVersions ["v1"]', async () => {
            const pkg = JSON.parse(Fs.readFileSync(Path.join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
            const res = await p.server.inject('/version');
            expect(res.statusCode).to.equal(200);
            expect(res.result).to.equal({ version: pkg.version, apiVersions: ['v1'] });
        });
    });

    describe('GET /openapi.json', () => {
        let raw: OpenApiDocument;
        let doc: OpenApiDocument;

        before(async () => {
            const res = await p.server.inject('/openapi.json');
            expect(res.statusCode).to.equal(200);
            raw = JSON.parse(res.payload) as OpenApiDocument;
            doc = await SwaggerParser.dereference(JSON.parse(res.payload)) as unknown as OpenApiDocument;
        });

        it('is a valid OpenAPI 3.0 document by swagger-parser', async () => {
            expect(raw.openapi).to.equal('3.0.0');
            await SwaggerParser.validate(JSON.parse(JSON.stringify(raw)));
        });

        it('declares Bearer security', () => {
            expect(raw.components.securitySchemes).to.contain({ bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key created with `inbox-capture keys create <name>`.' } });
        });

        it('lists every route of the plugin and nothing else', () => {
            const operations = Object.entries(raw.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`)).sort();
            expect(operations).to.equal([
                'DELETE /v1/emails',
                'DELETE /v1/emails/{messageId}',
                'DELETE /v1/faults',
                'DELETE /v1/faults/{id}',
                'GET /docs',
                'GET /health',
                'GET /openapi.json',
                'GET /v1/blobs/{key}',
                'GET /v1/emails',
                'GET /v1/emails/{messageId}',
                'GET /v1/emails/{messageId}/attachments/{filename}',
                'GET /v1/emails/{messageId}/checks/auth',
                'GET /v1/emails/{messageId}/checks/html',
                'GET /v1/emails/{messageId}/headers',
                'GET /v1/emails/{messageId}/raw',
                'GET /v1/faults',
                'GET /v1/inboxes',
                'GET /v1/keys/current',
                'GET /version',
                'POST /mcp',
                'POST /v1/emails',
                'POST /v1/emails/{messageId}/checks/links',
                'POST /v1/emails/{messageId}/release',
                'POST /v1/faults',
                'PUT /v1/emails/{messageId}/seen',
                'PUT /v1/emails/{messageId}/tags'
            ]);
        });

        it('documents every parameter of the list endpoint', () => {
            const names = doc.paths['/v1/emails'].get.parameters!.map((x) => `${x.in}:${x.name}${x.required ? '!' : ''}`);
            expect(names).to.equal(['query:inbox!', 'query:limit', 'query:cursor', 'query:wait', 'query:timeout', 'query:sender', 'query:subject', 'query:receivedAfter', 'query:receivedBefore', 'query:hasAttachments', 'query:q']);
            expect(doc.paths['/v1/emails'].delete.parameters!.map((x) => x.name)).to.equal(['inbox', 'q']);
            expect(doc.paths['/v1/inboxes'].get.parameters!.map((x) => `${x.in}:${x.name}${x.required ? '!' : ''}`)).to.equal(['query:limit', 'query:cursor', 'query:prefix']);
            expect(doc.paths['/v1/emails/{messageId}/attachments/{filename}'].get.parameters!.map((x) => `${x.in}:${x.name}!${x.required}`)).to.equal(['path:messageId!true', 'path:filename!true']);
        });

        it('documents the Bearer requirement and the error codes of every protected operation', () => {
            const expected: Record<string, Record<number, string[]>> = {
                'GET /v1/emails': { 400: ['MISSING_INBOX', 'INVALID_INBOX', 'INVALID_LIMIT', 'VALIDATION_ERROR'], 401: ['UNAUTHORIZED'] },
                'DELETE /v1/emails': { 400: ['MISSING_INBOX', 'INVALID_INBOX', 'VALIDATION_ERROR'], 401: ['UNAUTHORIZED'] },
                'GET /v1/emails/{messageId}': { 401: ['UNAUTHORIZED'], 404: ['NOT_FOUND'] },
                'DELETE /v1/emails/{messageId}': { 401: ['UNAUTHORIZED'], 404: ['NOT_FOUND'] },
                'GET /v1/inboxes': { 400: ['INVALID_LIMIT', 'VALIDATION_ERROR'], 401: ['UNAUTHORIZED'] },
                'GET /v1/emails/{messageId}/raw': { 401: ['UNAUTHORIZED'], 404: ['NOT_FOUND'] },
                'GET /v1/emails/{messageId}/headers': { 401: ['UNAUTHORIZED'], 404: ['NOT_FOUND'] },
                'GET /v1/emails/{messageId}/attachments/{filename}': { 401: ['UNAUTHORIZED'], 404: ['NOT_FOUND'] },
                'POST /v1/emails/{messageId}/release': { 400: ['VALIDATION_ERROR', 'RECIPIENT_NOT_ALLOWED'], 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 404: ['NOT_FOUND'], 409: ['RELAY_NOT_CONFIGURED'], 502: ['RELAY_FAILED'] },
                'POST /v1/faults': { 400: ['VALIDATION_ERROR'], 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 409: ['FAULT_LIMIT_REACHED'] },
                'GET /v1/faults': { 401: ['UNAUTHORIZED'] },
                'DELETE /v1/faults/{id}': { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 404: ['NOT_FOUND'] },
                'DELETE /v1/faults': { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'] }
            };
            for (const [name, statuses] of Object.entries(expected)) {
                const [method, path] = name.split(' ');
                const operation = doc.paths[path][method.toLowerCase()];
                expect(operation.security, name).to.equal([{ bearerAuth: [] }]);
                for (const [status, list] of Object.entries(statuses)) {
                    expect(codes(operation, Number(status)), `${name} ${status}`).to.equal(list);
                }

                expect(codes(operation, 500), name).to.equal(['INTERNAL_ERROR']);
                expect(codes(operation, 503), name).to.equal(['SERVICE_UNAVAILABLE']);
                expect(operation.responses[401].headers, name).to.include('WWW-Authenticate');
            }
        });

        it('answers the headers endpoint with the named schema Headers', () => {
            // docs/api.md, "The OpenAPI document and code generators".
            const ok = raw.paths['/v1/emails/{messageId}/headers'].get.responses[200] as unknown as { content: Record<string, { schema: { $ref: string } }> };
            expect(ok.content['application/json'].schema.$ref).to.equal('#/components/schemas/Headers');
            const schemas = (raw.components as unknown as { schemas: Record<string, { required?: string[] }> }).schemas;
            expect(schemas.Headers.required).to.equal(['headers']);
            type Resolved = { properties: { headers: { type: string; items: { required: string[]; properties: Record<string, { type: string }> } } } };
            const resolved = (doc.paths['/v1/emails/{messageId}/headers'].get.responses[200] as unknown as { content: Record<string, { schema: Resolved }> }).content['application/json'].schema;
            expect(resolved.properties.headers.type).to.equal('array');
            expect(resolved.properties.headers.items.required).to.equal(['name', 'value']);
            expect(resolved.properties.headers.items.properties.value.type).to.equal('string');
            expect(schemas.HeaderField.required).to.equal(['name', 'value']);
        });

        it('documents the redirects and the signed-link route', () => {
            for (const path of ['/v1/emails/{messageId}/raw', '/v1/emails/{messageId}/attachments/{filename}']) {
                expect(doc.paths[path].get.responses[302].headers).to.include(['Location', 'Cache-Control']);
            }

            const blobs = doc.paths['/v1/blobs/{key}'].get;
            expect(blobs.security).to.equal([]);
            expect(codes(blobs, 403)).to.equal(['FORBIDDEN']);
            expect(codes(blobs, 404)).to.equal(['NOT_FOUND']);
        });

        it('documents public operations as needing no security', () => {
            for (const path of ['/health', '/version', '/openapi.json', '/docs']) {
                expect(doc.paths[path].get.security, path).to.equal([]);
                expect(doc.paths[path].get.responses[200], path).to.exist();
            }
        });

        it('never reflects the Host header', async () => {
            const res = await p.server.inject({ url: '/openapi.json', headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' } });
            expect(res.payload).to.not.include('evil.example');
            expect(JSON.parse(res.payload).servers).to.equal([{ url: '/' }]);
        });
    });

    describe('GET /docs', () => {
        it('answers the Swagger UI page, not frameable, under a strict CSP', async () => {
            const res = await p.server.inject('/docs');
            expect(res.statusCode).to.equal(200);
            expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
            expect(res.headers['x-frame-options']).to.equal('DENY');
            expect(res.headers['x-content-type-options']).to.equal('nosniff');
            expect(res.headers['content-security-policy']).to.include('frame-ancestors \'none\'');
            expect(res.headers['content-security-policy']).to.include('script-src \'self\'');
            expect(res.payload).to.include('<div id="swagger-ui"></div>');
            expect(res.payload).to.not.match(/<script>/);
        });

        it('serves the page\'s scripts and styles', async () => {
            const page = (await p.server.inject('/docs')).payload;
            const assets = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
            expect(assets).to.have.length(6);
            for (const url of assets) {
                const res = await p.server.inject(url);
                expect(res.statusCode, url).to.equal(200);
                expect(res.rawPayload.length, url).to.be.above(100);
            }

            expect((await p.server.inject('/docs/swagger-ui-bundle.js')).headers['content-type']).to.equal('text/javascript; charset=utf-8');
            expect((await p.server.inject('/docs/swagger-ui.css')).headers['content-type']).to.equal('text/css; charset=utf-8');
            expect((await p.server.inject('/docs/init.js')).payload).to.include('url: "/openapi.json"');
        });

        it('serves no other file', async () => {
            for (const url of ['/docs/index.html', '/docs/package.json', '/docs/%2E%2E%2Fpackage.json', '/docs/..%2F..%2Fpackage.json', '/docs/swagger-ui-bundle.js.map', '/docs/constructor', '/docs/__proto__']) {
                const res = await p.server.inject(url);
                expect(res.statusCode, url).to.equal(404);
                expect(res.result, url).to.equal({ error: 'NOT_FOUND' });
            }
        });
    });

    describe('publicRoutes and docs options', () => {
        const TOGGLES: Array<[string, ProvisionOptions['plugin'], string[], string[]]> = [
            ['health off', { publicRoutes: { health: false } }, ['/health'], ['/version', '/openapi.json', '/docs']],
            ['version off', { publicRoutes: { version: false } }, ['/version'], ['/health', '/openapi.json', '/docs']],
            ['docs page off', { publicRoutes: { docs: false } }, ['/docs', '/docs/init.js'], ['/health', '/version', '/openapi.json']],
            ['document and page off', { publicRoutes: { openapi: false, docs: false } }, ['/openapi.json', '/docs'], ['/health', '/version']],
            ['docs: false', { docs: false }, ['/openapi.json', '/docs', '/docs/swagger-ui.css'], ['/health', '/version']],
            ['everything off', { docs: false, publicRoutes: { health: false, version: false } }, ['/health', '/version', '/openapi.json', '/docs'], []],
            ['publicRoutes: false', { publicRoutes: false }, ['/health', '/version', '/openapi.json', '/docs', '/docs/init.js'], []],
            ['publicRoutes: true', { publicRoutes: true }, [], ['/health', '/version', '/openapi.json', '/docs']],
            ['a prefix', { publicRoutes: { prefix: '/inbox-capture' } }, ['/health', '/version', '/openapi.json', '/docs'], ['/inbox-capture/health', '/inbox-capture/version', '/inbox-capture/openapi.json', '/inbox-capture/docs', '/inbox-capture/docs/init.js']],
            ['a prefix and a route off', { publicRoutes: { prefix: '/a/b', version: false } }, ['/a/b/version', '/health'], ['/a/b/health', '/a/b/openapi.json', '/a/b/docs']]
        ];

        for (const [name, options, absent, present] of TOGGLES) {
            it(`with ${name}, removes exactly those routes`, async () => {
                const q = await provisionServer({ plugin: options });
                try {
                    for (const url of absent) {
                        const res = await q.server.inject(url);
                        expect(res.statusCode, url).to.equal(404);
                        // Not ours any more: the host's 404.
                        expect(res.result, url).to.equal(HOST_404);
                    }

                    for (const url of present) {
                        expect((await q.server.inject(url)).statusCode, url).to.equal(200);
                    }

                    expect((await q.server.inject({ url: '/v1/emails?inbox=x', headers: q.auth })).statusCode).to.equal(200);
                }
                finally {
                    await q.cleanup();
                }
            });
        }

        it('lists the public routes under their prefix, after the registration\'s own, and the page loads them from there', async () => {
            const q = await provisionServer({ prefix: '/mail', plugin: { publicRoutes: { prefix: '/ic' } } });
            try {
                const doc = JSON.parse((await q.server.inject('/mail/ic/openapi.json')).payload) as OpenApiDocument;
                expect(Object.keys(doc.paths)).to.include(['/mail/ic/health', '/mail/ic/version', '/mail/ic/openapi.json', '/mail/ic/docs', '/mail/v1/emails']);
                expect(Object.keys(doc.paths)).to.not.include(['/mail/health', '/health']);
                const page = (await q.server.inject('/mail/ic/docs')).payload;
                expect(page).to.contain('src="/mail/ic/docs/swagger-ui-bundle.js"');
                expect((await q.server.inject('/mail/ic/docs/init.js')).payload).to.contain('url: "/mail/ic/openapi.json"');
                expect((await q.server.inject('/mail/ic/docs/swagger-ui.css')).statusCode).to.equal(200);
                expect((await q.server.inject('/mail/ic/health')).result).to.include({ status: 'ok' });
            }
            finally {
                await q.cleanup();
            }
        });

        it('drops a turned-off route from the document too', async () => {
            const q = await provisionServer({ plugin: { publicRoutes: { health: false, docs: false } } });
            try {
                const doc = JSON.parse((await q.server.inject('/openapi.json')).payload) as OpenApiDocument;
                expect(Object.keys(doc.paths)).to.not.include(['/health', '/docs']);
                expect(Object.keys(doc.paths)).to.include(['/version', '/openapi.json']);
            }
            finally {
                await q.cleanup();
            }
        });
    });
});
