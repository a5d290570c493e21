import * as Boom from '@hapi/boom';
import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';
import { toErrorReply } from './error-mapping';

/**
 * The plugin's `onPreResponse`, registered with `sandbox: 'plugin'` so it sees only
 * the plugin's own routes: every error becomes `{ "error": CODE }`, and every
 * response is marked `nosniff`. The host's responses never pass through here.
 */
export function shapePluginResponse(request: Request, h: ResponseToolkit): Lifecycle.ReturnValue {
    const response = request.response;
    if (Boom.isBoom(response)) {
        const reply = toErrorReply(response, request);
        const out = h.response({ error: reply.code }).code(reply.statusCode).header('X-Content-Type-Options', 'nosniff');
        for (const [name, value] of Object.entries(reply.headers)) {
            out.header(name, value);
        }

        return out;
    }

    response.header('X-Content-Type-Options', 'nosniff');
    return h.continue;
}
