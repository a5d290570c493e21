import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { ERROR_DETAIL_HEADER } from '../../../adapters/error-detail/detail-line';
import { buildMail } from '../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const DETAIL = ERROR_DETAIL_HEADER.toLowerCase();

/** One request over real HTTP and what must come back: status, code and the detail header, exactly. */
interface Case {
    name: string;
    method?: string;
    path: string;
    body?: string;
    contentType?: string;
    key?: 'full' | 'scoped' | 'readOnly';
    status: number;
    code: string;
    detail: string;
}

const CASES: Case[] = [
    { name: 'a timeout out of range', path: '/v1/emails?inbox=orders&wait=true&timeout=60', status: 400, code: 'VALIDATION_ERROR', detail: 'timeout: must be an integer from 1 to 28' },
    { name: 'a date the search cannot read', path: '/v1/emails?inbox=orders&q=after:yesterday', status: 400, code: 'VALIDATION_ERROR', detail: 'q: after:yesterday is not a date (Unix ms or ISO 8601)' },
    { name: 'an unclosed quote', path: `/v1/emails?inbox=orders&q=${encodeURIComponent('subject:"unclosed')}`, status: 400, code: 'VALIDATION_ERROR', detail: 'q: unclosed quote at character 9' },
    { name: 'an unknown has:', path: '/v1/emails?inbox=orders&q=has:html', status: 400, code: 'VALIDATION_ERROR', detail: 'q: has:html is not a known has: value (attachment, link, code)' },
    { name: 'an empty from:', path: '/v1/emails?inbox=orders&q=from:', status: 400, code: 'VALIDATION_ERROR', detail: 'q: from: needs a value' },
    { name: 'a search on bulk delete', method: 'DELETE', path: '/v1/emails?inbox=orders&q=larger:big', status: 400, code: 'VALIDATION_ERROR', detail: 'q: larger:big is not a size (bytes, or a number with K or M)' },
    { name: 'an unknown parameter', path: '/v1/emails?inbox=orders&inbx=x', status: 400, code: 'VALIDATION_ERROR', detail: 'inbx: is not a parameter of this endpoint' },
    { name: 'a cursor not of this list', path: '/v1/emails?inbox=orders&cursor=nope', status: 400, code: 'VALIDATION_ERROR', detail: 'cursor: "nope" is not a cursor of this list (pass nextCursor as it came, with # as %23)' },
    { name: 'wait not a boolean', path: '/v1/emails?inbox=orders&wait=yes', status: 400, code: 'VALIDATION_ERROR', detail: 'wait: must be true or false' },
    { name: 'an uppercase inbox', path: '/v1/emails?inbox=Orders', status: 400, code: 'INVALID_INBOX', detail: 'inbox: "Orders" has uppercase letters; inbox names are lowercase (did you mean "orders"?)' },
    { name: 'an inbox with a space', path: '/v1/emails?inbox=my%20orders', status: 400, code: 'INVALID_INBOX', detail: 'inbox: "my orders" may hold only a-z 0-9 . _ -' },
    { name: 'no inbox', path: '/v1/emails?limit=5', status: 400, code: 'MISSING_INBOX', detail: 'inbox: is required' },
    { name: 'a limit of 0', path: '/v1/emails?inbox=orders&limit=0', status: 400, code: 'INVALID_LIMIT', detail: 'limit: must be an integer from 1 to 100' },
    { name: 'an inbox prefix with uppercase', path: '/v1/inboxes?prefix=Team', status: 400, code: 'VALIDATION_ERROR', detail: 'prefix: "Team" has uppercase letters; inbox names are lowercase (did you mean "team"?)' },
    { name: 'a tag with a space', method: 'PUT', path: '/v1/emails/any%40x/tags', body: '{"tags":["has space"]}', status: 400, code: 'VALIDATION_ERROR', detail: 'tags[0]: "has space" may hold only a-z 0-9 . _ -' },
    { name: 'tags not an array', method: 'PUT', path: '/v1/emails/any%40x/tags', body: '{"tags":"a"}', status: 400, code: 'VALIDATION_ERROR', detail: 'tags: must be an array' },
    { name: 'a body that is not JSON', method: 'PUT', path: '/v1/emails/any%40x/tags', body: '{"tags":', status: 400, code: 'VALIDATION_ERROR', detail: 'body: not valid JSON' },
    { name: 'a fault rule the core refuses', method: 'POST', path: '/v1/faults', body: '{"stage":"connect","match":{"inbox":"a"},"reply":{"code":451}}', status: 400, code: 'VALIDATION_ERROR', detail: 'fault rule: a connect rule takes no match' },
    { name: 'a fault reply code out of range', method: 'POST', path: '/v1/faults', body: '{"stage":"rcpt","reply":{"code":250}}', status: 400, code: 'VALIDATION_ERROR', detail: 'reply.code: must be an integer from 400 to 599' },
    { name: 'an inbox outside the key\'s prefix', key: 'scoped', path: '/v1/emails?inbox=billing', status: 403, code: 'FORBIDDEN', detail: 'key scope: inbox "billing" is outside the prefix "team-a-"' },
    { name: 'a change with a read-only key', key: 'readOnly', method: 'DELETE', path: '/v1/emails?inbox=team-a-x', status: 403, code: 'FORBIDDEN', detail: 'key scope: this key is read-only; DELETE /v1/emails changes data' },
    { name: 'a fault rule outside the key\'s prefix', key: 'scoped', method: 'POST', path: '/v1/faults', body: '{"stage":"rcpt","reply":{"code":451}}', status: 403, code: 'FORBIDDEN', detail: 'key scope: a key limited to the prefix "team-a-" makes only rules whose match.inbox starts with it' },
    { name: 'an email that does not exist', path: '/v1/emails/missing%40example.test', status: 404, code: 'NOT_FOUND', detail: 'messageId: no email "missing@example.test"' },
    { name: 'an attachment that does not exist', path: '/v1/emails/missing%40example.test/attachments/0-a.pdf', status: 404, code: 'NOT_FOUND', detail: 'filename: no attachment "0-a.pdf" of an email "missing@example.test"' },
    { name: 'a fault rule that does not exist', method: 'DELETE', path: '/v1/faults/nope', status: 404, code: 'NOT_FOUND', detail: 'id: no fault rule "nope"' },
    { name: 'an unknown path', path: '/v1/nothing', status: 404, code: 'NOT_FOUND', detail: 'path: no endpoint at "/v1/nothing"' },
    { name: 'a path that cannot be decoded', path: '/v1/emails/%FF', status: 404, code: 'NOT_FOUND', detail: 'path: "/v1/emails/%FF" cannot be percent-decoded' },
    { name: 'a body that is too large', method: 'PUT', path: '/v1/emails/any%40x/tags', body: `{"tags":["${'a'.repeat(1024 * 1024)}"]}`, status: 413, code: 'PAYLOAD_TOO_LARGE', detail: 'body: larger than 1048576 bytes' },
    { name: 'a body of a media type not taken', method: 'PUT', path: '/v1/emails/any%40x/tags', body: '<tags/>', contentType: 'application/xml', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', detail: 'content-type: "application/xml" is not accepted here; send application/json' },
    // Echoed input: CR, LF and non-ASCII escaped, never raw in a header.
    { name: 'CR, LF and non-ASCII in an echoed value', path: `/v1/emails?inbox=${encodeURIComponent('a\r\nX-Evil: 1\u00fc\u{1F642}')}`, status: 400, code: 'INVALID_INBOX', detail: 'inbox: "a\\x0d\\x0aX-Evil: 1\\xfc\\ud83d\\ude42" may hold only a-z 0-9 . _ -' },
    { name: 'quotes and backslashes in an echoed value', path: `/v1/emails?inbox=${encodeURIComponent('a"b\\c')}`, status: 400, code: 'INVALID_INBOX', detail: 'inbox: "a\\"b\\\\c" may hold only a-z 0-9 . _ -' }
];

describe('the detail header of error answers', () => {
    let p: ProvisionedServer;
    let base: string;
    const keys: Record<string, string> = {};

    before(async () => {
        p = await provisionServer({ listen: true });
        base = p.server.info.uri;
        keys.full = p.apiKey;
        keys.scoped = await p.api.capture.createKey('scoped', { inboxPrefix: 'team-a-' });
        keys.readOnly = await p.api.capture.createKey('read-only', { inboxPrefix: 'team-a-', readOnly: true });
    });

    after(() => p.cleanup());

    const send = (c: { method?: string; path: string; body?: string; contentType?: string; key?: string; headers?: Record<string, string> }) => fetch(`${base}${c.path}`, {
        method: c.method ?? 'GET',
        headers: {
            ...(c.key === 'none' ? {} : { authorization: `Bearer ${keys[c.key ?? 'full']}` }),
            ...(c.body === undefined ? {} : { 'content-type': c.contentType ?? 'application/json' }),
            ...c.headers
        },
        body: c.body
    });

    for (const c of CASES) {
        it(`${c.name}: ${c.status} ${c.code} with its detail`, async () => {
            const res = await send(c);
            expect(res.status).to.equal(c.status);
            expect(await res.text()).to.equal(JSON.stringify({ error: c.code }));
            expect(res.headers.get(DETAIL)).to.equal(c.detail);
        });
    }

    it('a known path with a method it does not have: 405 METHOD_NOT_ALLOWED with Allow', async () => {
        const tags = await send({ method: 'POST', path: '/v1/emails/abc%40x/tags', body: '{"tags":[]}' });
        expect(tags.status).to.equal(405);
        expect(await tags.text()).to.equal('{"error":"METHOD_NOT_ALLOWED"}');
        expect(tags.headers.get('allow')).to.equal('PUT');
        expect(tags.headers.get(DETAIL)).to.equal('method: POST is not allowed on "/v1/emails/abc@x/tags" (allowed: PUT)');

        const emails = await send({ method: 'PATCH', path: '/v1/emails?inbox=orders' });
        expect(emails.status).to.equal(405);
        expect(emails.headers.get('allow')).to.equal('GET, HEAD, POST, DELETE');
        // The catch-all needs no key: a 405 says nothing a 404 would not.
        const keyless = await send({ method: 'POST', path: '/v1/emails/abc%40x/tags', key: 'none' });
        expect(keyless.status).to.equal(405);
    });

    it('every detail is one line of printable ASCII of at most 300 characters, cut with "..."', async () => {
        const unknown = Array.from({ length: 40 }, (_, i) => `parameter${i}=1`).join('&');
        const res = await send({ path: `/v1/emails?inbox=orders&${unknown}` });
        expect(res.status).to.equal(400);
        const detail = res.headers.get(DETAIL)!;
        expect(detail.length).to.equal(300);
        expect(detail).to.startWith('parameter0: is not a parameter of this endpoint; parameter1: ');
        expect(detail).to.endWith('...');
        expect(detail).to.match(/^[\x20-\x7e]+$/);

        const long = await send({ path: `/v1/emails?inbox=${'\u00e9'.repeat(200)}` });
        const echoed = long.headers.get(DETAIL)!;
        expect(echoed.length).to.be.at.most(300);
        expect(echoed).to.match(/^[\x20-\x7e]+$/);
        // The echo is cut first (80 characters after escaping), so the rule is still said.
        expect(echoed).to.equal(`inbox: is longer than 64 characters; inbox: "${'\\xe9'.repeat(20)}..." may hold only a-z 0-9 . _ -`);
    });

    it('a 401 carries no detail and is the same whatever was wrong with the key', async () => {
        const answers = await Promise.all([
            send({ path: '/v1/emails?inbox=orders', key: 'none' }),
            send({ path: '/v1/emails?inbox=Orders&timeout=60', key: 'none' }),
            send({ path: '/v1/emails?inbox=orders', headers: { authorization: 'Bearer ic_not-a-key' } })
        ]);
        const seen = await Promise.all(answers.map(async (res) => {
            const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'date'));
            return { status: res.status, body: await res.text(), headers };
        }));
        for (const answer of seen) {
            expect(answer).to.equal(seen[0]);
        }

        expect(seen[0].status).to.equal(401);
        expect(seen[0].body).to.equal('{"error":"UNAUTHORIZED"}');
        expect(seen[0].headers[DETAIL]).to.not.exist();
        expect(Object.keys(seen[0].headers).sort()).to.equal(['cache-control', 'connection', 'content-length', 'content-security-policy', 'content-type', 'keep-alive', 'www-authenticate', 'x-content-type-options', 'x-frame-options']);
    });

    it('a 500 carries no detail', async () => {
        // A raw message the store lost while its email still refers to it: a broken store, 500.
        const [email] = await p.api.ingestForApi(buildMail({ to: 'lost@example.test' }));
        const record = await p.api.capture.getEmail(email.messageId);
        await p.stores.blobStore.delete([record!.rawKey]);
        const res = await send({ path: email.rawUrl });
        expect(res.status).to.equal(500);
        expect(await res.text()).to.equal('{"error":"INTERNAL_ERROR"}');
        expect(res.headers.get(DETAIL)).to.be.null();
    });

    it('the OpenAPI document declares the header on every 4xx but a 401', async () => {
        const doc = await (await fetch(`${base}/openapi.json`)).json() as { paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, { schema: { maxLength?: number } }> }> }>> };
        const list = doc.paths['/v1/emails'].get.responses;
        expect(list['400'].headers![ERROR_DETAIL_HEADER].schema.maxLength).to.equal(300);
        expect(list['403'].headers![ERROR_DETAIL_HEADER]).to.exist();
        expect(list['401'].headers![ERROR_DETAIL_HEADER]).to.not.exist();
        expect(list['500'].headers?.[ERROR_DETAIL_HEADER]).to.not.exist();
        expect(doc.paths['/v1/emails/{messageId}'].get.responses['404'].headers![ERROR_DETAIL_HEADER]).to.exist();
    });

    it('a 200 carries no detail', async () => {
        const res = await send({ path: '/v1/emails?inbox=orders' });
        expect(res.status).to.equal(200);
        expect(res.headers.get(DETAIL)).to.be.null();
    });
});

