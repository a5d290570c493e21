import type { Request, ServerRoute } from '@hapi/hapi';
import { linkTargets } from '../../../lib/link-check/link-targets';
import type { LinkChecker } from '../../link-check/link-checker';
import { errorResponses, linkChecksSchema, SERVER_ERRORS } from '../api-schemas';
import type { LinkChecksView } from '../api-types';
import { AUTH_STRATEGY } from '../auth-scheme';
import { apiError } from '../error-mapping';
import { keyScopeOf, routeAccess } from '../route-access';
import { API_TAG, BEARER_SECURITY, GROUP_EMAILS, type RouteContext } from '../route-context';
import { messageIdParams, noSuchEmail, paramsFailAction } from './emails';

/** POST /v1/emails/{messageId}/checks/links (docs/api.md, "Link check"): HEAD to each http(s) link; off without a `linkCheck` option. */
export function linkCheckRoutes(context: RouteContext, checker: LinkChecker | undefined): ServerRoute[] {
    const { capture } = context;

    const check = async (request: Request): Promise<LinkChecksView> => {
        // Off says so only to a key that may read the email's inbox: 401 and 404 come first.
        const record = await capture.getEmail(request.params.messageId as string, keyScopeOf(request));
        if (!record) {
            throw noSuchEmail(request.params.messageId);
        }

        if (!checker) {
            throw apiError(403, 'LINK_CHECK_DISABLED', 'link check: off until INBOX_CAPTURE_LINK_CHECK_ALLOW (the plugin\'s linkCheck option) says what may be asked');
        }

        return { links: await checker.check(linkTargets(record.links)) };
    };

    return [{
        method: 'POST',
        path: '/v1/emails/{messageId}/checks/links',
        options: {
            auth: { strategy: AUTH_STRATEGY, mode: 'required' },
            tags: [API_TAG, GROUP_EMAILS],
            description: 'Check the links of one email with HEAD requests',
            notes: 'Every http(s) link of the email\'s `links`, in order (at most 100), asked with HEAD only (never GET), redirects followed by hand up to 5, 5 s a link, 5 at once. Off until INBOX_CAPTURE_LINK_CHECK_ALLOW says what may be asked; every hop\'s address is checked before connecting, and loopback, private, link-local and the like (also inside IPv6 transition forms) and the service\'s own ports are refused unless listed by address.',
            validate: { params: messageIdParams, failAction: paramsFailAction },
            plugins: {
                ...routeAccess({ access: 'read' }),
                'hapi-swagger': {
                    id: 'checkLinks',
                    security: BEARER_SECURITY,
                    responses: {
                        200: { description: 'Each link\'s outcome', schema: linkChecksSchema },
                        ...errorResponses({ 401: ['UNAUTHORIZED'], 403: ['LINK_CHECK_DISABLED'], 404: ['NOT_FOUND'], ...SERVER_ERRORS })
                    }
                }
            }
        },
        handler: check
    }];
}
