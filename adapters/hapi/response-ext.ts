import * as Boom from '@hapi/boom';
import type { Lifecycle, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import { toErrorReply, type ErrorReply } from './error-mapping';
import { serialiseJsonNow } from './json-response';

/**
 * Headers on every response of the plugin, errors and redirects included: no browser
 * second-guesses a media type (a JSON body with mail content never runs as HTML or
 * script), and no page may frame any of it (clickjacking of the docs page).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY'
};

/**
 * Content-Security-Policy of every response that brings none of its own (the docs page
 * and downloads do): JSON needs no sources at all, and `frame-ancestors` is the modern
 * form of `X-Frame-Options`.
 */
export const DEFAULT_CSP = 'default-src \'none\'; frame-ancestors \'none\'';

/** Adds the security headers and the default CSP, each unless the response brings its own. */
export function secureResponse(response: ResponseObject): ResponseObject {
    // A route that sets its own (the web interface's viewer frame) keeps it; hapi keeps names lowercased.
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
        if (response.headers[name.toLowerCase()] === undefined) {
            response.header(name, value);
        }
    }

    if (response.headers['content-security-policy'] === undefined) {
        response.header('Content-Security-Policy', DEFAULT_CSP);
    }

    return response;
}

/**
 * The plugin's `onPreResponse`, registered with `sandbox: 'plugin'` so it sees only
 * the plugin's own routes: every error becomes `{ "error": CODE }`, and every
 * response carries the security headers. JSON is serialised here, not later by hapi,
 * so that a body that cannot be serialised is answered the same way (json-response.ts).
 * The host's responses never pass through here.
 */
export function shapePluginResponse(request: Request, h: ResponseToolkit): Lifecycle.ReturnValue {
    const response = request.response;
    if (Boom.isBoom(response)) {
        return errorResponse(h, toErrorReply(response, request));
    }

    let out: ResponseObject;
    try {
        out = serialiseJsonNow(request, response);
    }
    catch (err) {
        return errorResponse(h, toErrorReply(err, request));
    }

    secureResponse(out);
    return out === response ? h.continue : out;
}

function errorResponse(h: ResponseToolkit, reply: ErrorReply): ResponseObject | Boom.Boom {
    if (reply.statusCode === 500) {
        return internalError(reply);
    }

    const out = secureResponse(h.response({ error: reply.code }).code(reply.statusCode));
    for (const [name, value] of Object.entries(reply.headers)) {
        out.header(name, value);
    }

    return out;
}

/**
 * A 500 answered as a Boom error carrying its cause: hapi reports a 500 that carries its
 * error on the request's `error` channel, where hosts log failed requests, and tags it
 * `implementation`, which hapi's default debug settings print (docs/design.md, "Errors").
 * The client still gets only `{ "error": "INTERNAL_ERROR" }` and the security headers.
 */
function internalError(reply: ErrorReply): Boom.Boom {
    const { cause } = reply;
    const boom = Boom.isBoom(cause) ? cause : Boom.boomify(cause instanceof Error ? cause : new Error(String(cause)), { statusCode: 500 });
    if (boom.output.statusCode !== 500) {
        // A Boom of another 5xx (a 502 a handler raised): reported as the 500 it becomes.
        boom.output.statusCode = 500;
    }

    Object.assign(boom, { isDeveloperError: true });
    boom.output.payload = { error: reply.code } as unknown as Boom.Payload;
    boom.output.headers = { ...SECURITY_HEADERS, 'Content-Security-Policy': DEFAULT_CSP, ...reply.headers };
    return boom;
}
