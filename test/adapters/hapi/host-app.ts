import * as Boom from '@hapi/boom';
import * as Code from '@hapi/code';
import * as Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { plugin } from '../../../adapters/hapi';
import type { EmailPage, EmailView } from '../../../adapters/hapi/api-types';
import { fingerprint } from './api/auth-suite';
import { buildMail } from '../../helpers/mail';
import { followDownload } from '../../helpers/downloads';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

// The host's own auth: a header `x-host-user`, nothing to do with ours.
function hostScheme(): Hapi.ServerAuthSchemeObject {
    return {
        authenticate(request, h) {
            const user = request.headers['x-host-user'];
            if (!user) {
                throw Boom.unauthorized('host says no', 'HostAuth');
            }

            return h.authenticated({ credentials: { user: { name: user } } as Hapi.AuthCredentials });
        }
    };
}

// A host app: public and protected routes, one under /v1, a route that fails, its own 404.
async function hostServer(options: { defaultAuth?: boolean } = {}): Promise<Hapi.Server> {
    const server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false });
    server.auth.scheme('host-scheme', hostScheme);
    server.auth.strategy('host', 'host-scheme');
    if (options.defaultAuth) {
        server.auth.default('host');
    }

    server.route([
        { method: 'GET', path: '/', options: { auth: false }, handler: () => 'host home' },
        { method: 'GET', path: '/private', options: { auth: 'host' }, handler: (request) => ({ hello: (request.auth.credentials.user as { name: string }).name }) },
        { method: 'GET', path: '/v1/users', options: { auth: false }, handler: () => [{ id: 1 }] },
        { method: 'GET', path: '/fails', options: { auth: false }, handler: () => { throw Boom.badRequest('host validation message'); } },
        { method: 'GET', path: '/crash', options: { auth: false }, handler: () => { throw new Error('host crash'); } },
        { method: 'POST', path: '/echo', options: { auth: false }, handler: (request) => request.payload as object }
    ]);
    return server;
}

// Requests whose answers belong to the host, never to the plugin.
const HOST_REQUESTS: Hapi.ServerInjectOptions[] = [
    { url: '/' },
    { url: '/private' },
    { url: '/private', headers: { 'x-host-user': 'ann' } },
    { url: '/private', headers: { authorization: 'Bearer whatever' } },
    { url: '/v1/users' },
    { url: '/fails' },
    { url: '/crash' },
    { url: '/no-such-page' },
    { url: '/emails' },
    { method: 'POST', url: '/echo', payload: '{"a":1}', headers: { 'content-type': 'application/json' } },
    { method: 'POST', url: '/echo', payload: '{bad json', headers: { 'content-type': 'application/json' } },
    { method: 'PUT', url: '/' }
];

async function answers(server: Hapi.Server): Promise<string[]> {
    const out: string[] = [];
    for (const request of HOST_REQUESTS) {
        out.push(`${request.method ?? 'GET'} ${request.url}: ${fingerprint(await server.inject(request))}`);
    }

    return out;
}

