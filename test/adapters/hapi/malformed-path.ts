import * as Code from '@hapi/code';
import * as Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import { plugin, type InboxCapturePluginApi } from '../../../adapters/hapi';
import { buildMail } from '../../helpers/mail';
import { tempDir } from '../../helpers/temp-dir';
import { rawRequest, type RawResponse } from '../../helpers/raw-http';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** Request targets hapi cannot percent-decode (a lone `%FF`, a cut-off escape). */
const MALFORMED = ['/v1/emails/%FF', '/v1/emails/%E0%A4%A', '/v1/emails/%FF/raw', '/v1/emails/ok%FF/attachments/a.txt', '/v1/nope%FF', '/v1/%FF?inbox=x', '/v1/emails/a%2'];

/** A host app with the plugin under `prefix`, listening on loopback, plus a route of the host's own. */
async function startHost(prefix: string | undefined): Promise<{ server: Hapi.Server; api: InboxCapturePluginApi; dir: string }> {
    const dir = await tempDir('malformed-path');
    const server = Hapi.server({ host: '127.0.0.1', port: 0 });
    server.route({ method: 'GET', path: '/host/{name}', options: { auth: false }, handler: (request) => ({ host: request.params.name as string }) });
    await server.register({ plugin, options: { dataDir: dir } }, prefix ? { routes: { prefix } } : {});
    await server.start();
    return { server, api: server.plugins['inbox-capture'] as unknown as InboxCapturePluginApi, dir };
}

function json(response: RawResponse): unknown {
    return JSON.parse(response.body.toString('utf8'));
}

describe('hapi plugin', () => {

    describe('a request path that cannot be percent-decoded', () => {

        for (const prefix of [undefined, '/mail']) {

            describe(prefix ? `with routes.prefix ${prefix}` : 'without a prefix', () => {

                let host: Awaited<ReturnType<typeof startHost>>;
                let auth: Record<string, string>;
                const p = prefix ?? '';

                before(async () => {
                    host = await startHost(prefix);
                    auth = { authorization: `Bearer ${await host.api.capture.createKey('malformed')}` };
                    await host.api.ingestForApi(buildMail({ messageId: 'fine%25id@x' }), { recipients: ['malformed@x'] });
                });

                after(async () => {
                    await host.server.stop();
                    await Fs.rm(host.dir, { recursive: true, force: true });
                });

                it('under the plugin\'s /v1 answers 404 { "error": "NOT_FOUND" } with the security headers, with or without a key', async () => {
                    for (const path of MALFORMED) {
                        for (const headers of [{}, auth]) {
                            const response = await rawRequest(Number(host.server.info.port), `${p}${path}`, { headers });
                            expect(response.statusCode, path).to.equal(404);
                            expect(json(response), path).to.equal({ error: 'NOT_FOUND' });
                            expect(response.headers['x-content-type-options'], path).to.equal('nosniff');
                            expect(response.headers['content-type'], path).to.match(/^application\/json/);
                        }
                    }
                });

                it('leaves well-formed escapes alone: an id with %25 is found, an unknown one is 404 as before', async () => {
                    const found = await rawRequest(Number(host.server.info.port), `${p}/v1/emails/${encodeURIComponent('fine%25id@x')}`, { headers: auth });
                    expect(found.statusCode).to.equal(200);
                    expect((json(found) as { messageId: string }).messageId).to.equal('fine%25id@x');
                    const unknown = await rawRequest(Number(host.server.info.port), `${p}/v1/emails/${encodeURIComponent('nobody%@x')}`, { headers: auth });
                    expect(unknown.statusCode).to.equal(404);
                    expect(json(unknown)).to.equal({ error: 'NOT_FOUND' });
                });

                it('leaves the host\'s own paths to the host', async () => {
                    const malformed = await rawRequest(Number(host.server.info.port), '/host/%FF');
                    expect(malformed.statusCode).to.equal(400);
                    expect(json(malformed)).to.include({ statusCode: 400 });
                    const fine = await rawRequest(Number(host.server.info.port), '/host/a%20b');
                    expect(json(fine)).to.equal({ host: 'a b' });
                });
            });
        }

        it('is not the plugin\'s outside its prefix', async () => {
            const host = await startHost('/mail');
            try {
                // No route of the host's matches: hapi's own 404, in hapi's own shape.
                const response = await rawRequest(Number(host.server.info.port), '/v1/emails/%FF');
                expect(response.statusCode).to.equal(404);
                expect(json(response)).to.include({ statusCode: 404 });
            }
            finally {
                await host.server.stop();
                await Fs.rm(host.dir, { recursive: true, force: true });
            }
        });
    });
});
