import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { ServerInjectOptions, ServerInjectResponse, ServerRoute } from '@hapi/hapi';
import { randomBytes } from 'node:crypto';
import { AUTH_STRATEGY } from '../../../adapters/hapi/auth-scheme';
import { assertAccessDeclared } from '../../../adapters/hapi/route-access';
import { buildMail } from '../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

// Every route of the plugin, walked with each kind of key (docs/api.md, "Keys with a scope").
// The table below holds the scope decision of each route: a route the plugin registers that
// the table does not name fails the first test, so a new route cannot ship undecided.

/** The kinds of caller: no key, and the four kinds of key. */
const KINDS = ['none', 'full', 'prefix', 'readOnly', 'prefixReadOnly'] as const;
type Kind = typeof KINDS[number];

/** The prefix of the prefix-scoped keys. */
const PREFIX = 'team-a-';

/**
 * Fresh mail for one request: an email inside the prefix and one outside, each with an
 * attachment; and the only two fault rules, one on an inbox inside the prefix, one outside.
 */
interface Fixture {
    inside: { id: string; inbox: string };
    outside: { id: string; inbox: string };
    /** A signed link to the inside email's raw message, made with the full key. */
    blobLink: string;
    faults: { inside: string; outside: string };
}

interface Case {
    name: string;
    request(f: Fixture): ServerInjectOptions;
    status: Record<Kind, number>;
    /** Further checks of a successful answer. */
    check?(res: ServerInjectResponse, kind: Kind, f: Fixture): void;
    /** The error code of a 400 answer. */
    badRequest?: string;
}

const FILENAME = '0-note.txt';
const enc = encodeURIComponent;

/** The same status for every caller. */
const anyone = (status: number): Record<Kind, number> => ({ none: status, full: status, prefix: status, readOnly: status, prefixReadOnly: status });
/** 401 without a key, else `status` for every key. */
const anyKey = (status: number): Record<Kind, number> => ({ ...anyone(status), none: 401 });
/** 401 without a key; per kind of key as given. */
const byKey = (full: number, prefix: number, readOnly: number, prefixReadOnly: number): Record<Kind, number> => ({ none: 401, full, prefix, readOnly, prefixReadOnly });

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

