import { randomBytes } from 'node:crypto';
import * as Http from 'node:http';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Nodemailer from 'nodemailer';
import { guardKeyLookup, MAX_CONCURRENT_KEY_LOOKUPS, REJECTED_TOKEN_TTL_MS } from '../../adapters/hapi/auth-scheme';
import { DEFAULT_CSP } from '../../adapters/hapi/response-ext';
import { createSmtpListener } from '../../adapters/smtp';
import { hashApiKey } from '../../lib/service/keys';
import type { RecordStore } from '../../lib/record-store/record-store';
import type { ApiKeyInfo } from '../../lib/types';
import { buildMail } from '../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../helpers/provision-server';
import { postgresS3Stores, sqliteFsStores, type StoreFactory, type TestStores } from '../helpers/test-stores';
import { rawRequest, type RawResponse } from '../helpers/raw-http';
import { RawSmtpSession } from '../helpers/raw-smtp';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** Requests of a burst. */
const BURST = 1000;
/** Requests the well-behaved client makes while the burst runs, one after another. */
const GOOD_REQUESTS = 20;
/** Sockets the flooding client keeps open at once. */
const FLOOD_SOCKETS = 100;

/** The record store's key lookups, as the wrapped store saw them. */
interface LookupCounter {
    /** Calls per key hash. */
    calls: Map<string, number>;
    /** Lookups running right now, and the most that ever ran at once. */
    active: number;
    maxActive: number;
    /** Hashes whose lookup throws (a broken database), with the hash in the message as a driver's would be. */
    poisoned: Set<string>;
}

/** The real store with its key lookup counted: how many, for which hash, how many at once. */
function countLookups(store: RecordStore): { store: RecordStore; counter: LookupCounter } {
    const counter: LookupCounter = { calls: new Map(), active: 0, maxActive: 0, poisoned: new Set() };
    return {
        counter,
        store: {
            ...store,
            async findActiveKeyByHash(hashHex) {
                counter.calls.set(hashHex, (counter.calls.get(hashHex) ?? 0) + 1);
                counter.active++;
                counter.maxActive = Math.max(counter.maxActive, counter.active);
                try {
                    if (counter.poisoned.has(hashHex)) {
                        throw new Error(`select * from api_keys where key_hash = '${hashHex}': connection terminated`);
                    }

                    return await store.findActiveKeyByHash(hashHex);
                }
                finally {
                    counter.active--;
                }
            }
        }
    };
}

/** A token that looks like ours and matches no key. */
function unknownToken(): string {
    return `ic_${randomBytes(32).toString('base64url')}`;
}

/** A server on `stores` with counted key lookups and one email in inbox `good`. */
interface Rig {
    provisioned: ProvisionedServer;
    stores: TestStores;
    counter: LookupCounter;
    port: number;
    cleanup(): Promise<void>;
}

async function startRig(factory: StoreFactory): Promise<Rig> {
    const stores = await factory.create();
    const { store, counter } = countLookups(stores.recordStore);
    let provisioned: ProvisionedServer;
    try {
        provisioned = await provisionServer({ recordStore: store, blobStore: stores.blobStore, listen: true });
    }
    catch (err) {
        await stores.cleanup();
        throw err;
    }

    await provisioned.api.ingestForApi(buildMail({ subject: 'for the good client' }), { recipients: ['good@example.test'] });
    return {
        provisioned,
        stores,
        counter,
        port: provisioned.server.info.port as number,
        async cleanup() {
            await provisioned.cleanup();
            await stores.cleanup();
        }
    };
}

/** The well-behaved client: `GOOD_REQUESTS` list requests in a row with a valid key. */
async function goodClient(rig: Rig): Promise<RawResponse[]> {
    const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
        const responses: RawResponse[] = [];
        for (let i = 0; i < GOOD_REQUESTS; i++) {
            responses.push(await rawRequest(rig.port, '/v1/emails?inbox=good', { headers: rig.provisioned.auth, agent }));
        }

        return responses;
    }
    finally {
        agent.destroy();
    }
}

