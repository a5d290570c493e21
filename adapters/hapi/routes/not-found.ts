import type { ServerRoute } from '@hapi/hapi';
import { apiError } from '../error-mapping';

/**
 * Unknown paths and methods under the plugin's `/v1` answer `{ "error": "NOT_FOUND" }`
 * (docs/design.md). hapi prefers every more specific route, so the host's own `/v1/...`
 * routes still win; the host's 404 everywhere else is untouched.
 */
export function notFoundRoute(): ServerRoute {
    return {
        method: '*',
        path: '/v1/{any*}',
        options: {
            auth: false,
            // Not an endpoint: left out of the OpenAPI document.
            handler: () => {
                throw apiError(404, 'NOT_FOUND');
            }
        }
    };
}