/** For each route (`METHOD path`), the requests that show its scope decision. */
const ROUTES: Record<string, Case[]> = {
    'GET /v1/emails': [
        { name: 'an inbox inside the prefix', request: (f) => ({ url: `/v1/emails?inbox=${f.inside.inbox}` }), status: anyKey(200) },
        { name: 'an inbox outside the prefix', request: (f) => ({ url: `/v1/emails?inbox=${f.outside.inbox}` }), status: byKey(200, 403, 200, 403) },
        { name: 'a long-poll outside the prefix', request: (f) => ({ url: `/v1/emails?inbox=${f.outside.inbox}&wait=true&timeout=1` }), status: byKey(200, 403, 200, 403) },
        { name: 'a malformed inbox (400 before 403)', request: () => ({ url: '/v1/emails?inbox=Other!' }), status: anyKey(400) },
        { name: 'a search outside the prefix', request: (f) => ({ url: `/v1/emails?inbox=${f.outside.inbox}&q=note` }), status: byKey(200, 403, 200, 403) },
        { name: 'a malformed search (400 before 403)', request: (f) => ({ url: `/v1/emails?inbox=${f.outside.inbox}&q=%22open` }), status: anyKey(400) }
    ],
    'DELETE /v1/emails': [
        { name: 'an inbox inside the prefix', request: (f) => ({ method: 'DELETE', url: `/v1/emails?inbox=${f.inside.inbox}` }), status: byKey(200, 200, 403, 403) },
        { name: 'an inbox outside the prefix', request: (f) => ({ method: 'DELETE', url: `/v1/emails?inbox=${f.outside.inbox}` }), status: byKey(200, 403, 403, 403) },
        { name: 'a malformed inbox (400 before 403)', request: () => ({ method: 'DELETE', url: '/v1/emails?inbox=Other!' }), status: anyKey(400) },
        {
            name: 'a search inside the prefix, matching its email',
            request: (f) => ({ method: 'DELETE', url: `/v1/emails?inbox=${f.inside.inbox}&q=filename:note` }),
            status: byKey(200, 200, 403, 403),
            check: (res) => expect(res.result).to.equal({ deleted: 1 })
        },
        {
            name: 'a search inside the prefix, matching nothing',
            request: (f) => ({ method: 'DELETE', url: `/v1/emails?inbox=${f.inside.inbox}&q=filename:nothing` }),
            status: byKey(200, 200, 403, 403),
            check: (res) => expect(res.result).to.equal({ deleted: 0 })
        },
        { name: 'a search outside the prefix', request: (f) => ({ method: 'DELETE', url: `/v1/emails?inbox=${f.outside.inbox}&q=filename:note` }), status: byKey(200, 403, 403, 403) },
        { name: 'a malformed search (400 before 403)', request: (f) => ({ method: 'DELETE', url: `/v1/emails?inbox=${f.inside.inbox}&q=%22open` }), status: anyKey(400) }
    ],
    'GET /v1/emails/{messageId}': [
        { name: 'an email inside the prefix', request: (f) => ({ url: `/v1/emails/${enc(f.inside.id)}` }), status: anyKey(200) },
        { name: 'an email outside the prefix', request: (f) => ({ url: `/v1/emails/${enc(f.outside.id)}` }), status: byKey(200, 404, 200, 404) }
    ],
    'DELETE /v1/emails/{messageId}': [
        { name: 'an email inside the prefix', request: (f) => ({ method: 'DELETE', url: `/v1/emails/${enc(f.inside.id)}` }), status: byKey(200, 200, 403, 403) },
        { name: 'an email outside the prefix', request: (f) => ({ method: 'DELETE', url: `/v1/emails/${enc(f.outside.id)}` }), status: byKey(200, 404, 403, 403) },
        { name: 'an unknown email (403 before 404)', request: () => ({ method: 'DELETE', url: '/v1/emails/nobody%40x' }), status: byKey(404, 404, 403, 403) }
    ],
    'PUT /v1/emails/{messageId}/tags': [
        {
            name: 'an email inside the prefix',
            request: (f) => ({ method: 'PUT', url: `/v1/emails/${enc(f.inside.id)}/tags`, payload: { tags: ['seen'] } }),
            status: byKey(200, 200, 403, 403),
            check: (res) => expect((res.result as { tags: string[] }).tags).to.equal(['seen'])
        },
        { name: 'an email outside the prefix', request: (f) => ({ method: 'PUT', url: `/v1/emails/${enc(f.outside.id)}/tags`, payload: { tags: ['seen'] } }), status: byKey(200, 404, 403, 403) },
        { name: 'an unknown email (403 before 404)', request: () => ({ method: 'PUT', url: '/v1/emails/nobody%40x/tags', payload: { tags: ['seen'] } }), status: byKey(404, 404, 403, 403) },
        { name: 'a body that is not tags (400 before 403)', request: (f) => ({ method: 'PUT', url: `/v1/emails/${enc(f.inside.id)}/tags`, payload: { tags: ['Not a tag!'] } }), status: anyKey(400) }
    ],
    'PUT /v1/emails/{messageId}/seen': [
        {
            name: 'an email inside the prefix',
            request: (f) => ({ method: 'PUT', url: `/v1/emails/${enc(f.inside.id)}/seen`, payload: { seen: true } }),
            status: byKey(200, 200, 403, 403),
            check: (res) => expect((res.result as { seen: boolean }).seen).to.be.true()
        },
        { name: 'an email outside the prefix', request: (f) => ({ method: 'PUT', url: `/v1/emails/${enc(f.outside.id)}/seen`, payload: { seen: true } }), status: byKey(200, 404, 403, 403) },
        { name: 'an unknown email (403 before 404)', request: () => ({ method: 'PUT', url: '/v1/emails/nobody%40x/seen', payload: { seen: true } }), status: byKey(404, 404, 403, 403) },
        { name: 'a body that is not a flag (400 before 403)', request: (f) => ({ method: 'PUT', url: `/v1/emails/${enc(f.inside.id)}/seen`, payload: { seen: 'yes' } }), status: anyKey(400) }
    ],
    'GET /v1/emails/{messageId}/checks/html': [
        { name: 'an email inside the prefix', request: (f) => ({ url: `/v1/emails/${enc(f.inside.id)}/checks/html` }), status: anyKey(200) },
        { name: 'an email outside the prefix', request: (f) => ({ url: `/v1/emails/${enc(f.outside.id)}/checks/html` }), status: byKey(200, 404, 200, 404) }
    ],
    'GET /v1/emails/{messageId}/headers': [
        { name: 'an email inside the prefix', request: (f) => ({ url: `/v1/emails/${enc(f.inside.id)}/headers` }), status: anyKey(200) },
        { name: 'an email outside the prefix', request: (f) => ({ url: `/v1/emails/${enc(f.outside.id)}/headers` }), status: byKey(200, 404, 200, 404) }
    ],
    'GET /v1/emails/{messageId}/raw': [
        { name: 'an email inside the prefix', request: (f) => ({ url: `/v1/emails/${enc(f.inside.id)}/raw` }), status: anyKey(302) },
        { name: 'an email outside the prefix', request: (f) => ({ url: `/v1/emails/${enc(f.outside.id)}/raw` }), status: byKey(302, 404, 302, 404) }
    ],
    'GET /v1/emails/{messageId}/attachments/{filename}': [
        { name: 'an email inside the prefix', request: (f) => ({ url: `/v1/emails/${enc(f.inside.id)}/attachments/${FILENAME}` }), status: anyKey(302) },
        { name: 'an email outside the prefix', request: (f) => ({ url: `/v1/emails/${enc(f.outside.id)}/attachments/${FILENAME}` }), status: byKey(302, 404, 302, 404) }
    ],
    'POST /v1/emails/{messageId}/release': [
        { name: 'an email inside the prefix', request: (f) => ({ method: 'POST', url: `/v1/emails/${enc(f.inside.id)}/release` }), status: byKey(200, 200, 403, 403) },
        { name: 'an email outside the prefix', request: (f) => ({ method: 'POST', url: `/v1/emails/${enc(f.outside.id)}/release` }), status: byKey(200, 404, 403, 403) },
        { name: 'an unknown email (403 before 404)', request: () => ({ method: 'POST', url: '/v1/emails/nobody%40x/release' }), status: byKey(404, 404, 403, 403) },
        {
            name: 'to an address the allow-list does not name (400 before 403)',
            request: (f) => ({ method: 'POST', url: `/v1/emails/${enc(f.inside.id)}/release`, payload: { to: ['someone@elsewhere.test'] } }),
            status: anyKey(400),
            badRequest: 'RECIPIENT_NOT_ALLOWED'
        },
        {
            name: 'a malformed body (400 before 403)',
            request: (f) => ({ method: 'POST', url: `/v1/emails/${enc(f.inside.id)}/release`, payload: { to: 'nobody' } }),
            status: anyKey(400),
            badRequest: 'VALIDATION_ERROR'
        }
    ],
    'GET /v1/emails/{messageId}/checks/auth': [
        { name: 'an email inside the prefix', request: (f) => ({ url: `/v1/emails/${enc(f.inside.id)}/checks/auth` }), status: anyKey(200) },
        { name: 'an email outside the prefix', request: (f) => ({ url: `/v1/emails/${enc(f.outside.id)}/checks/auth` }), status: byKey(200, 404, 200, 404) },
        { name: 'an unknown email', request: () => ({ url: '/v1/emails/nobody%40x/checks/auth' }), status: anyKey(404) }
    ],
    'POST /v1/emails/{messageId}/checks/links': [
        { name: 'an email inside the prefix', request: (f) => ({ method: 'POST', url: `/v1/emails/${enc(f.inside.id)}/checks/links` }), status: anyKey(200) },
        { name: 'an email outside the prefix', request: (f) => ({ method: 'POST', url: `/v1/emails/${enc(f.outside.id)}/checks/links` }), status: byKey(200, 404, 200, 404) },
        { name: 'an unknown email', request: () => ({ method: 'POST', url: '/v1/emails/nobody%40x/checks/links' }), status: anyKey(404) }
    ],
    'POST /v1/emails': [
        {
            name: 'an email to an inbox inside the prefix',
            request: () => ({ method: 'POST', url: '/v1/emails', payload: { from: 'a@x.test', to: `${PREFIX}sent@x.test`, subject: 'in' } }),
            status: byKey(201, 201, 403, 403)
        },
        {
            name: 'a raw email with one recipient outside the prefix',
            request: () => ({ method: 'POST', url: `/v1/emails?to=${PREFIX}sent@x.test,other-sent@x.test`, headers: { 'content-type': 'message/rfc822' }, payload: 'From: a@x.test\r\nSubject: out\r\n\r\nhi\r\n' }),
            status: byKey(201, 403, 403, 403)
        },
        {
            name: 'a body without a sender (400 before 403)',
            request: () => ({ method: 'POST', url: '/v1/emails', payload: { to: 'other@x.test', subject: 'bad' } }),
            status: anyKey(400),
            badRequest: 'VALIDATION_ERROR'
        }
    ],
    'POST /v1/faults': [
        {
            name: 'a rule on an inbox inside the prefix',
            request: () => ({ method: 'POST', url: '/v1/faults', payload: { stage: 'rcpt', match: { inbox: `${PREFIX}flaky` }, reply: { code: 451 } } }),
            status: byKey(201, 201, 403, 403)
        },
        {
            name: 'a rule on an inbox outside the prefix',
            request: () => ({ method: 'POST', url: '/v1/faults', payload: { stage: 'data', match: { inbox: 'other-flaky', sender: `${PREFIX}` }, reply: { code: 451 } } }),
            status: byKey(201, 403, 403, 403)
        },
        {
            name: 'a rule on every inbox (a recipient, not an inbox)',
            request: () => ({ method: 'POST', url: '/v1/faults', payload: { stage: 'rcpt', match: { recipient: `${PREFIX}flaky@` }, reply: { code: 451 } } }),
            status: byKey(201, 403, 403, 403)
        },
        { name: 'a connect rule (every session)', request: () => ({ method: 'POST', url: '/v1/faults', payload: { stage: 'connect', reply: { code: 421 } } }), status: byKey(201, 403, 403, 403) },
        {
            name: 'a malformed rule (400 before 403)',
            request: () => ({ method: 'POST', url: '/v1/faults', payload: { stage: 'connect', match: { inbox: `${PREFIX}x` }, reply: { code: 421 } } }),
            status: anyKey(400),
            badRequest: 'VALIDATION_ERROR'
        }
    ],
    'GET /v1/faults': [
        {
            name: 'the rules',
            request: () => ({ url: '/v1/faults' }),
            status: anyKey(200),
            check(res, kind, f) {
                const scoped = kind === 'prefix' || kind === 'prefixReadOnly';
                // Sorted: two rules made in the same millisecond have no order of their own.
                const ids = (res.result as { faults: Array<{ id: string }> }).faults.map((rule) => rule.id).sort();
                expect(ids).to.equal(scoped ? [f.faults.inside] : [f.faults.inside, f.faults.outside].sort());
            }
        }
    ],
    'DELETE /v1/faults/{id}': [
        { name: 'a rule inside the prefix', request: (f) => ({ method: 'DELETE', url: `/v1/faults/${f.faults.inside}` }), status: byKey(200, 200, 403, 403) },
        { name: 'a rule outside the prefix', request: (f) => ({ method: 'DELETE', url: `/v1/faults/${f.faults.outside}` }), status: byKey(200, 404, 403, 403) },
        { name: 'an unknown rule (403 before 404)', request: () => ({ method: 'DELETE', url: `/v1/faults/${'x'.repeat(100)}` }), status: byKey(404, 404, 403, 403) }
    ],
    'DELETE /v1/faults': [
        {
            name: 'every rule the key sees',
            request: () => ({ method: 'DELETE', url: '/v1/faults' }),
            status: byKey(200, 200, 403, 403),
            check(res, kind) {
                expect(res.result).to.equal({ deleted: kind === 'prefix' ? 1 : 2 });
            }
        }
    ],
    'GET /v1/blobs/{key}': [
        // The signed link is the credential: scope was decided when the link was made (by /raw above).
        { name: 'a signed link', request: (f) => ({ url: f.blobLink }), status: anyone(200) }
    ],
    'GET /v1/inboxes': [
        {
            name: 'every inbox',
            request: () => ({ url: '/v1/inboxes?limit=100' }),
            status: anyKey(200),
            check(res, kind, f) {
                const names = (res.result as { inboxes: Array<{ name: string }> }).inboxes.map((i) => i.name);
                expect(names).to.include(f.inside.inbox);
                const scoped = kind === 'prefix' || kind === 'prefixReadOnly';
                expect(names.includes(f.outside.inbox)).to.equal(!scoped);
                if (scoped) {
                    expect(names.every((name) => name.startsWith(PREFIX))).to.be.true();
                }
            }
        },
        {
            name: 'a prefix outside the key\'s',
            request: () => ({ url: '/v1/inboxes?prefix=other-' }),
            status: anyKey(200),
            check(res, kind) {
                const scoped = kind === 'prefix' || kind === 'prefixReadOnly';
                expect((res.result as { inboxes: unknown[] }).inboxes.length === 0).to.equal(scoped);
            }
        }
    ],
    'GET /v1/keys/current': [
        {
            name: 'the calling key',
            request: () => ({ url: '/v1/keys/current' }),
            status: anyKey(200),
            check(res, kind) {
                expect(res.result).to.equal({
                    name: kind,
                    inboxPrefix: kind === 'prefix' || kind === 'prefixReadOnly' ? PREFIX : null,
                    readOnly: kind === 'readOnly' || kind === 'prefixReadOnly'
                });
            }
        }
    ],
    'POST /mcp': [
        {
            name: 'tools/list (each tool decides, see test/adapters/hapi/routes/mcp.ts)',
            request: () => ({ method: 'POST', url: '/mcp', headers: MCP_HEADERS, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }),
            status: anyKey(200),
            check(res) {
                expect(res.payload).to.contain('"wait_for_email"');
            }
        }
    ],
    'GET /mcp': [{ name: 'a stream of its own (stateless: none)', request: () => ({ url: '/mcp', headers: MCP_HEADERS }), status: anyKey(405) }],
    'DELETE /mcp': [{ name: 'a session end (stateless: none)', request: () => ({ method: 'DELETE', url: '/mcp' }), status: anyKey(405) }],
    'GET /health': [{ name: 'public', request: () => ({ url: '/health' }), status: anyone(200) }],
    'GET /version': [{ name: 'public', request: () => ({ url: '/version' }), status: anyone(200) }],
    'GET /openapi.json': [{ name: 'public', request: () => ({ url: '/openapi.json' }), status: anyone(200) }],
    'GET /docs': [{ name: 'public', request: () => ({ url: '/docs' }), status: anyone(200) }],
    'GET /docs/{file}': [{ name: 'public', request: () => ({ url: '/docs/init.js' }), status: anyone(200) }],
    'GET /ui': [{ name: 'public, a redirect to /ui/ (its data comes through the API with the person\'s key)', request: () => ({ url: '/ui' }), status: anyone(302) }],
    'GET /ui/{path*}': [{ name: 'public', request: () => ({ url: '/ui/ui.css' }), status: anyone(200) }],
    '* /v1/{any*}': [{ name: 'an unknown path', request: () => ({ url: '/v1/nothing-here' }), status: anyone(404) }]
};