/** `BURST` list requests at once from one client, the token of request `i` from `tokenOf(i)`. */
async function burst(rig: Rig, tokenOf: (i: number) => string): Promise<RawResponse[]> {
    const agent = new Http.Agent({ keepAlive: true, maxSockets: FLOOD_SOCKETS });
    try {
        return await Promise.all(Array.from({ length: BURST }, (_, i) => rawRequest(rig.port, '/v1/emails?inbox=good', {
            headers: { authorization: `Bearer ${tokenOf(i)}` },
            agent
        })));
    }
    finally {
        agent.destroy();
    }
}

function expectGoodServed(responses: RawResponse[]): void {
    expect(responses).to.have.length(GOOD_REQUESTS);
    for (const res of responses) {
        expect(res.statusCode).to.equal(200);
        const page = JSON.parse(res.body.toString('utf8')) as { emails: Array<{ subject: string }> };
        expect(page.emails.map((e) => e.subject)).to.equal(['for the good client']);
    }
}

function expectAllUnauthorized(responses: RawResponse[]): void {
    expect(responses).to.have.length(BURST);
    for (const res of responses) {
        expect(res.statusCode).to.equal(401);
        expect(JSON.parse(res.body.toString('utf8'))).to.equal({ error: 'UNAUTHORIZED' });
    }
}

/**
 * Everything in a logged value as text: errors with their message, stack and own
 * fields, buffers as latin1 (a token in raw bytes shows), nested objects walked.
 */
function textOf(value: unknown, seen = new Set<unknown>()): string {
    if (value === null || value === undefined) {
        return '';
    }

    if (typeof value !== 'object') {
        return String(value);
    }

    if (seen.has(value)) {
        return '';
    }

    seen.add(value);
    if (Buffer.isBuffer(value)) {
        return value.toString('latin1');
    }

    const parts: string[] = [];
    if (value instanceof Error) {
        parts.push(value.message, value.stack ?? '', textOf(value.cause, seen));
    }

    for (const key of Object.keys(value)) {
        parts.push(key, textOf((value as Record<string, unknown>)[key], seen));
    }

    return parts.join('\n');
}

