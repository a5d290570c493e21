import { PassThrough, Readable, type TransformCallback } from 'node:stream';
import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createMcpServer } from '../../mcp/mcp-server';
import { errorResponses, SERVER_ERRORS } from '../api-schemas';
import { AUTH_STRATEGY } from '../auth-scheme';
import { quoted } from '../../error-detail/detail-line';
import { apiError } from '../error-mapping';
import { createServiceAccess } from '../mcp-access';
import type { AuthDns } from '../../../lib/auth-check/auth-check-types';
import type { LinkChecker } from '../../link-check/link-checker';
import { mcpOriginAllowed } from '../mcp-origin';
import { keyScopeOf, routeAccess } from '../route-access';
import { API_TAG, BEARER_SECURITY, GROUP_AGENTS, type RouteContext } from '../route-context';
import { createAnswerTurns } from '../../mcp/answer-turns';

/** Where the plugin serves MCP's Streamable HTTP transport (docs/api.md, "MCP"). */
export const MCP_PATH = '/mcp';

/**
 * Largest JSON-RPC message accepted, bytes: a tool call is a few hundred bytes; 1 MiB
 * leaves room for any batch a client may send and bounds what one request holds.
 */
export const MAX_MCP_MESSAGE_BYTES = 1024 * 1024;

/** What the MCP route needs beyond the other routes' context. */
export interface McpRouteContext extends RouteContext {
    mailDomain: string;
    /** Origins whose browser pages may call /mcp (a request with no `Origin` always may). */
    origins: readonly string[];
    version: string;
    log: (message: string, error: unknown) => void;
    /** The link check's checker, shared with its route (absent: off). */
    linkChecker?: LinkChecker;
    /** The authentication check's DNS, shared with its route. */
    authDns: () => AuthDns;
}

// Headers of the hop, not of the message: never handed to the transport.
const HOP_HEADERS = new Set(['connection', 'content-length', 'keep-alive', 'transfer-encoding', 'upgrade']);

/**
 * An event stream through hapi's compression: each chunk is flushed through the
 * compressor as it is written, so an event (or a keep-alive) reaches the client at once
 * instead of waiting in gzip's buffer. hapi calls setCompressor() when it compresses.
 */
class FlushingStream extends PassThrough {
    private compressor: { flush(): void } | undefined;

    setCompressor(compressor: { flush(): void }): void {
        this.compressor = compressor;
    }

    override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
        this.push(chunk);
        this.compressor?.flush();
        callback();
    }
}

/** The Web response the SDK's transport made, as a hapi response. */
function toHapiResponse(h: ResponseToolkit, response: Response): ResponseObject {
    const out = (response.body ? h.response(Readable.fromWeb(response.body as Parameters<typeof Readable.fromWeb>[0]).pipe(new FlushingStream())) : h.response()).code(response.status);
    response.headers.forEach((value, name) => {
        out.header(name, value);
    });
    return out;
}

/**
 * POST /mcp: MCP's Streamable HTTP transport, stateless (no session: any instance answers
 * any request, docs/api.md "MCP"). Each request gets its own SDK server and transport over
 * the service, under the calling key's scope; a client that goes away (or a stopping
 * server) ends what its request started, a wait_for_email included. GET and DELETE, for
 * sessions and server-sent streams of their own, are 405: a stateless server has neither.
 */
export function mcpRoutes(context: McpRouteContext): ServerRoute[] {
    // One queue for every request's server: concurrent readers of one email answer in turns.
    const answerTurns = createAnswerTurns();
    const handle = async (request: Request, h: ResponseToolkit) => {
        const { origin } = request.headers as { origin?: string };
        if (!mcpOriginAllowed(origin, context.origins)) {
            throw apiError(403, 'FORBIDDEN', `origin: ${quoted(origin)} may not call /mcp; list it in mcpOrigins (INBOX_CAPTURE_MCP_ORIGINS) to let a page of it`);
        }

        const access = createServiceAccess({
            capture: context.capture,
            scope: keyScopeOf(request),
            mailDomain: context.mailDomain,
            maxPageBytes: context.maxPageBytes,
            longPolls: context.longPolls,
            ...(context.linkChecker ? { linkChecker: context.linkChecker } : {}),
            authDns: context.authDns
        });
        const server = createMcpServer(access, { version: context.version, log: context.log, answerTurns });
        const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        await server.connect(transport);
        // On the end of the exchange, answered or cut off: in-flight tools see their signal abort.
        request.raw.res.once('close', () => {
            void server.close();
        });

        const headers = new Headers();
        for (const [name, value] of Object.entries(request.headers)) {
            if (!HOP_HEADERS.has(name) && typeof value === 'string') {
                headers.set(name, value);
            }
        }

        // The URL is not read (no sessions; the Bearer key and the Origin check above are the guards); the body is the raw bytes.
        const webRequest = new Request(`http://inbox-capture${MCP_PATH}`, { method: 'POST', headers, body: request.payload as Buffer });
        return toHapiResponse(h, await transport.handleRequest(webRequest));
    };

    const auth = { strategy: AUTH_STRATEGY, mode: 'required' as const };
    return [
        {
            method: 'POST',
            path: MCP_PATH,
            options: {
                auth,
                tags: [API_TAG, GROUP_AGENTS],
                description: 'Model Context Protocol (Streamable HTTP): the tools for agents',
                notes: 'JSON-RPC 2.0 messages of MCP, stateless: no `Mcp-Session-Id`. Tools: list_inboxes, search_emails, wait_for_email, get_email, get_attachment, delete_email, delete_inbox, new_inbox (docs/api.md). A request whose response is a stream (`text/event-stream`) stays open while its tool runs: wait_for_email up to 300 s. A request with an `Origin` that `mcpOrigins` does not list is 403.',
                // The raw bytes: the transport parses JSON-RPC and answers its own errors.
                payload: { parse: false, output: 'data', maxBytes: MAX_MCP_MESSAGE_BYTES },
                // wait_for_email holds the request for up to 300 s.
                timeout: { server: false },
                plugins: {
                    // Each tool decides: the reading ones serve any key, the deleting ones refuse read-only keys.
                    ...routeAccess({ access: 'read' }),
                    'hapi-swagger': {
                        id: 'sendMcpMessage',
                        security: BEARER_SECURITY,
                        responses: {
                            200: { description: 'A JSON-RPC response, as `application/json` or a `text/event-stream`' },
                            202: { description: 'A notification or response from the client, accepted' },
                            ...errorResponses({ 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], ...SERVER_ERRORS })
                        }
                    }
                }
            },
            handler: handle
        },
        {
            method: ['GET', 'DELETE'],
            path: MCP_PATH,
            options: {
                auth,
                // Not an operation: left out of the OpenAPI document.
                plugins: { ...routeAccess({ access: 'read' }) },
                handler: (_request, h) => h.response({ error: 'METHOD_NOT_ALLOWED' }).code(405).header('Allow', 'POST')
            }
        }
    ];
}
