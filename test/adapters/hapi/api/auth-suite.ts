import * as Code from '@hapi/code';
import type { ServerInjectResponse } from '@hapi/hapi';
import { buildMail } from '../../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import type { StoreFactory } from '../../../helpers/test-stores';
import type { SuiteLab } from './lab-types';

const { expect } = Code;

// Headers that legitimately differ between two otherwise identical responses.
const VOLATILE = new Set(['date']);

/** Status, headers (minus Date) and body: what must be identical for every bad token. */
export function fingerprint(res: ServerInjectResponse): string {
    const headers = Object.entries(res.headers)
        .filter(([name]) => !VOLATILE.has(name))
        .sort(([a], [b]) => a.localeCompare(b));
    return JSON.stringify({ status: res.statusCode, headers, body: res.payload });
}

/** The Bearer scheme, and one identical 401 for every bad token (docs/design.md, "Keys and authentication"). */
export function authSuite(lab: SuiteLab, factory: StoreFactory): void {
    const { describe, it, before, after } = lab;

    describe('authentication', () => {
        let p: ProvisionedServer;
        let revoked: string;
        let messageId: string;

        before(async () => {
            p = await provisionServer({ stores: factory });
            revoked = await p.api.capture.createKey('to-revoke');
            expect(await p.api.capture.revokeKey('to-revoke')).to.be.true();
            [{ messageId }] = await p.api.ingestForApi(buildMail({ to: 'auth@test.example' }));
        });

        after(() => p.cleanup());

        const BAD: Array<[string, () => Record<string, string>]> = [
            ['no Authorization header', () => ({})],
            ['the scheme word alone', () => ({ authorization: 'Bearer' })],
            ['the scheme word and a space', () => ({ authorization: 'Bearer ' })],
            ['a Basic credential', () => ({ authorization: 'Basic dXNlcjpwYXNz' })],
            ['the token without a scheme', () => ({ authorization: p.apiKey })],
            ['an unknown token, lowercase scheme', () => ({ authorization: 'bearer ic_unknownunknownunknownunknownunknownunknown0' })],
            ['an unknown token', () => ({ authorization: 'Bearer ic_unknownunknownunknownunknownunknownunknown0' })],
            ['a revoked key', () => ({ authorization: `Bearer ${revoked}` })],
            ['a valid key after two spaces', () => ({ authorization: `Bearer  ${p.apiKey}` })],
            ['a valid key and a second word', () => ({ authorization: `Bearer ${p.apiKey} extra` })],
            ['a valid key cut short', () => ({ authorization: `Bearer ${p.apiKey.slice(0, -1)}` })],
            ['a valid key with a tab', () => ({ authorization: `Bearer\t${p.apiKey}` })],
            ['a very long token', () => ({ authorization: `Bearer ${'a'.repeat(8000)}` })],
            ['a token with characters outside b64token', () => ({ authorization: 'Bearer ic_abc$def' })],
            ['a token with non-ASCII characters', () => ({ authorization: 'Bearer ic_ab\u00e7' })],
            ['another scheme word', () => ({ authorization: `Token ${p.apiKey}` })]
        ];

        describe('GET /v1/emails with a bad token', () => {
            let reference: string;

            before(async () => {
                const res = await p.server.inject({ url: '/v1/emails?inbox=auth' });
                reference = fingerprint(res);
                expect(res.statusCode).to.equal(401);
                expect(res.result).to.equal({ error: 'UNAUTHORIZED' });
                expect(res.headers['www-authenticate']).to.equal('Bearer');
            });

            for (const [name, headers] of BAD) {
                it(`answers the identical 401 for ${name}`, async () => {
                    const res = await p.server.inject({ url: '/v1/emails?inbox=auth', headers: headers() });
                    expect(res.statusCode).to.equal(401);
                    expect(res.result).to.equal({ error: 'UNAUTHORIZED' });
                    expect(fingerprint(res)).to.equal(reference);
                });
            }
        });

        it('ignores whitespace around the header value, as HTTP does', async () => {
            for (const authorization of [` Bearer ${p.apiKey}`, `Bearer ${p.apiKey} `, `\tBearer ${p.apiKey}\t`]) {
                const res = await p.server.inject({ url: '/v1/emails?inbox=auth', headers: { authorization } });
                expect(res.statusCode, JSON.stringify(authorization)).to.equal(200);
            }
        });

        describe('Bearer scheme word', () => {
            for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
                it(`accepts a valid key after "${scheme}"`, async () => {
                    const res = await p.server.inject({ url: '/v1/emails?inbox=auth', headers: { authorization: `${scheme} ${p.apiKey}` } });
                    expect(res.statusCode).to.equal(200);
                });
            }
        });

        describe('every protected endpoint', () => {
            const endpoints = (): Array<[string, string]> => {
                const id = encodeURIComponent(messageId);
                return [
                    ['GET', '/v1/emails?inbox=auth'],
                    ['DELETE', '/v1/emails?inbox=auth'],
                    ['GET', `/v1/emails/${id}`],
                    ['DELETE', `/v1/emails/${id}`],
                    ['GET', `/v1/emails/${id}/raw`],
                    ['GET', `/v1/emails/${id}/attachments/0-x.txt`]
                ];
            };

            it('answers 401 UNAUTHORIZED without a key, and changes nothing', async () => {
                for (const [method, url] of endpoints()) {
                    const res = await p.server.inject({ method, url });
                    expect(res.statusCode, `${method} ${url}`).to.equal(401);
                    expect(res.result).to.equal({ error: 'UNAUTHORIZED' });
                }

                expect(await p.api.capture.getEmail(messageId)).to.not.be.null();
            });

            it('answers 401 UNAUTHORIZED with a revoked key', async () => {
                for (const [method, url] of endpoints()) {
                    const res = await p.server.inject({ method, url, headers: { authorization: `Bearer ${revoked}` } });
                    expect(res.statusCode, `${method} ${url}`).to.equal(401);
                }

                expect(await p.api.capture.getEmail(messageId)).to.not.be.null();
            });
        });

        describe('precedence', () => {
            const INVALID: Array<[string, string]> = [
                ['no inbox', '/v1/emails'],
                ['an invalid inbox', '/v1/emails?inbox=UPPER'],
                ['an invalid limit', '/v1/emails?inbox=auth&limit=0'],
                ['an unknown parameter', '/v1/emails?inbox=auth&nope=1'],
                ['a bad cursor', '/v1/emails?inbox=auth&cursor=zzz'],
                ['no inbox on bulk delete', '/v1/emails']
            ];

            for (const [name, url] of INVALID) {
                it(`answers 401 before the validation error of ${name}`, async () => {
                    const method = name.includes('bulk delete') ? 'DELETE' : 'GET';
                    const res = await p.server.inject({ method, url, headers: { authorization: 'Bearer nope' } });
                    expect(res.statusCode).to.equal(401);
                    expect(res.result).to.equal({ error: 'UNAUTHORIZED' });
                });
            }

            it('answers 401 before 404 for an unknown email', async () => {
                const res = await p.server.inject({ url: '/v1/emails/unknown%40x' });
                expect(res.statusCode).to.equal(401);
            });
        });

        it('accepts a newly created key at once and refuses it once revoked', async () => {
            const key = await p.api.capture.createKey('fresh');
            const headers = { authorization: `Bearer ${key}` };
            expect((await p.server.inject({ url: '/v1/emails?inbox=auth', headers })).statusCode).to.equal(200);
            await p.api.capture.revokeKey('fresh');
            expect((await p.server.inject({ url: '/v1/emails?inbox=auth', headers })).statusCode).to.equal(401);
        });

        it('puts the key name in the credentials, never the token', async () => {
            let credentials: unknown;
            p.server.ext('onPostAuth', (request, h) => {
                if (request.path === '/v1/emails') {
                    credentials = request.auth.credentials;
                }

                return h.continue;
            });
            await p.server.inject({ url: '/v1/emails?inbox=auth', headers: p.auth });
            expect(JSON.stringify(credentials)).to.not.include(p.apiKey);
            expect(credentials).to.equal({ app: { keyName: (await p.api.capture.verifyKey(p.apiKey))!.name, scope: { inboxPrefix: null, readOnly: false } } });
        });
    });
}
