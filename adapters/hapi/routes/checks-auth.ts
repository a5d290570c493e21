import type { Request, ServerRoute } from '@hapi/hapi';
import type { AuthDns } from '../../../lib/auth-check/auth-check-types';
import { keptAuthCheck } from '../../../lib/service/auth-check-kept';
import { authCheckSchema, errorResponses, SERVER_ERRORS } from '../api-schemas';
import type { AuthCheckView } from '../api-types';
import { AUTH_STRATEGY } from '../auth-scheme';
import { keyScopeOf, routeAccess } from '../route-access';
import { API_TAG, BEARER_SECURITY, GROUP_EMAILS, type RouteContext } from '../route-context';
import { messageIdParams, noSuchEmail, paramsFailAction } from './emails';

/** GET /v1/emails/{messageId}/checks/auth (docs/api.md, "Authentication check"): SPF, DKIM, DMARC and ARC, worked out once and kept. */
export function authCheckRoutes(context: RouteContext, dns: () => AuthDns): ServerRoute[] {
    const { capture } = context;

    const check = async (request: Request): Promise<AuthCheckView> => {
        const result = await keptAuthCheck(capture, request.params.messageId as string, keyScopeOf(request), dns);
        if (!result) {
            throw noSuchEmail(request.params.messageId);
        }

        return result;
    };

    return [{
        method: 'GET',
        path: '/v1/emails/{messageId}/checks/auth',
        options: {
            auth: { strategy: AUTH_STRATEGY, mode: 'required' },
            tags: [API_TAG, GROUP_EMAILS],
            description: 'Check the SPF, DKIM, DMARC and ARC of one email',
            notes: 'Worked out with mailauth on the first request and kept: later requests answer the same verdicts and `checkedAt`, and ask DNS nothing. SPF uses the SMTP client\'s address, HELO name and envelope sender kept at ingest (`none` without the address). DNS goes to INBOX_CAPTURE_DNS_SERVERS (the plugin\'s authCheck.dnsServers; default the system\'s), 5 s for the whole check: a lookup unanswered by then is `temperror`.',
            validate: { params: messageIdParams, failAction: paramsFailAction },
            plugins: {
                ...routeAccess({ access: 'read' }),
                'hapi-swagger': {
                    id: 'getAuthCheck',
                    security: BEARER_SECURITY,
                    responses: {
                        200: { description: 'The email\'s authentication verdicts', schema: authCheckSchema },
                        ...errorResponses({ 401: ['UNAUTHORIZED'], 404: ['NOT_FOUND'], ...SERVER_ERRORS })
                    }
                }
            }
        },
        handler: check
    }];
}