describe('the detail header under CORS', () => {
    let cors: ProvisionedServer;
    let plain: ProvisionedServer;

    before(async () => {
        cors = await provisionServer({ listen: true, server: { routes: { cors: { origin: ['https://app.test'], additionalExposedHeaders: ['X-Host-Own'] } } } });
        plain = await provisionServer({ listen: true });
    });

    after(async () => {
        await cors.cleanup();
        await plain.cleanup();
    });

    it('browsers may read it where the host turned CORS on, the host\'s own exposed headers kept', async () => {
        const res = await fetch(`${cors.server.info.uri}/v1/emails?inbox=Orders`, { headers: { ...cors.auth, origin: 'https://app.test' } });
        expect(res.status).to.equal(400);
        expect(res.headers.get('access-control-allow-origin')).to.equal('https://app.test');
        const exposed = res.headers.get('access-control-expose-headers')!.split(',').map((h) => h.trim());
        expect(exposed).to.include([ERROR_DETAIL_HEADER, 'X-Host-Own', 'WWW-Authenticate']);
        expect(res.headers.get(DETAIL)!).to.startWith('inbox: "Orders"');

        const preflight = await fetch(`${cors.server.info.uri}/v1/emails/x/tags`, { method: 'OPTIONS', headers: { origin: 'https://app.test', 'access-control-request-method': 'PUT' } });
        expect(preflight.headers.get('access-control-expose-headers')).to.include(ERROR_DETAIL_HEADER);
    });

    it('a host without CORS gets no CORS headers', async () => {
        const res = await fetch(`${plain.server.info.uri}/v1/emails?inbox=Orders`, { headers: { ...plain.auth, origin: 'https://app.test' } });
        expect(res.status).to.equal(400);
        expect(res.headers.get('access-control-allow-origin')).to.be.null();
        expect(res.headers.get('access-control-expose-headers')).to.be.null();
    });
});
