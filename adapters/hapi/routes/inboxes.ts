import type { Request, ServerRoute } from '@hapi/hapi';
import { errorResponses, inboxPageSchema, SERVER_ERRORS } from '../api-schemas';
import { AUTH_STRATEGY } from '../auth-scheme';
import { inboxListQuerySchema, toInboxQuery, type InboxListValues } from '../inbox-query-schema';
import { toInboxPageView } from '../inbox-view';
import { queryFailAction } from '../list-query-schema';
import { listingPrefix } from '../../../lib/identity/key-scope';
import { keyScopeOf, routeAccess } from '../route-access';
import { API_TAG, BEARER_SECURITY, GROUP_INBOXES, type RouteContext } from '../route-context';

/** GET /v1/inboxes: the inboxes that hold mail, most recently received first (docs/api.md, "GET /v1/inboxes"). */
export function inboxRoutes(context: RouteContext): ServerRoute[] {
    const { capture } = context;

    const list = async (request: Request) => {
        const values = request.query as unknown as InboxListValues;
        // A key with an inbox prefix lists only its own inboxes, whatever prefix it asks for.
        const prefix = listingPrefix(keyScopeOf(request), values.prefix);
        if (prefix === null) {
            return toInboxPageView({ inboxes: [], hasMore: false });
        }

        return toInboxPageView(await capture.listInboxes(toInboxQuery({ ...values, prefix })));
    };

    return [
        {
            method: 'GET',
            path: '/v1/inboxes',
            options: {
                auth: { strategy: AUTH_STRATEGY, mode: 'required' },
                tags: [API_TAG, GROUP_INBOXES],
                description: 'List the inboxes that hold mail, most recently received first',
                notes: 'Each inbox with its number of emails and the time of its newest; ties on that time go by name. An inbox whose last email is deleted is no longer listed. A key with an inbox prefix sees only the inboxes inside it. Errors take precedence in this order: 401, INVALID_LIMIT, VALIDATION_ERROR.',
                // queryFailAction's precedence holds here too: no `inbox` parameter exists, so a stray one is VALIDATION_ERROR.
                validate: { query: inboxListQuerySchema, options: { abortEarly: false }, failAction: queryFailAction },
                plugins: {
                    ...routeAccess({ access: 'read' }),
                    'hapi-swagger': {
                        id: 'listInboxes',
                        security: BEARER_SECURITY,
                        responses: {
                            200: { description: 'One page of inboxes', schema: inboxPageSchema },
                            ...errorResponses({ 400: ['INVALID_LIMIT', 'VALIDATION_ERROR'], 401: ['UNAUTHORIZED'], ...SERVER_ERRORS })
                        }
                    }
                }
            },
            handler: list
        }
    ];
}
