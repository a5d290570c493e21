import { packageVersion } from '../../../lib/util/package-version';
import { DEFAULT_MAIL_DOMAIN } from '../../client/new-inbox';
import { CliError, EXIT_OK, write, type Command } from '../command';

/** `mcp`: the MCP tools over stdio, for an agent that starts its servers as commands. */
export const mcp: Command = {
    name: 'mcp',
    summary: 'serve the MCP tools over stdio, against a running service (for agents)',
    usage: 'mcp [--url U] [--key K] [--mail-domain D]',
    details: [
        'Speaks the Model Context Protocol on stdin and stdout, so that a coding agent can',
        'start it as a command. Every tool call is a request to the service at --url with',
        'the key --key (the key\'s scope applies as to any client). Messages about the',
        'connection go to stderr; stdout carries only the protocol.',
        '',
        'Options:',
        '  --url U          the service, e.g. http://127.0.0.1:3000 (default INBOX_CAPTURE_URL)',
        '  --key K          an API key (default INBOX_CAPTURE_API_KEY)',
        `  --mail-domain D  domain of new_inbox's addresses (default INBOX_CAPTURE_MAIL_DOMAIN,`,
        `                   else ${DEFAULT_MAIL_DOMAIN})`,
        '',
        'It runs until stdin closes. Exit status: 0 after stdin closed; 1 bad usage.'
    ],
    options: {
        url: { type: 'string' },
        key: { type: 'string' },
        'mail-domain': { type: 'string' }
    },
    positionals: [0, 0],
    async run({ io, values }) {
        const baseUrl = (values.url as string | undefined) ?? io.env.INBOX_CAPTURE_URL?.trim();
        const apiKey = (values.key as string | undefined) ?? io.env.INBOX_CAPTURE_API_KEY?.trim();
        if (!baseUrl || !/^https?:\/\//i.test(baseUrl)) {
            throw new CliError('mcp: --url (or INBOX_CAPTURE_URL) must be the service\'s http(s) URL, e.g. http://127.0.0.1:3000');
        }

        if (!apiKey) {
            throw new CliError('mcp: --key (or INBOX_CAPTURE_API_KEY) is needed: an API key from inbox-capture keys create <name>');
        }

        const flagDomain = values['mail-domain'] as string | undefined;
        const { mailDomainSchema } = await import('../../mcp/mail-domain');
        if (flagDomain !== undefined && mailDomainSchema.validate(flagDomain).error) {
            throw new CliError(`mcp: --mail-domain must be a domain name such as example.test, got "${flagDomain}"`);
        }

        // Loaded here: the MCP SDK and its schemas are much of what the CLI would load, and other
        // commands need none of them; nor of the service's configuration, beyond the mail domain.
        const { readMailDomain } = await import('../../standalone/env-config');
        const mailDomain = flagDomain ?? readMailDomain(io.env) ?? DEFAULT_MAIL_DOMAIN;
        const [{ StdioServerTransport }, { createClientAccess }, { createMcpServer }, { InboxCaptureClient }] = await Promise.all([
            import('@modelcontextprotocol/sdk/server/stdio.js'), import('../../mcp/client-access'), import('../../mcp/mcp-server'), import('../../client/client')
        ]);
        const client = new InboxCaptureClient({ baseUrl, apiKey });
        const log = (message: string, error: unknown) => {
            void write(io.stderr, `inbox-capture mcp: ${message}: ${error instanceof Error ? error.message : String(error)}\n`).catch(() => undefined);
        };
        const server = createMcpServer(createClientAccess({ client, mailDomain }), { version: packageVersion(), log });
        const transport = new StdioServerTransport(io.stdin, io.stdout);
        const closed = new Promise<void>((resolve) => {
            server.onclose = resolve;
        });
        await server.connect(transport);
        // The client ends the session by closing our stdin; tools in flight are aborted.
        const close = () => void server.close();
        io.stdin.once('end', close);
        io.stdin.once('close', close);
        await closed;
        return EXIT_OK;
    }
};
