import type { Request, ServerRoute } from '@hapi/hapi';
import { currentKeySchema, errorResponses, SERVER_ERRORS } from '../api-schemas';
import type { CurrentKeyView } from '../api-types';
import { AUTH_STRATEGY, type ApiKeyCredentials } from '../auth-scheme';
import { keyScopeOf, routeAccess } from '../route-access';
import { API_TAG, BEARER_SECURITY, GROUP_KEYS } from '../route-context';

/**
 * GET /v1/keys/current: the calling key's name and scope, so that a client (the MCP
 * server over stdio, the web interface) can make inboxes its key reaches.
 */
export function keyRoutes(): ServerRoute[] {
    const current = (request: Request): CurrentKeyView => {
        const { keyName } = request.auth.credentials.app as ApiKeyCredentials;
        const { inboxPrefix, readOnly } = keyScopeOf(request);
        return { name: keyName, inboxPrefix, readOnly };
    };

    return [
        {
            method: 'GET',
            path: '/v1/keys/current',
            options: {
                auth: { strategy: AUTH_STRATEGY, mode: 'required' },
                tags: [API_TAG, GROUP_KEYS],
                description: 'The calling API key: its name and scope',
                notes: 'A key made with `--inbox-prefix` reaches only inboxes whose name starts with it; a `--read-only` key gets 403 on every change.',
                plugins: {
                    ...routeAccess({ access: 'read' }),
                    'hapi-swagger': {
                        id: 'getCurrentKey',
                        security: BEARER_SECURITY,
                        responses: {
                            200: { description: 'The key', schema: currentKeySchema },
                            ...errorResponses({ 401: ['UNAUTHORIZED'], ...SERVER_ERRORS })
                        }
                    }
                }
            },
            handler: current
        }
    ];
}
