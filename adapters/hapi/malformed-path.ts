import * as Boom from '@hapi/boom';
import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';
import { detailLine, ERROR_DETAIL_HEADER, quoted } from '../error-detail/detail-line';
import { secureResponse } from './response-ext';

/**
 * A server-wide `onPreResponse` for one case the plugin's sandboxed one cannot see: a
 * path hapi cannot percent-decode (`/v1/emails/%FF`) matches a route, fails to decode
 * its parameters, and is handed to hapi's own bad-request route (the root realm's,
 * with hapi's 400 body). Under the plugin's `/v1` such a path names no email and no
 * route, so it answers as an unknown path there does: 404 `{ "error": "NOT_FOUND" }`.
 * The host's paths are left as they are.
 */
export function malformedPathGuard(prefix: string): Lifecycle.Method {
    const base = `${prefix}/v1`;
    return (request: Request, h: ResponseToolkit) => {
        const response = request.response;
        // hapi's special routes (not found, bad request) have the method '_special'.
        if ((request.route.method as string) !== '_special' || !Boom.isBoom(response) || response.output.statusCode !== 400) {
            return h.continue;
        }

        const path = request.path;
        if (path === base || path.startsWith(`${base}/`)) {
            return secureResponse(h.response({ error: 'NOT_FOUND' }).code(404))
                .header(ERROR_DETAIL_HEADER, detailLine(`path: ${quoted(path)} cannot be percent-decoded`));
        }

        return h.continue;
    };
}