describe('route access', () => {

    let p: ProvisionedServer;
    let sink: SmtpSink;
    const keys: Record<Kind, Record<string, string>> = { none: {}, full: {}, prefix: {}, readOnly: {}, prefixReadOnly: {} };

    before(async () => {
        // A relay that takes the fixture's mail, so a release shows its scope decision, not a 409;
        // the link check on, so that it shows its own, not a 403. The authentication check asks a
        // loopback port nobody serves: each lookup is refused at once (only its access is looked at here).
        sink = await startSmtpSink();
        p = await provisionServer({ plugin: { relay: { url: sink.url(), allow: ['*@x.test'] }, linkCheck: { allow: ['127.0.0.1/32'] }, authCheck: { dnsServers: ['127.0.0.1:9'] } } });
        const { capture } = p.api;
        const scopes: Record<Exclude<Kind, 'none'>, { inboxPrefix?: string; readOnly?: boolean }> = {
            full: {},
            prefix: { inboxPrefix: PREFIX },
            readOnly: { readOnly: true },
            prefixReadOnly: { inboxPrefix: PREFIX, readOnly: true }
        };
        for (const [kind, scope] of Object.entries(scopes)) {
            keys[kind as Kind] = { authorization: `Bearer ${await capture.createKey(kind, scope)}` };
        }
    });

    after(async () => {
        await p?.cleanup();
        await sink?.close();
    });

    // Fault rules only for the routes of fault rules: a create or delete waits the service's
    // refresh interval (docs/api.md, "Faults"), a few seconds over the whole table.
    const fixture = async (route: string): Promise<Fixture> => {
        const tag = randomBytes(4).toString('hex');
        const [inside] = await p.api.ingestForApi(buildMail({ to: `${PREFIX}${tag}@x.test`, attachments: [{ filename: 'note.txt', contentType: 'text/plain', content: 'inside' }] }));
        const [outside] = await p.api.ingestForApi(buildMail({ to: `other-${tag}@x.test`, attachments: [{ filename: 'note.txt', contentType: 'text/plain', content: 'outside' }] }));
        const raw = await p.server.inject({ url: `/v1/emails/${enc(inside!.messageId)}/raw`, headers: keys.full });
        let rules = { inside: 'no-rule-made', outside: 'no-rule-made' };
        if (route.includes(' /v1/faults')) {
            const { faults } = p.api.capture;
            await faults.deleteAll();
            const insideRule = await faults.create({ stage: 'rcpt', match: { inbox: `${PREFIX}${tag}` }, reply: { code: 451 } });
            const outsideRule = await faults.create({ stage: 'rcpt', match: { inbox: `other-${tag}` }, reply: { code: 451 } });
            rules = { inside: insideRule.id, outside: outsideRule.id };
        }

        return {
            inside: { id: inside!.messageId, inbox: inside!.inbox },
            outside: { id: outside!.messageId, inbox: outside!.inbox },
            blobLink: raw.headers.location as string,
            faults: rules
        };
    };

    it('has a scope decision for every route the plugin registers', () => {
        const registered = p.server.table().map((route) => `${route.method.toUpperCase()} ${route.path}`).sort();
        expect(registered).to.equal(Object.keys(ROUTES).sort());
    });

    for (const [route, cases] of Object.entries(ROUTES)) {
        describe(route, () => {
            for (const test of cases) {
                it(`${test.name}: ${KINDS.map((kind) => `${kind} ${test.status[kind]}`).join(', ')}`, async () => {
                    // A read changes nothing: one fixture serves every key. A write gets a fresh one per key.
                    const reads = route.startsWith('GET ');
                    const shared = reads ? await fixture(route) : undefined;
                    for (const kind of KINDS) {
                        const f = shared ?? await fixture(route);
                        const options = test.request(f);
                        const res = await p.server.inject({ ...options, headers: { ...options.headers as Record<string, string>, ...keys[kind] } });
                        expect(res.statusCode, `${kind}: ${res.payload.slice(0, 200)}`).to.equal(test.status[kind]);
                        if (res.statusCode === 401) {
                            expect(res.result).to.equal({ error: 'UNAUTHORIZED' });
                        }

                        if (res.statusCode === 403) {
                            expect(res.result).to.equal({ error: 'FORBIDDEN' });
                        }

                        if (res.statusCode === 400 && test.badRequest) {
                            expect(res.result, kind).to.equal({ error: test.badRequest });
                        }

                        if (res.statusCode < 300) {
                            test.check?.(res, kind, f);
                        }
                    }
                });
            }
        });
    }

    describe('assertAccessDeclared()', () => {

        const keyed = (plugins?: object): ServerRoute => ({ method: 'GET', path: '/v1/new', options: { auth: { strategy: AUTH_STRATEGY, mode: 'required' }, plugins }, handler: () => null });

        it('throws for a route behind the API key that declares no access', () => {
            expect(() => assertAccessDeclared([keyed()])).to.throw(/GET \/v1\/new needs an API key but declares no access/);
        });

        it('accepts declared routes and public ones', () => {
            expect(() => assertAccessDeclared([
                keyed({ 'inbox-capture': { access: 'read' } }),
                { method: 'GET', path: '/public', options: { auth: false }, handler: () => null }
            ])).to.not.throw();
        });
    });
});
