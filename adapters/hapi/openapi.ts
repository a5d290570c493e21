import type { Request, ServerRoute } from '@hapi/hapi';
import type { RegisterOptions } from 'hapi-swagger';
import { getSwaggerJSON } from 'hapi-swagger/lib/builder';
import swaggerDefaults from 'hapi-swagger/lib/defaults';
import { nameComponents } from './openapi-components';
import { sendRequestBody } from './routes/send';
import { API_TAG, GROUP_AGENTS, GROUP_DOWNLOADS, GROUP_EMAILS, GROUP_FAULTS, GROUP_INBOXES, GROUP_KEYS, GROUP_SERVICE, PUBLIC_SECURITY } from './route-context';

/** Path of the OpenAPI document (docs/design.md). */
export const OPENAPI_PATH = '/openapi.json';

/**
 * hapi-swagger settings: OpenAPI 3.0, only the routes tagged as ours (never the
 * host's), Bearer security declared. A fresh object per call: the builder edits it.
 */
export function openapiSettings(version: string): Record<string, unknown> {
    const options: RegisterOptions = {
        OAS: 'v3.0',
        routeTag: API_TAG,
        grouping: 'tags',
        tagsGroupingFilter: (tag: string) => tag !== API_TAG,
        definitionPrefix: 'useLabel',
        xProperties: false,
        // A placeholder the builder insists on (an absolute URI); replaced below.
        servers: [{ url: 'http://localhost' }],
        info: {
            title: 'inbox-capture',
            version,
            license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
            description: 'Received email, stored per inbox and served over HTTP/JSON. Every `/v1/emails` endpoint needs `Authorization: Bearer <API key>`; error bodies are `{ "error": "<CODE>" }`.'
        },
        securityDefinitions: {
            bearerAuth: {
                type: 'http',
                scheme: 'bearer',
                description: 'An API key created with `inbox-capture keys create <name>`.'
            }
        },
        tags: [
            { name: GROUP_EMAILS, description: 'List, read and delete captured email' },
            { name: GROUP_INBOXES, description: 'The inboxes that hold mail' },
            { name: GROUP_DOWNLOADS, description: 'Raw messages and attachments' },
            { name: GROUP_FAULTS, description: 'SMTP faults on purpose, to test how an application copes' },
            { name: GROUP_KEYS, description: 'The calling API key and its scope' },
            { name: GROUP_AGENTS, description: 'The Model Context Protocol server for coding agents' },
            { name: GROUP_SERVICE, description: 'Health, version and documentation' }
        ]
    } as RegisterOptions;

    // What hapi-swagger's own register() adds to its settings before building.
    return { ...swaggerDefaults, ...options, log: () => undefined };
}

// The send route's body, which hapi-swagger cannot see (routes/send.ts reads it itself).
function describeSendBody(document: { paths?: Record<string, Record<string, { operationId?: string; requestBody?: unknown }>> }): void {
    for (const methods of Object.values(document.paths ?? {})) {
        for (const operation of Object.values(methods)) {
            if (operation.operationId === 'sendEmail') {
                operation.requestBody = sendRequestBody();
            }
        }
    }
}

/**
 * GET /openapi.json (docs/design.md): the OpenAPI 3.0 document of the plugin's routes,
 * built by hapi-swagger from their joi schemas and `plugins['hapi-swagger']` notes.
 * Served by a route of our own, so the plugin's response shaping applies to it; its
 * component schemas carry the API's names, for code generators (openapi-components.ts).
 * Under `at` if given.
 */
export function openapiRoute(version: string, at = ''): ServerRoute {
    return {
        method: 'GET',
        path: `${at}${OPENAPI_PATH}`,
        options: {
            auth: false,
            tags: [API_TAG, GROUP_SERVICE],
            description: 'This OpenAPI 3.0 document',
            notes: 'Built from the routes\' own validation schemas, so it always matches what the server accepts and answers.',
            plugins: { 'hapi-swagger': { id: 'getOpenApiDocument', security: PUBLIC_SECURITY, responses: { 200: { description: 'The OpenAPI document' } } } }
        },
        handler: async (request: Request) => {
            const document = await getSwaggerJSON(openapiSettings(version), request);
            // Paths already carry any route prefix, so the server is this origin's root:
            // relative, and never built from a Host header a client chose.
            document.servers = [{ url: '/' }];
            nameComponents(document);
            describeSendBody(document);
            return document;
        }
    };
}
