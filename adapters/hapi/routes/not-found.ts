import type { Request, ServerRoute } from '@hapi/hapi';
import { quoted } from '../../error-detail/detail-line';
import { apiError } from '../error-mapping';

/** The methods a route of the API may have, in the order an `Allow` header lists them. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const CATCH_ALL = '/v1/{any*}';

/**
 * The methods the plugin has a route for at `request`'s path, other than this catch-all
 * (hapi answers HEAD with a GET route, so a GET brings HEAD along). The host's routes are
 * the host's to answer for: they do not count.
 */
function allowedMethods(request: Request): string[] {
    const { path } = request;
    const host = request.info.hostname;
    const { path: catchAll, realm } = request.route;
    return METHODS.filter((method) => {
        const route = request.server.match(method === 'HEAD' ? 'GET' : method, path, host);
        return route !== null && route.path !== catchAll && route.realm === realm;
    });
}

/**
 * Unknown paths under the plugin's `/v1` answer `{ "error": "NOT_FOUND" }`; a known path
 * asked with a method it does not have answers 405 `{ "error": "METHOD_NOT_ALLOWED" }`
 * with an `Allow` header (docs/api.md, "Errors"). hapi prefers every more specific route,
 * so the host's own `/v1/...` routes still win; the host's 404 everywhere else is untouched.
 */
export function notFoundRoute(): ServerRoute {
    return {
        method: '*',
        path: CATCH_ALL,
        options: {
            auth: false,
            // Not an endpoint: left out of the OpenAPI document.
            handler: (request: Request) => {
                const allowed = allowedMethods(request);
                const method = request.method.toUpperCase();
                if (allowed.length === 0) {
                    throw apiError(404, 'NOT_FOUND', `path: no endpoint at ${quoted(request.path)}`);
                }

                const allow = allowed.join(', ');
                throw apiError(405, 'METHOD_NOT_ALLOWED', `method: ${method} is not allowed on ${quoted(request.path)} (allowed: ${allow})`, { Allow: allow });
            }
        }
    };
}
