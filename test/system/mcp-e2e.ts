import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as Fs from 'node:fs';
import * as Path from 'node:path';
import { run, runNode } from '../helpers/child-process';
import { call, expectToolError, runEveryTool, runScopedTools, smtpSender, TOOL_NAMES, type MailSender } from '../helpers/mcp-scenario';
import { freePort } from '../helpers/net';
import { removeDir, tempDir } from '../helpers/temp-dir';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

// The MCP server end to end, as agents use it (docs/api.md, "MCP"): the standalone service's
// /mcp over Streamable HTTP, and `inbox-capture mcp` over stdio against that service, each
// driven by the SDK's own Client; then a second, independent client of the HTTP transport,
// the MCP Inspector's CLI.

const ROOT = Path.join(__dirname, '..', '..');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');
const MAIL_DOMAIN = 'agents.example.test';
const AGENT_PREFIX = 'agent-';

/** A fresh SDK client, and how to end it. */
async function connected(transport: StreamableHTTPClientTransport | StdioClientTransport): Promise<Client> {
    const client = new Client({ name: 'inbox-capture-e2e', version: '1.0.0' });
    await client.connect(transport);
    return client;
}

describe('MCP end to end', () => {

    let service: StandaloneService;
    let sender: MailSender;
    let agentKey: string;
    let other: { inbox: string; id: string };

    before({ timeout: 60_000 }, async () => {
        service = await startStandalone({ env: { INBOX_CAPTURE_MAIL_DOMAIN: MAIL_DOMAIN } });
        sender = smtpSender(service.smtpPort);
        const created = await runNode([BIN, 'keys', 'create', 'agent', '--inbox-prefix', AGENT_PREFIX, '--read-only'], { cwd: ROOT, env: service.env });
        expect(created.code, created.stderr).to.equal(0);
        agentKey = created.stdout.trim();

        // An email outside the agent's prefix, with its id from the HTTP API.
        const inbox = `outsider-${Date.now()}`;
        await sender.send(`${inbox}@x.test`, { subject: 'not yours', attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'x' }] });
        const page = await (await fetch(`${service.baseUrl}/v1/emails?inbox=${inbox}&wait=true&timeout=10`, { headers: { authorization: `Bearer ${service.apiKey}` } })).json() as { emails: Array<{ messageId: string }> };
        other = { inbox, id: page.emails[0]!.messageId };
    });

    after(async () => {
        sender?.close();
        await service?.stop();
    });

    describe('Streamable HTTP at /mcp', () => {

        const http = (key: string) => connected(new StreamableHTTPClientTransport(new URL(`${service.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));

        it('serves every tool on mail sent over SMTP', { timeout: 120_000 }, async () => {
            const client = await http(service.apiKey);
            try {
                await runEveryTool(client, sender, MAIL_DOMAIN);
            }
            finally {
                await client.close();
            }
        });

        it('holds a prefix-scoped, read-only key to its inboxes and to reading', { timeout: 120_000 }, async () => {
            const client = await http(agentKey);
            try {
                await runScopedTools(client, sender, { prefix: AGENT_PREFIX, otherInbox: other.inbox, otherId: other.id });
            }
            finally {
                await client.close();
            }
        });
    });

    describe('stdio: inbox-capture mcp', () => {

        const stdio = (args: string[], env: Record<string, string> = {}) => {
            const transport = new StdioClientTransport({
                command: process.execPath,
                args: [BIN, 'mcp', ...args],
                env: { PATH: process.env.PATH ?? '', INBOX_CAPTURE_MAIL_DOMAIN: MAIL_DOMAIN, ...env },
                cwd: ROOT,
                stderr: 'pipe'
            });
            return { transport, client: connected(transport) };
        };

        it('serves every tool on mail sent over SMTP, through the HTTP API (url and key from the environment)', { timeout: 120_000 }, async () => {
            const { client } = stdio([], { INBOX_CAPTURE_URL: service.baseUrl, INBOX_CAPTURE_API_KEY: service.apiKey });
            const ready = await client;
            try {
                await runEveryTool(ready, sender, MAIL_DOMAIN);
            }
            finally {
                await ready.close();
            }
        });

        it('holds a prefix-scoped, read-only key to its inboxes and to reading (url and key as flags)', { timeout: 120_000 }, async () => {
            const { client } = stdio(['--url', service.baseUrl, '--key', agentKey]);
            const ready = await client;
            try {
                await runScopedTools(ready, sender, { prefix: AGENT_PREFIX, otherInbox: other.inbox, otherId: other.id });
            }
            finally {
                await ready.close();
            }
        });

        it('answers a key the service refuses, and a service that is down, with isError results', { timeout: 60_000 }, async () => {
            const refused = await stdio(['--url', service.baseUrl, '--key', 'ic_not-a-key']).client;
            const down = await stdio(['--url', `http://127.0.0.1:${await freePort()}`, '--key', service.apiKey]).client;
            try {
                expectToolError(await call(refused, 'list_inboxes'), 'UNAUTHORIZED');
                expectToolError(await call(down, 'search_emails', { inbox: 'any' }), 'SERVICE_UNAVAILABLE');
                expect((await refused.listTools()).tools.map((t) => t.name)).to.equal(TOOL_NAMES);
            }
            finally {
                await refused.close();
                await down.close();
            }
        });

        it('exits 0 when the client closes its stdin, a wait in flight included', { timeout: 60_000 }, async () => {
            const { transport, client } = stdio(['--url', service.baseUrl, '--key', service.apiKey]);
            const ready = await client;
            const waiting = call(ready, 'wait_for_email', { inbox: 'never-comes', timeoutSeconds: 300 }, { timeout: 400_000 }).catch((err: Error) => err);
            await new Promise((resolve) => setTimeout(resolve, 500));
            const pid = transport.pid!;
            const exited = new Promise<number | null>((resolve) => {
                const poll = setInterval(() => {
                    try {
                        process.kill(pid, 0);
                    }
                    catch {
                        clearInterval(poll);
                        resolve(null);
                    }
                }, 50);
            });
            const closing = Date.now();
            await ready.close();
            await exited;
            await waiting;
            // The SDK's client waits 2 s for the process to go on its own before it signals it.
            expect(Date.now() - closing).to.be.below(2_000);
        });
    });

    describe('a second client: the MCP Inspector CLI (mcp-inspector-cli)', () => {

        // The installed devDependency, the version docs/api.md pins: it runs from any directory.
        const inspector = (args: string[]) => run(process.execPath, [Path.join(ROOT, 'node_modules', '.bin', 'mcp-inspector-cli'), '--cli', `${service.baseUrl}/mcp`, '--transport', 'http', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' } });
        const auth = (key: string) => ['--header', `Authorization: Bearer ${key}`];

        it('runs the command of docs/api.md, as written, from an empty directory (tools/list)', { timeout: 120_000 }, async () => {
            const docs = Fs.readFileSync(Path.join(ROOT, 'docs', 'api.md'), 'utf8');
            const commands = docs.match(/^npx -y @modelcontextprotocol\/inspector-cli@\S+ .*$/gm) ?? [];
            expect(commands).to.have.length(1);
            const command = commands[0]!;
            expect(command).to.contain('http://127.0.0.1:3000/mcp');
            expect(command).to.contain('$AGENT_KEY');

            // The version it pins is the devDependency installed here, so npx runs that one from
            // the project's tree: offline, with an empty npm cache. The directory is empty and
            // inside the project (npx looks upwards for it); a version that depends on where it
            // is run from (0.17.1 to 1.0.3) fails here as it fails for users.
            const pinned = /inspector-cli@(\S+)/.exec(command)![1];
            const manifest = JSON.parse(Fs.readFileSync(Path.join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
            expect(manifest.devDependencies['@modelcontextprotocol/inspector-cli']).to.equal(pinned);
            const cacheRoot = Path.join(ROOT, 'node_modules', '.cache');
            Fs.mkdirSync(cacheRoot, { recursive: true });
            const empty = Fs.mkdtempSync(Path.join(cacheRoot, 'inspector-docs-'));
            const npmCache = await tempDir('npm-cache');
            try {
                const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? npmCache, AGENT_KEY: service.apiKey };
                Object.assign(env, { npm_config_cache: npmCache, npm_config_offline: 'true', npm_config_update_notifier: 'false', npm_config_fund: 'false' });
                const result = await run('sh', ['-c', command.replace('http://127.0.0.1:3000', service.baseUrl)], { cwd: empty, env });
                expect(result.code, result.stderr).to.equal(0);
                const listed = JSON.parse(result.stdout) as { tools: Array<{ name: string }> };
                expect(listed.tools.map((t) => t.name)).to.equal(TOOL_NAMES);
                expect(Fs.readdirSync(empty)).to.equal([]);
            }
            finally {
                await removeDir(empty);
                await removeDir(npmCache);
            }
        });

        it('lists the tools with their schemas (tools/list)', { timeout: 60_000 }, async () => {
            const result = await inspector([...auth(service.apiKey), '--method', 'tools/list']);
            expect(result.code, result.stderr).to.equal(0);
            const listed = JSON.parse(result.stdout) as { tools: Array<{ name: string; inputSchema: { type: string }; outputSchema: { type: string } }> };
            expect(listed.tools.map((t) => t.name)).to.equal(TOOL_NAMES);
            expect(listed.tools.every((t) => t.inputSchema.type === 'object' && t.outputSchema.type === 'object')).to.be.true();
        });

        it('calls tools, successes and failures (tools/call)', { timeout: 60_000 }, async () => {
            const made = await inspector([...auth(service.apiKey), '--method', 'tools/call', '--tool-name', 'new_inbox', '--tool-arg', 'prefix=inspector-']);
            expect(made.code, made.stderr).to.equal(0);
            const { inbox, address } = (JSON.parse(made.stdout) as { structuredContent: { inbox: string; address: string } }).structuredContent;
            expect(address).to.equal(`${inbox}@${MAIL_DOMAIN}`);

            await sender.send(address, { subject: 'for the inspector', text: 'code 424242 inside' });
            const waited = await inspector([...auth(service.apiKey), '--method', 'tools/call', '--tool-name', 'wait_for_email', '--tool-arg', `inbox=${inbox}`, 'timeoutSeconds=30']);
            expect(waited.code, waited.stderr).to.equal(0);
            const email = (JSON.parse(waited.stdout) as { structuredContent: { found: boolean; email: { codes: string[]; subject: string } } }).structuredContent;
            expect(email.found).to.be.true();
            expect(email.email).to.include({ subject: 'for the inspector', codes: ['424242'] });

            const missing = await inspector([...auth(service.apiKey), '--method', 'tools/call', '--tool-name', 'get_email', '--tool-arg', 'messageId=nobody@example.test']);
            const failed = JSON.parse(missing.stdout) as { isError: boolean; content: Array<{ text: string }> };
            expect(failed.isError).to.be.true();
            expect(failed.content[0]!.text).to.startWith('NOT_FOUND: ');
        });

        it('is refused without a key', { timeout: 60_000 }, async () => {
            const result = await inspector(['--method', 'tools/list']);
            expect(result.code).to.not.equal(0);
            expect(result.stdout).to.not.contain('list_inboxes');
        });
    });

    it('never puts anything but the protocol on the stdio server\'s stdout', { timeout: 60_000 }, async () => {
        const input = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`;
        const result = await runNode([BIN, 'mcp', '--url', service.baseUrl, '--key', service.apiKey], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, input });
        expect(result.code).to.equal(0);
        const lines = result.stdout.trim().split('\n');
        expect(lines).to.have.length(1);
        expect((JSON.parse(lines[0]!) as { result: { tools: unknown[] } }).result.tools).to.have.length(TOOL_NAMES.length);
    });
});
