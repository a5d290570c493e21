/**
 * Which web pages may call /mcp (docs/api.md, "MCP"): MCP's HTTP transport asks servers to
 * check `Origin`, so that a page a browser was lured to (DNS rebinding onto a local
 * service, say) cannot talk to it. Clients that are not browsers send no `Origin`.
 */

import Joi from 'joi';

/** Longest origin accepted in the allow-list, characters. */
const MAX_ORIGIN_LENGTH = 255;

/** The plugin option `mcpOrigins`: origins (`scheme://host[:port]`) a browser-based agent may call /mcp from. */
export const mcpOriginsSchema = Joi.array().items(
    Joi.string().max(MAX_ORIGIN_LENGTH).uri({ scheme: ['http', 'https'] }).custom((value: string, helpers) => {
        const url = new URL(value);
        // An origin is scheme, host and port alone: a path or query would never match one.
        if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || value.endsWith('/')) {
            return helpers.message({ custom: '{{#label}} must be an origin: scheme://host[:port], with nothing after it' });
        }

        return url.origin;
    })
).default([]);

/**
 * True when a request with this `Origin` may use /mcp: none given (not a browser), or one
 * listed. The service's own name is not trusted on its face: under DNS rebinding a hostile
 * page's `Origin` and `Host` name the same attacker's domain.
 */
export function mcpOriginAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
    if (origin === undefined) {
        return true;
    }

    let parsed: URL;
    try {
        parsed = new URL(origin);
    }
    catch {
        // `null` (a sandboxed frame, a file) and anything else that is not an origin.
        return false;
    }

    return parsed.origin !== 'null' && allowed.includes(parsed.origin);
}
