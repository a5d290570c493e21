import * as Code from '@hapi/code';
import * as Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { createSmtpListener, type SmtpListener } from '../../../../adapters/smtp';
import { plugin } from '../../../../adapters/hapi';
import { PROGRESS_INTERVAL_MS } from '../../../../adapters/mcp/tool-schemas';
import { parseSearchQuery } from '../../../../lib/search/parse-query';
import { buildMail } from '../../../helpers/mail';
import { call, expectToolError, runEveryTool, runScopedTools, smtpSender, structured, type MailSender } from '../../../helpers/mcp-scenario';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import { sqliteFsStores } from '../../../helpers/test-stores';
import { waitUntil } from '../../../helpers/wait-until';

const { expect } = Code;
const { describe, it, before, after, afterEach } = exports.lab = Lab.script();

/** An SDK client over Streamable HTTP to `url`, sending `headers` with every request. */
async function connect(url: string, headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'inbox-capture-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    return client;
}

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

describe('/mcp', () => {

    let p: ProvisionedServer;
    let smtp: SmtpListener;
    let sender: MailSender;
    const clients: Client[] = [];

    before(async () => {
        p = await provisionServer({ listen: true, plugin: { mailDomain: 'mail.example.test' } });
        smtp = createSmtpListener({ capture: p.api.capture, host: '127.0.0.1', port: 0 });
        sender = smtpSender((await smtp.listen()).port);
    });

    after(async () => {
        sender.close();
        await smtp.close();
        await p.cleanup();
    });

    afterEach(async () => {
        await Promise.all(clients.splice(0).map((c) => c.close()));
    });

    const client = async (headers = p.auth) => {
        const made = await connect(`${p.server.info.uri}/mcp`, headers);
        clients.push(made);
        return made;
    };

    it('serves every tool to the SDK\'s client, on mail sent over SMTP', { timeout: 120_000 }, async () => {
        await runEveryTool(await client(), sender, 'mail.example.test');
    });

    it('applies a key\'s inbox prefix and read-only scope to the tools', { timeout: 120_000 }, async () => {
        const [other] = await p.api.ingestForApi(buildMail({ to: 'outsider@x.test', attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'x' }] }));
        const key = await p.api.capture.createKey('agent', { inboxPrefix: 'agent-', readOnly: true });
        await runScopedTools(await client({ authorization: `Bearer ${key}` }), sender, { prefix: 'agent-', otherInbox: 'outsider', otherId: other!.messageId });
    });

    it('lets a prefix-scoped key that may change delete only inside its prefix', async () => {
        const key = await p.api.capture.createKey('team', { inboxPrefix: 'team-' });
        const [mine] = await p.api.ingestForApi(buildMail({ to: 'team-box@x.test' }));
        const [theirs] = await p.api.ingestForApi(buildMail({ to: 'else-box@x.test' }));
        const agent = await client({ authorization: `Bearer ${key}` });
        expectToolError(await call(agent, 'delete_email', { messageId: theirs!.messageId }), 'NOT_FOUND');
        expectToolError(await call(agent, 'delete_inbox', { inbox: 'else-box' }), 'FORBIDDEN');
        expect(await p.api.capture.getEmail(theirs!.messageId)).to.exist();
        expect(structured(await call(agent, 'delete_email', { messageId: mine!.messageId }))).to.include({ deleted: true });
        expect(structured(await call(agent, 'delete_inbox', { inbox: 'team-box' }))).to.equal({ deleted: 0 });
    });

    it('refuses a request without a valid key with 401 {"error":"UNAUTHORIZED"}', async () => {
        for (const authorization of [undefined, 'Bearer ic_unknown', 'Basic abc']) {
            const res = await p.server.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, ...(authorization ? { authorization } : {}) }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
            expect(res.statusCode).to.equal(401);
            expect(res.result).to.equal({ error: 'UNAUTHORIZED' });
            expect(res.headers['www-authenticate']).to.equal('Bearer');
        }

        const refused = await connect(`${p.server.info.uri}/mcp`, { authorization: 'Bearer ic_unknown' }).catch((err: Error) => err);
        expect(refused).to.be.an.error();
    });

    it('is stateless: no session id, and GET and DELETE are 405', async () => {
        const res = await p.server.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, ...p.auth }, payload: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } } });
        expect(res.statusCode).to.equal(200);
        expect(res.headers['mcp-session-id']).to.not.exist();
        expect(res.payload).to.contain('"name":"inbox-capture"');
        for (const method of ['GET', 'DELETE']) {
            const other = await p.server.inject({ method, url: '/mcp', headers: p.auth });
            expect(other.statusCode).to.equal(405);
            expect(other.headers.allow).to.equal('POST');
        }
    });

    it('refuses a browser request from an origin it does not list with 403, whatever the Host says; no Origin is fine', async () => {
        const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
        for (const [origin, host] of [['http://evil.example', 'evil.example'], ['http://evil.example:3000', 'evil.example:3000'], ['null', undefined], [`http://${p.server.info.host}:${p.server.info.port}`, undefined], ['http://127.0.0.1', '127.0.0.1']] as const) {
            const res = await p.server.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, ...p.auth, origin, ...(host ? { host } : {}) }, payload: list });
            expect(res.statusCode, origin).to.equal(403);
            expect(res.result, origin).to.equal({ error: 'FORBIDDEN' });
            expect(res.headers['inbox-capture-error-detail'], origin).to.equal(`origin: "${origin}" may not call /mcp; list it in mcpOrigins (INBOX_CAPTURE_MCP_ORIGINS) to let a page of it`);
        }

        const none = await p.server.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, ...p.auth }, payload: list });
        expect(none.statusCode).to.equal(200);
        // 401 still comes first.
        const anonymous = await p.server.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, origin: 'http://evil.example' }, payload: list });
        expect(anonymous.statusCode).to.equal(401);
    });

    it('lets a listed origin in (mcpOrigins), as the SDK\'s client sends it', async () => {
        const listed = await provisionServer({ listen: true, plugin: { mcpOrigins: ['https://Agent.Example:8443'] } });
        try {
            const agent = await connect(`${listed.server.info.uri}/mcp`, { ...listed.auth, origin: 'https://agent.example:8443' });
            clients.push(agent);
            expect((await agent.listTools()).tools.length).to.be.above(0);
            const other = await listed.server.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, ...listed.auth, origin: 'https://agent.example' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
            expect(other.statusCode).to.equal(403);
        }
        finally {
            await Promise.all(clients.splice(0).map((c) => c.close()));
            await listed.cleanup();
        }
    });

    it('answers malformed JSON-RPC with the protocol\'s own errors', async () => {
        const parse = await p.server.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, ...p.auth }, payload: '{not json' });
        expect(parse.statusCode).to.equal(400);
        expect(JSON.parse(parse.payload)).to.include({ jsonrpc: '2.0' });
        expect(JSON.parse(parse.payload).error.code).to.equal(-32700);

        const accept = await p.server.inject({ method: 'POST', url: '/mcp', headers: { ...p.auth, accept: 'text/html', 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
        expect(accept.statusCode).to.equal(406);

        const huge = await p.server.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, ...p.auth }, payload: `{"x":"${'a'.repeat(1024 * 1024)}"}` });
        expect(huge.statusCode).to.equal(413);
        expect(huge.result).to.equal({ error: 'PAYLOAD_TOO_LARGE' });
    });

    it('ends a wait_for_email whose client went away: the wait is released at once', { timeout: 30_000 }, async () => {
        // Stateless: the exchange's connection is the request; closing the client cuts it.
        const agent = await connect(`${p.server.info.uri}/mcp`, p.auth);
        const waiting = call(agent, 'wait_for_email', { inbox: 'nobody-comes', timeoutSeconds: 300 }, { timeout: 400_000 });
        await waitUntil('the wait reaches the long-poller', () => p.api.capture.longPoller.waiterCount() === 1);
        await agent.close();
        await expect(waiting).to.reject();
        await waitUntil('the wait is released', () => p.api.capture.longPoller.waiterCount() === 0, { limitMs: 5_000 });
    });

    it('sends progress while wait_for_email waits, when the client asks', { timeout: 30_000 }, async () => {
        // The interval is the server's (10 s): a wait of 12 s sees one.
        // The response is compressed when the client accepts it (fetch does): each event is
        // flushed through gzip as it is written, so the progress comes seconds before the result.
        const agent = await client();
        let firstProgressAt = 0;
        const result = await agent.callTool({ name: 'wait_for_email', arguments: { inbox: 'slow-progress', timeoutSeconds: 12 } }, undefined, {
            onprogress: () => {
                firstProgressAt ||= Date.now();
            },
            timeout: 20_000
        });
        const answeredAt = Date.now();
        expect(structured(result as Parameters<typeof structured>[0])).to.equal({ found: false });
        expect(firstProgressAt).to.be.above(0);
        expect(answeredAt - firstProgressAt).to.be.above(1000);
    });

    it('finds mail by the sender\'s display name: search_emails and wait_for_email', async () => {
        const [shop] = await p.api.ingestForApi(buildMail({ to: 'named-senders@x.test', from: 'Shop Newsletter <news@shop.test>', subject: 'Deals' }));
        const [billing] = await p.api.ingestForApi(buildMail({ to: 'named-senders@x.test', from: 'Billing Team <accounts@corp.test>', subject: 'Invoice' }));
        const agent = await client();
        const found = async (query: string) => structured<{ emails: Array<{ messageId: string }> }>(await call(agent, 'search_emails', { inbox: 'named-senders', query })).emails.map((e) => e.messageId);
        expect(await found('Shop Newsletter')).to.equal([shop!.messageId]);
        expect(await found('from:"Billing Team"')).to.equal([billing!.messageId]);
        expect(await found('-from:"billing team"')).to.equal([shop!.messageId]);
        const waited = structured<{ found: boolean; email: { messageId: string } }>(await call(agent, 'wait_for_email', { inbox: 'named-senders', query: 'from:newsletter', timeoutSeconds: 5 }));
        expect(waited.email.messageId).to.equal(shop!.messageId);
    });

    it('lets a wait longer than the client\'s request timeout end in found: false, by the default progress interval', { timeout: 40_000 }, async () => {
        // The client gives up after 12 s without news; the server waits 14 s. Only a progress
        // notification within 12 s (the default interval, at most 10 s) keeps the request alive.
        expect(PROGRESS_INTERVAL_MS).to.be.at.most(10_000);
        const agent = await client();
        let progressed = 0;
        const result = await agent.callTool({ name: 'wait_for_email', arguments: { inbox: 'beyond-the-timeout', timeoutSeconds: 14 } }, undefined, {
            onprogress: () => {
                progressed++;
            },
            resetTimeoutOnProgress: true,
            timeout: 12_000
        });
        expect(structured(result as Parameters<typeof structured>[0])).to.equal({ found: false });
        expect(progressed).to.be.at.least(1);
    });

    it('defaults wait_for_email to 45 s, under the client\'s 60 s, and says so with the progress rule', async () => {
        const { tools } = await (await client()).listTools();
        const wait = tools.find((t) => t.name === 'wait_for_email')!;
        const timeout = (wait.inputSchema.properties as Record<string, { default?: number }>).timeoutSeconds!;
        expect(timeout.default).to.equal(45);
        expect(timeout.default! * 1000).to.be.below(DEFAULT_REQUEST_TIMEOUT_MSEC);
        expect(wait.description).to.contain('defaults to 45');
        expect(wait.description).to.contain('60 s');
        expect(wait.description).to.contain('progressToken');
        expect(wait.description).to.contain('progress notification every 10 s');
    });

    it('describes the query language in every tool that takes a query: one example, substring matching, the date forms', async () => {
        const { tools } = await (await client()).listTools();
        const querying = tools.filter((t) => (t.inputSchema.properties as Record<string, unknown> | undefined)?.query !== undefined);
        expect(querying.map((t) => t.name)).to.equal(['search_emails', 'wait_for_email']);
        for (const tool of querying) {
            const description = tool.description!;
            const examples = [...description.matchAll(/Example query: `([^`]+)`/g)].map((m) => m[1]!);
            expect(examples, tool.name).to.have.length(1);
            // The example is one the service reads.
            expect(parseSearchQuery(examples[0]!).length, tool.name).to.be.above(1);
            expect(description, tool.name).to.contain('case-insensitive substring');
            expect(description, tool.name).to.contain('after: and before: read Unix milliseconds or an ISO 8601 date or date-time; a date alone is midnight UTC');
        }
    });

    it('is served under the plugin\'s route prefix, and absent with mcp: false', async () => {
        const stores = await sqliteFsStores().create();
        const server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false });
        try {
            await server.register({ plugin, options: { recordStore: stores.recordStore, blobStore: stores.blobStore } }, { routes: { prefix: '/capture' } });
            await server.start();
            const key = await server.plugins['inbox-capture'].capture.createKey('prefixed');
            const agent = await connect(`${server.info.uri}/capture/mcp`, { authorization: `Bearer ${key}` });
            clients.push(agent);
            const made = structured<{ address: string }>(await call(agent, 'new_inbox'));
            expect(made.address).to.endWith('@inbox-capture.test');
        }
        finally {
            await server.stop();
            await stores.cleanup();
        }

        const off = await provisionServer({ plugin: { mcp: false } });
        try {
            const res = await off.server.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, ...off.auth }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
            expect(res.statusCode).to.equal(404);
            expect(off.server.table().some((route) => route.path === '/mcp')).to.be.false();
        }
        finally {
            await off.cleanup();
        }
    });

    it('ends waits at once when the server stops', { timeout: 30_000 }, async () => {
        const own = await provisionServer({ listen: true });
        const agent = await connect(`${own.server.info.uri}/mcp`, own.auth);
        try {
            const waiting = call(agent, 'wait_for_email', { inbox: 'stopping', timeoutSeconds: 300 }, { timeout: 400_000 });
            await waitUntil('the wait reaches the long-poller', () => own.api.capture.longPoller.waiterCount() === 1);
            const started = Date.now();
            await own.server.stop({ timeout: 20_000 });
            expect(structured(await waiting)).to.equal({ found: false });
            expect(Date.now() - started).to.be.below(10_000);
        }
        finally {
            await agent.close();
            await own.cleanup();
        }
    });
});