describe('Hapi plugin in a host app', () => {

    for (const defaultAuth of [false, true]) {
        describe(defaultAuth ? 'with a host default auth strategy' : 'without a default auth strategy', () => {

            it('leaves the host\'s routes, 404s, error bodies and auth exactly as they were', async () => {
                const dir = await tempDir('host');
                const host = await hostServer({ defaultAuth });
                const reference = await hostServer({ defaultAuth });
                try {
                    await reference.initialize();
                    const decorations = JSON.stringify(host.decorations);
                    const authDefault = host.auth.settings.default;
                    await host.register({ plugin, options: { dataDir: dir, publicRoutes: { docs: false }, docs: false } });
                    await host.initialize();
                    expect(await answers(host)).to.equal(await answers(reference));
                    // Nothing server-wide was added: no decorations, no default auth, no other plugin.
                    expect(JSON.stringify(host.decorations)).to.equal(decorations);
                    expect(host.auth.settings.default).to.equal(authDefault);
                    expect(Object.keys(host.registrations)).to.equal(['inbox-capture']);
                }
                finally {
                    await host.stop();
                    await reference.stop();
                    await Fs.rm(dir, { recursive: true, force: true });
                }
            });

            it('serves its own routes with its own auth, public routes without any', async () => {
                const dir = await tempDir('host');
                const host = await hostServer({ defaultAuth });
                try {
                    await host.register({ plugin, options: { dataDir: dir } });
                    await host.initialize();
                    const api = host.plugins['inbox-capture'];
                    const key = await api.capture.createKey('host-test');
                    await api.ingestForApi(buildMail({ messageId: 'guest@x' }), { recipients: ['guest@x'] });

                    // The host's credential opens nothing of ours, and ours nothing of the host's.
                    const hostOnly = await host.inject({ url: '/v1/emails?inbox=guest', headers: { 'x-host-user': 'ann' } });
                    expect(hostOnly.statusCode).to.equal(401);
                    expect(hostOnly.result).to.equal({ error: 'UNAUTHORIZED' });
                    const oursOnHost = await host.inject({ url: '/private', headers: { authorization: `Bearer ${key}` } });
                    expect(oursOnHost.statusCode).to.equal(401);
                    expect(JSON.parse(oursOnHost.payload).message).to.equal('host says no');

                    const list = await host.inject({ url: '/v1/emails?inbox=guest', headers: { authorization: `Bearer ${key}` } });
                    expect((list.result as EmailPage).emails.map((e) => e.messageId)).to.equal(['guest@x']);
                    for (const url of ['/health', '/version', '/openapi.json', '/docs']) {
                        expect((await host.inject(url)).statusCode, url).to.equal(200);
                    }

                    // Fs download links need no credential of either kind.
                    const raw = await host.inject({ url: '/v1/emails/guest%40x/raw', headers: { authorization: `Bearer ${key}` } });
                    expect((await followDownload(host, raw.headers.location as string)).statusCode).to.equal(200);
                }
                finally {
                    await host.stop();
                    await Fs.rm(dir, { recursive: true, force: true });
                }
            });
        });
    }

    it('answers unknown paths under /v1 with its own 404, while host routes under /v1 still win', async () => {
        const dir = await tempDir('host');
        const host = await hostServer();
        try {
            await host.register({ plugin, options: { dataDir: dir } });
            await host.initialize();
            expect((await host.inject('/v1/users')).result).to.equal([{ id: 1 }]);
            // POST /v1/users: the host's path, not the plugin's, so no 405 on the host's behalf.
            for (const [method, url] of [['GET', '/v1/nothing'], ['GET', '/v1/emails/a/b/c'], ['POST', '/v1/users']]) {
                const res = await host.inject({ method, url });
                expect(res.statusCode, `${method} ${url}`).to.equal(404);
                expect(res.result).to.equal({ error: 'NOT_FOUND' });
                expect(res.headers['x-content-type-options']).to.equal('nosniff');
            }

            // A path of the plugin's with a method it does not have.
            const wrongMethod = await host.inject({ method: 'PUT', url: '/v1/emails' });
            expect(wrongMethod.statusCode).to.equal(405);
            expect(wrongMethod.result).to.equal({ error: 'METHOD_NOT_ALLOWED' });
            expect(wrongMethod.headers.allow).to.equal('GET, HEAD, POST, DELETE');

            const hostNotFound = await host.inject('/nothing');
            expect(hostNotFound.result).to.equal({ statusCode: 404, error: 'Not Found', message: 'Not Found' });
            expect(hostNotFound.headers['x-content-type-options']).to.not.exist();
        }
        finally {
            await host.stop();
            await Fs.rm(dir, { recursive: true, force: true });
        }
    });

    describe('with routes.prefix /mail', () => {

        it('serves every endpoint, URL and download link under the prefix', async () => {
            const dir = await tempDir('prefix');
            const host = await hostServer();
            try {
                await host.register({ plugin, options: { dataDir: dir } }, { routes: { prefix: '/mail' } });
                await host.initialize();
                const api = host.plugins['inbox-capture'];
                const auth = { authorization: `Bearer ${await api.capture.createKey('prefixed')}` };
                const [ingested] = await api.ingestForApi(buildMail({ messageId: 'pre/fixed@x', attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'att' }] }), { recipients: ['prefixed@x'] });

                const list = await host.inject({ url: '/mail/v1/emails?inbox=prefixed', headers: auth });
                const [email] = (list.result as EmailPage).emails;
                expect(email.rawUrl).to.equal('/mail/v1/emails/pre%2Ffixed%40x/raw');
                expect(email.attachments[0].url).to.equal('/mail/v1/emails/pre%2Ffixed%40x/attachments/0-a.txt');

                expect(ingested).to.equal(email);
                const one = await host.inject({ url: '/mail/v1/emails/pre%2Ffixed%40x', headers: auth });
                expect((one.result as EmailView).rawUrl).to.equal(email.rawUrl);

                const raw = await host.inject({ url: email.rawUrl, headers: auth });
                expect(raw.statusCode).to.equal(302);
                expect(raw.headers.location as string).to.startWith('/mail/v1/blobs/');
                expect((await followDownload(host, raw.headers.location as string)).statusCode).to.equal(200);
                const att = await host.inject({ url: email.attachments[0].url, headers: auth });
                expect((await followDownload(host, att.headers.location as string)).body.toString()).to.equal('att');

                for (const url of ['/mail/health', '/mail/version', '/mail/openapi.json', '/mail/docs']) {
                    expect((await host.inject(url)).statusCode, url).to.equal(200);
                }

                const doc = JSON.parse((await host.inject('/mail/openapi.json')).payload) as { paths: Record<string, unknown> };
                expect(Object.keys(doc.paths).every((path) => path.startsWith('/mail/'))).to.be.true();
                expect((await host.inject('/mail/docs/init.js')).payload).to.include('"/mail/openapi.json"');
                expect((await host.inject('/mail/docs')).payload).to.include('/mail/docs/swagger-ui-bundle.js');
                expect((await host.inject({ url: '/mail/v1/nothing' })).result).to.equal({ error: 'NOT_FOUND' });
                expect((await host.inject({ method: 'DELETE', url: '/mail/v1/emails/pre%2Ffixed%40x', headers: auth })).statusCode).to.equal(200);

                // Unprefixed paths are the host's, with the host's 404.
                for (const url of ['/v1/emails?inbox=prefixed', '/health', '/v1/blobs/x', '/openapi.json']) {
                    const res = await host.inject({ url, headers: auth });
                    expect(res.statusCode, url).to.equal(404);
                    expect(res.result, url).to.equal({ statusCode: 404, error: 'Not Found', message: 'Not Found' });
                }
            }
            finally {
                await host.stop();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });
    });

    it('keeps the host\'s own error handling for routes it adds after the plugin', async () => {
        const dir = await tempDir('host');
        const host = await hostServer();
        try {
            await host.register({ plugin, options: { dataDir: Path.join(dir, 'd') } });
            host.route({ method: 'GET', path: '/later', options: { auth: false }, handler: () => { throw Boom.conflict('host conflict'); } });
            await host.initialize();
            const res = await host.inject('/later');
            expect(res.result).to.equal({ statusCode: 409, error: 'Conflict', message: 'host conflict' });
        }
        finally {
            await host.stop();
            await Fs.rm(dir, { recursive: true, force: true });
        }
    });

    it('keeps long-polls alive under a host\'s short server timeout', async () => {
        const dir = await tempDir('host-timeout');
        const host = Hapi.server({ host: '127.0.0.1', port: 0, debug: false, routes: { timeout: { server: 200 } } });
        try {
            await host.register({ plugin, options: { dataDir: dir } });
            await host.initialize();
            const key = await host.plugins['inbox-capture'].capture.createKey('timeout');
            const res = await host.inject({ url: '/v1/emails?inbox=slow&wait=true&timeout=1', headers: { authorization: `Bearer ${key}` } });
            expect(res.statusCode).to.equal(200);
            expect(res.result).to.equal({ emails: [], hasMore: false });
        }
        finally {
            await host.stop();
            await Fs.rm(dir, { recursive: true, force: true });
        }
    });

    it('fails registration with hapi\'s clear error on a route clash with the host', async () => {
        const dir = await tempDir('host-clash');
        const host = await hostServer();
        host.route({ method: 'GET', path: '/health', options: { auth: false }, handler: () => 'host health' });
        try {
            await expect(host.register({ plugin, options: { dataDir: dir } })).to.reject(/conflicts with existing \/health/);
            expect((await host.inject('/health')).payload).to.equal('host health');
            // With its route turned off, the plugin fits.
            const other = await hostServer();
            other.route({ method: 'GET', path: '/health', options: { auth: false }, handler: () => 'host health' });
            await other.register({ plugin, options: { dataDir: dir, publicRoutes: { health: false } } });
            await other.initialize();
            expect((await other.inject('/health')).payload).to.equal('host health');
            await other.stop();
        }
        finally {
            await host.stop();
            await Fs.rm(dir, { recursive: true, force: true });
        }
    });

    it('registers beside a host\'s own /health, /version and /docs with publicRoutes: false or { prefix }', async () => {
        const dir = await tempDir('host-public-routes');
        const hostRoutes = (server: Hapi.Server) => server.route(['/health', '/version', '/docs'].map((path) => ({ method: 'GET' as const, path, options: { auth: false }, handler: () => `host ${path}` })));
        const host = await hostServer();
        hostRoutes(host);
        try {
            await host.register({ plugin, options: { dataDir: dir, publicRoutes: false } });
            await host.initialize();
            for (const path of ['/health', '/version', '/docs']) {
                expect((await host.inject(path)).payload).to.equal(`host ${path}`);
            }

            expect((await host.inject('/openapi.json')).statusCode).to.equal(404);
            // The API itself is all there.
            expect((await host.inject('/v1/emails?inbox=x')).result).to.equal({ error: 'UNAUTHORIZED' });
            await host.stop();

            const other = await hostServer();
            hostRoutes(other);
            await other.register({ plugin, options: { dataDir: dir, publicRoutes: { prefix: '/inbox-capture' } } });
            await other.initialize();
            try {
                expect((await other.inject('/health')).payload).to.equal('host /health');
                expect((await other.inject('/inbox-capture/health')).result).to.include({ status: 'ok' });
                expect((await other.inject('/inbox-capture/version')).result).to.include({ apiVersions: ['v1'] });
                expect((await other.inject('/inbox-capture/docs')).statusCode).to.equal(200);
                const doc = JSON.parse((await other.inject('/inbox-capture/openapi.json')).payload) as { paths: Record<string, unknown> };
                expect(Object.keys(doc.paths)).to.include(['/inbox-capture/health', '/v1/emails']);
            }
            finally {
                await other.stop();
            }
        }
        finally {
            await host.stop();
            await Fs.rm(dir, { recursive: true, force: true });
        }
    });
});
