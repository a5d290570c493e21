import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as Path from 'node:path';
import { call, textOf } from '../../helpers/mcp-scenario';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

// A tool's failure reads `CODE: detail` with the API's words, whichever way the agent
// reaches the tools: the plugin's /mcp over HTTP, or `inbox-capture mcp` over stdio,
// which calls the API with the client.

const BIN = Path.join(__dirname, '..', '..', '..', 'dist', 'adapters', 'cli', 'bin.js');

/** A tool call and the text its failure must have, exactly, over both transports. */
const FAILURES: Array<{ name: string; key: 'full' | 'scoped'; tool: string; args: Record<string, unknown>; text: string }> = [
    { name: 'an unclosed quote in the search', key: 'full', tool: 'search_emails', args: { inbox: 'orders', query: 'subject:"unclosed' }, text: 'VALIDATION_ERROR: query: unclosed quote at character 9' },
    { name: 'an unknown has: value', key: 'full', tool: 'search_emails', args: { inbox: 'orders', query: 'has:html' }, text: 'VALIDATION_ERROR: query: has:html is not a known has: value (attachment, link, code)' },
    { name: 'a date the service cannot read', key: 'full', tool: 'wait_for_email', args: { inbox: 'orders', receivedAfter: 'yesterday', timeoutSeconds: 1 }, text: 'VALIDATION_ERROR: receivedAfter: "yesterday" is not a date (Unix ms or ISO 8601)' },
    { name: 'an uppercase inbox (the tool\'s own arguments)', key: 'full', tool: 'search_emails', args: { inbox: 'Orders' }, text: 'VALIDATION_ERROR: inbox: "Orders" has uppercase letters; inbox names are lowercase (did you mean "orders"?)' },
    { name: 'a wait too long (the tool\'s own arguments)', key: 'full', tool: 'wait_for_email', args: { inbox: 'orders', timeoutSeconds: 1000 }, text: 'VALIDATION_ERROR: timeoutSeconds: must be an integer from 1 to 300' },
    { name: 'an inbox outside the key\'s prefix', key: 'scoped', tool: 'search_emails', args: { inbox: 'billing' }, text: 'FORBIDDEN: key scope: inbox "billing" is outside the prefix "team-a-"' },
    { name: 'an email that does not exist', key: 'full', tool: 'get_email', args: { messageId: 'nobody@example.test' }, text: 'NOT_FOUND: messageId: no email "nobody@example.test"' }
];

describe('MCP tool errors: CODE: detail over HTTP and over stdio', () => {
    let p: ProvisionedServer;
    const keys: Record<string, string> = {};
    const clients: Record<string, Client> = {};

    const connect = async (transport: StreamableHTTPClientTransport | StdioClientTransport): Promise<Client> => {
        const client = new Client({ name: 'tool-errors', version: '1.0.0' });
        await client.connect(transport);
        return client;
    };

    before({ timeout: 60_000 }, async () => {
        p = await provisionServer({ listen: true });
        keys.full = p.apiKey;
        keys.scoped = await p.api.capture.createKey('scoped', { inboxPrefix: 'team-a-' });
        for (const [kind, key] of Object.entries(keys)) {
            clients[`http ${kind}`] = await connect(new StreamableHTTPClientTransport(new URL(`${p.server.info.uri}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
            clients[`stdio ${kind}`] = await connect(new StdioClientTransport({
                command: process.execPath,
                args: [BIN, 'mcp', '--url', p.server.info.uri, '--key', key],
                env: { PATH: process.env.PATH ?? '' },
                stderr: 'pipe'
            }));
        }
    });

    after(async () => {
        await Promise.all(Object.values(clients).map((c) => c.close()));
        await p.cleanup();
    });

    for (const transport of ['http', 'stdio']) {
        for (const f of FAILURES) {
            it(`${transport}: ${f.name}`, async () => {
                const result = await call(clients[`${transport} ${f.key}`], f.tool, f.args);
                expect(result.isError).to.be.true();
                expect(textOf(result)).to.equal(f.text);
            });
        }
    }
});