describe('abuse', () => {

    describe('guardKeyLookup()', () => {

        const KEY: ApiKeyInfo = { name: 'good', createdAt: 0, revokedAt: null, inboxPrefix: null, readOnly: false };

        /** A lookup that knows the token `good`, counts its calls and can be held open. */
        const fakeLookup = () => {
            const calls: string[] = [];
            let hold: Promise<void> | null = null;
            let failWith: Error | null = null;
            return {
                calls,
                holdUntil(promise: Promise<void>) {
                    hold = promise;
                },
                failWith(err: Error | null) {
                    failWith = err;
                },
                lookup: async (token: string) => {
                    calls.push(token);
                    await hold;
                    if (failWith) {
                        throw failWith;
                    }

                    return token === 'good' ? KEY : null;
                }
            };
        };

        it('asks again once the rejection has expired', async () => {
            let clock = 0;
            const fake = fakeLookup();
            const verify = guardKeyLookup(fake.lookup, { rejectedTtlMs: 1000, now: () => clock });
            expect(await verify('bad')).to.be.null();
            clock = 999;
            expect(await verify('bad')).to.be.null();
            expect(fake.calls).to.equal(['bad']);
            clock = 1000;
            expect(await verify('bad')).to.be.null();
            expect(fake.calls).to.equal(['bad', 'bad']);
        });

        it('never remembers a valid key or a failed lookup', async () => {
            const fake = fakeLookup();
            const verify = guardKeyLookup(fake.lookup);
            expect(await verify('good')).to.equal(KEY);
            expect(await verify('good')).to.equal(KEY);
            fake.failWith(new Error('database down'));
            await expect(verify('other')).to.reject('database down');
            fake.failWith(null);
            expect(await verify('other')).to.be.null();
            expect(fake.calls).to.equal(['good', 'good', 'other', 'other']);
        });

        it('forgets the oldest rejection when full', async () => {
            const fake = fakeLookup();
            const verify = guardKeyLookup(fake.lookup, { maxRejected: 2 });
            for (const token of ['a', 'b', 'c', 'b', 'c', 'a']) {
                await verify(token);
            }

            // `a` was pushed out by `c`, so it is looked up again; `b` and `c` are remembered.
            expect(fake.calls).to.equal(['a', 'b', 'c', 'a']);
        });

        it('shares one lookup among concurrent requests for a token and runs at most maxConcurrent at once', async () => {
            const fake = fakeLookup();
            let open!: () => void;
            fake.holdUntil(new Promise((resolve) => {
                open = resolve;
            }));
            const verify = guardKeyLookup(fake.lookup, { maxConcurrent: 2 });
            const same = Array.from({ length: 10 }, () => verify('bad'));
            const distinct = ['x', 'y', 'z'].map((t) => verify(t));
            await new Promise((resolve) => setImmediate(resolve));
            // One for the ten `bad`s, one for `x`; `y` and `z` wait for a slot.
            expect(fake.calls).to.equal(['bad', 'x']);
            open();
            expect(await Promise.all([...same, ...distinct])).to.equal(Array(13).fill(null));
            expect(fake.calls).to.equal(['bad', 'x', 'y', 'z']);
        });
    });

    for (const factory of [sqliteFsStores(), postgresS3Stores()]) {
        describe(`bad tokens on ${factory.name}`, () => {

            let rig: Rig;

            before(async () => {
                rig = await startRig(factory);
            });

            after(async () => {
                await rig?.cleanup();
            });

            it(`${BURST} requests with one bad token cost one key lookup, and a well-behaved client is served throughout`, { timeout: 60_000 }, async () => {
                const bad = unknownToken();
                const started = Date.now();
                const [flood, good] = await Promise.all([burst(rig, () => bad), goodClient(rig)]);
                const elapsed = Date.now() - started;
                expectAllUnauthorized(flood);
                expectGoodServed(good);
                // Concurrent requests share one lookup; afterwards the rejection is remembered for
                // REJECTED_TOKEN_TTL_MS. Only a burst outlasting that could cost another.
                expect(rig.counter.calls.get(hashApiKey(bad))).to.equal(1 + Math.floor(elapsed / REJECTED_TOKEN_TTL_MS));
            });

            it(`${BURST} distinct bad tokens never run more than ${MAX_CONCURRENT_KEY_LOOKUPS} key lookups at once, and a well-behaved client is served throughout`, { timeout: 60_000 }, async () => {
                const tokens = Array.from({ length: BURST }, unknownToken);
                rig.counter.maxActive = 0;
                const [flood, good] = await Promise.all([burst(rig, (i) => tokens[i]), goodClient(rig)]);
                expectAllUnauthorized(flood);
                expectGoodServed(good);
                // Each distinct token is looked up (none is known), but never more than the cap at
                // once: the pool (10 connections on Postgres, 1 on SQLite) keeps room for everything else.
                for (const token of tokens) {
                    expect(rig.counter.calls.get(hashApiKey(token))).to.equal(1);
                }

                expect(rig.counter.maxActive).to.be.at.least(1);
                expect(rig.counter.maxActive).to.be.at.most(MAX_CONCURRENT_KEY_LOOKUPS);
            });

            it('still checks a key at once after it is revoked (only failures are remembered)', async () => {
                const { capture } = rig.provisioned.api;
                const key = await capture.createKey(`revoke-${randomBytes(4).toString('hex')}`);
                const headers = { authorization: `Bearer ${key}` };
                expect((await rawRequest(rig.port, '/v1/emails?inbox=good', { headers })).statusCode).to.equal(200);
                await capture.revokeKey((await capture.verifyKey(key))!.name);
                expect((await rawRequest(rig.port, '/v1/emails?inbox=good', { headers })).statusCode).to.equal(401);
            });
        });
    }

    describe('logs', () => {

        it('never contain a token, valid, unknown, revoked, malformed or misplaced, nor an SMTP password', { timeout: 60_000 }, async () => {
            const rig = await startRig(sqliteFsStores());
            const smtpPassword = `smtp-${randomBytes(12).toString('hex')}`;
            const wrongPassword = `wrong-${randomBytes(12).toString('hex')}`;
            const logged: unknown[] = [];
            const smtp = createSmtpListener({
                capture: rig.provisioned.api.capture,
                port: 0,
                auth: { users: { app: smtpPassword } },
                allowInsecureAuth: true,
                log: (message, error) => logged.push({ message, error })
            });
            try {
                const { server, api, apiKey } = rig.provisioned;
                // Every channel: 'app', 'internal' and 'error'.
                server.events.on('log', (event) => logged.push(event));
                server.events.on('request', (_request, event) => logged.push(event));

                const revoked = await api.capture.createKey('to-revoke');
                await api.capture.revokeKey('to-revoke');
                const unknown = unknownToken();
                const poison = unknownToken();
                rig.counter.poisoned.add(hashApiKey(poison));
                const tokens = { valid: apiKey, revoked, unknown, poison };

                const request = (path: string, headers: Record<string, string>, method = 'GET') => rawRequest(rig.port, path, { method, headers });
                const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
                const listed = await request('/v1/emails?inbox=good', bearer(apiKey));
                expect(listed.statusCode).to.equal(200);
                const email = (JSON.parse(listed.body.toString('utf8')) as { emails: Array<{ messageId: string; rawUrl: string }> }).emails[0];

                const statuses = [
                    (await request(email.rawUrl, bearer(apiKey))).statusCode,
                    (await request('/v1/emails/nothing%40here', bearer(apiKey))).statusCode,
                    (await request('/v1/emails?inbox=BAD', bearer(apiKey))).statusCode,
                    // Misplaced: in the query string and the path, where a confused client might put it.
                    (await request(`/v1/emails?inbox=good&token=${apiKey}`, bearer(apiKey))).statusCode,
                    (await request(`/v1/emails/${apiKey}`, bearer(apiKey))).statusCode,
                    (await request('/v1/emails?inbox=good', bearer(revoked))).statusCode,
                    (await request('/v1/emails?inbox=good', bearer(unknown))).statusCode,
                    (await request('/v1/emails?inbox=good', { authorization: `Bearer ${apiKey}!` })).statusCode,
                    (await request('/v1/emails?inbox=good', { authorization: `Basic ${Buffer.from(`u:${apiKey}`).toString('base64')}` })).statusCode,
                    // The key store fails while looking up a token: a 500 or 503 with its cause logged.
                    (await request('/v1/emails?inbox=good', bearer(poison))).statusCode,
                    // Too big to parse: Node hands hapi the raw request head, key included, and hapi logs it.
                    (await request('/v1/emails?inbox=good', { ...bearer(apiKey), 'x-padding': 'p'.repeat(20 * 1024) })).statusCode
                ];
                expect(statuses).to.equal([302, 404, 400, 400, 404, 401, 401, 401, 401, 500, 400]);
                expect((await request(`/v1/emails/${encodeURIComponent(email.messageId)}`, bearer(apiKey), 'DELETE')).statusCode).to.equal(200);

                // SMTP: a good and a wrong password, and a message stored.
                const { port } = await smtp.listen();
                const { session } = await RawSmtpSession.open(port);
                await session.command('EHLO logs.test');
                expect((await session.command(`AUTH PLAIN ${Buffer.from(`\0app\0${wrongPassword}`).toString('base64')}`)).code).to.equal(535);
                await session.end();
                const transport = Nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, auth: { user: 'app', pass: smtpPassword } });
                await transport.sendMail({ from: 'app@example.test', to: 'good@example.test', subject: 'with auth', text: 'hi' });
                transport.close();

                const text = logged.map((event) => textOf(event));
                // The run did log: errors with their causes, the parse error with its raw bytes.
                expect(text.some((t) => t.includes('connection terminated'))).to.be.true();
                expect(text.some((t) => t.includes('HPE_HEADER_OVERFLOW'))).to.be.true();
                for (const [name, token] of Object.entries({ ...tokens, smtpPassword, wrongPassword })) {
                    for (const [i, entry] of text.entries()) {
                        expect(entry.includes(token), `${name} token in log event ${i}: ${entry.slice(0, 200)}`).to.be.false();
                    }
                }
            }
            finally {
                await smtp.close();
                await rig.cleanup();
            }
        });
    });

    describe('security headers', () => {

        let rig: Rig;
        let provisioned: ProvisionedServer;
        let email: { rawUrl: string; attachments: Array<{ url: string }> };
        // A token whose lookup fails, for a 500.
        const poison = unknownToken();

        before(async () => {
            rig = await startRig(sqliteFsStores());
            rig.counter.poisoned.add(hashApiKey(poison));
            provisioned = rig.provisioned;
            const [view] = await provisioned.api.ingestForApi(buildMail({
                subject: 'headers',
                attachments: [{ filename: 'page.html', contentType: 'text/html', content: '<script>alert(1)</script>' }]
            }), { recipients: ['headers@example.test'] });
            email = view;
        });

        after(async () => {
            await rig?.cleanup();
        });

        const inject = (url: string, auth: boolean | Record<string, string> = true, method = 'GET') => provisioned.server.inject({
            method,
            url,
            headers: auth === true ? provisioned.auth : auth === false ? {} : auth
        });
        const download = async (url: string) => inject(String((await inject(url)).headers.location), false);

        const CASES: Array<{ name: string; status: number; request: () => ReturnType<typeof inject> }> = [
            { name: 'the /docs page', status: 200, request: () => inject('/docs', false) },
            { name: 'a /docs asset', status: 200, request: () => inject('/docs/swagger-ui.css', false) },
            { name: 'the /docs init script', status: 200, request: () => inject('/docs/init.js', false) },
            { name: '/openapi.json', status: 200, request: () => inject('/openapi.json', false) },
            { name: '/health', status: 200, request: () => inject('/health', false) },
            { name: '/version', status: 200, request: () => inject('/version', false) },
            { name: 'a 200 list', status: 200, request: () => inject('/v1/emails?inbox=headers') },
            { name: 'a 302 download redirect', status: 302, request: () => inject(email.rawUrl) },
            { name: 'a served raw download', status: 200, request: () => download(email.rawUrl) },
            { name: 'a served HTML attachment', status: 200, request: () => download(email.attachments[0].url) },
            { name: 'a 400', status: 400, request: () => inject('/v1/emails?inbox=BAD') },
            { name: 'a 401', status: 401, request: () => inject('/v1/emails?inbox=headers', false) },
            { name: 'a 403', status: 403, request: () => inject('/v1/blobs/x?expires=1&filename=a&type=b&sig=c', false) },
            { name: 'a 404', status: 404, request: () => inject('/v1/emails/missing%40example.test') },
            { name: 'a 500', status: 500, request: () => inject('/v1/emails?inbox=headers', { authorization: `Bearer ${poison}` }) },
            { name: 'a 404 for an unknown /v1 path', status: 404, request: () => inject('/v1/nothing', false) },
            { name: 'a 405 for a method the path does not have', status: 405, request: () => inject('/v1/emails?inbox=headers', true, 'PATCH') }
        ];

        for (const c of CASES) {
            it(`${c.name} stops sniffing and framing`, async () => {
                const res = await c.request();
                expect(res.statusCode).to.equal(c.status);
                expect(res.headers['x-content-type-options']).to.equal('nosniff');
                expect(res.headers['x-frame-options']).to.equal('DENY');
                expect(String(res.headers['content-security-policy'])).to.include('frame-ancestors \'none\'');
            });
        }

        it('gives JSON the strict default policy and keeps the docs page\'s own', async () => {
            expect((await inject('/health', false)).headers['content-security-policy']).to.equal(DEFAULT_CSP);
            expect((await inject('/v1/emails?inbox=headers', false)).headers['content-security-policy']).to.equal(DEFAULT_CSP);
            expect((await inject('/docs', false)).headers['content-security-policy']).to.include('script-src \'self\'');
        });

        it('leaves the host\'s own routes alone', async () => {
            provisioned.server.route({ method: 'GET', path: '/host', handler: () => 'host' });
            const res = await inject('/host', false);
            expect(res.statusCode).to.equal(200);
            expect(res.headers['x-frame-options']).to.be.undefined();
            expect(res.headers['content-security-policy']).to.be.undefined();
        });
    });
});
