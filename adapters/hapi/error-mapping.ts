import * as Boom from '@hapi/boom';
import type { Request } from '@hapi/hapi';
import { isInboxCaptureError } from '../../lib/errors';
import { detailLine, ERROR_DETAIL_HEADER, quoted } from '../error-detail/detail-line';

/** Every `error` code the plugin's routes answer with. */
export type ApiErrorCode =
    | 'UNAUTHORIZED'
    | 'FORBIDDEN'
    | 'LINK_CHECK_DISABLED'
    | 'NOT_FOUND'
    | 'MISSING_INBOX'
    | 'INVALID_INBOX'
    | 'INVALID_LIMIT'
    | 'VALIDATION_ERROR'
    | 'RECIPIENT_NOT_ALLOWED'
    | 'RELAY_NOT_CONFIGURED'
    | 'RELAY_FAILED'
    | 'FAULT_LIMIT_REACHED'
    | 'METHOD_NOT_ALLOWED'
    | 'PAYLOAD_TOO_LARGE'
    | 'TOO_LARGE'
    | 'UNSUPPORTED_MEDIA_TYPE'
    | 'SERVICE_UNAVAILABLE'
    | 'INTERNAL_ERROR';

/** Seconds a client should wait before retrying when the record store is unavailable. */
export const RETRY_AFTER_SECONDS = 5;

/** The one WWW-Authenticate value of every 401, whatever was wrong with the token (docs/design.md). */
export const WWW_AUTHENTICATE = 'Bearer';

/**
 * An error the plugin raises on purpose: its status and code reach the client as they are,
 * and `detail` (what is wrong, in our words) as the detail header of a 4xx.
 */
export class ApiError extends Error {
    readonly code: ApiErrorCode;
    /** Headers the answer needs besides the detail (a 405's `Allow`). */
    readonly headers: Readonly<Record<string, string>>;
    // Private, and the message is the code alone: hapi logs a handler's error, and loggers
    // walk its properties, but the detail may echo the request (a token pasted into a path).
    readonly #detail: string | undefined;

    constructor(code: ApiErrorCode, detail?: string, headers: Record<string, string> = {}) {
        super(code);
        this.name = 'ApiError';
        this.code = code;
        this.#detail = detail;
        this.headers = headers;
    }

    /** What is wrong, in our words: the detail header of a 4xx. */
    get detail(): string | undefined {
        return this.#detail;
    }
}

/** A Boom error carrying one of our codes and what is wrong (Boom, so hapi does not log it as a crash). */
export function apiError(statusCode: number, code: ApiErrorCode, detail?: string, headers?: Record<string, string>): Boom.Boom {
    return Boom.boomify(new ApiError(code, detail, headers), { statusCode });
}

/** What the client gets for an error: status, body code and extra headers. */
export interface ErrorReply {
    statusCode: number;
    code: ApiErrorCode;
    /** Headers to add, the detail header of a 4xx among them. */
    headers: Record<string, string>;
    /** The failure behind a 500, for the server log (never the body). */
    cause?: unknown;
}

// Client errors hapi itself raises on our routes (payload parsing, method, size), by status.
const CLIENT_CODES: Record<number, ApiErrorCode> = {
    400: 'VALIDATION_ERROR',
    401: 'UNAUTHORIZED',
    403: 'FORBIDDEN',
    404: 'NOT_FOUND',
    405: 'METHOD_NOT_ALLOWED',
    413: 'PAYLOAD_TOO_LARGE',
    415: 'UNSUPPORTED_MEDIA_TYPE'
};

/**
 * THE mapping from anything a plugin route can fail with to `{ error: CODE }`, and of
 * every 4xx but a 401 to its detail header (docs/api.md, "Errors").
 * Unknown failures are 500 INTERNAL_ERROR with the failure as `cause`, which the
 * response extension hands to hapi's log of failed requests (never to the client);
 * a 503 of the core is logged on the request here.
 */
export function toErrorReply(err: unknown, request: Request): ErrorReply {
    const { statusCode, code } = classify(err, request);
    // Every 401 looks the same, whatever the token was (docs/design.md).
    const headers: Record<string, string> = statusCode === 401 ? { 'WWW-Authenticate': WWW_AUTHENTICATE } :
        statusCode === 503 ? { 'Retry-After': String(RETRY_AFTER_SECONDS) } : { ...(err instanceof ApiError ? err.headers : {}) };
    if (statusCode >= 400 && statusCode < 500 && statusCode !== 401) {
        headers[ERROR_DETAIL_HEADER] = detailLine(detailOf(err, statusCode, code, request));
    }

    return statusCode === 500 ? { statusCode, code, headers, cause: err } : { statusCode, code, headers };
}

// What is wrong: the words the route gave, or those of hapi's own refusal.
function detailOf(err: unknown, statusCode: number, code: ApiErrorCode, request: Request): string {
    const raised = err instanceof ApiError ? err : undefined;
    if (raised?.detail !== undefined) {
        return raised.detail;
    }

    switch (statusCode) {
        case 404:
            return `path: nothing at ${String(request.method).toUpperCase()} ${quoted(request.path)}`;
        case 413: {
            const maxBytes = request.route?.settings.payload?.maxBytes;
            return maxBytes === undefined ? 'body: too large' : `body: larger than ${maxBytes} bytes`;
        }

        case 415:
            return `content-type: ${quoted(request.headers?.['content-type'] ?? '')} is not accepted here; send application/json`;
        default:
            break;
    }

    // hapi's own words for a body it cannot read ("Invalid request payload JSON format").
    const message = Boom.isBoom(err) ? err.message : '';
    if (statusCode === 400 && /JSON/.test(message)) {
        return 'body: not valid JSON';
    }

    return message ? `request: ${message}` : `request: refused (${code})`;
}

function classify(err: unknown, request: Request): { statusCode: number; code: ApiErrorCode } {
    if (err instanceof ApiError) {
        return { statusCode: statusOf(err), code: err.code };
    }

    if (isInboxCaptureError(err)) {
        if (err.code === 'NOT_FOUND') {
            return { statusCode: 404, code: 'NOT_FOUND' };
        }

        // A database that is down or busy, or a spent memory budget, is transient: the client may retry.
        // Every other core code on these paths means something is broken, not the request.
        if (err.code === 'RECORD_STORE_UNAVAILABLE' || err.code === 'BUSY') {
            request.log(['error', 'inbox-capture'], err);
            return { statusCode: 503, code: 'SERVICE_UNAVAILABLE' };
        }

        return { statusCode: 500, code: 'INTERNAL_ERROR' };
    }

    // hapi's own errors on our routes: 4xx for the request (bad payload, unknown method,
    // too large), 503 for its server timeout, 500 for anything thrown unexpectedly.
    const status = statusOf(err);
    if (status < 500) {
        return { statusCode: CLIENT_CODES[status] ? status : 400, code: CLIENT_CODES[status] ?? 'VALIDATION_ERROR' };
    }

    if (status === 503) {
        return { statusCode: 503, code: 'SERVICE_UNAVAILABLE' };
    }

    return { statusCode: 500, code: 'INTERNAL_ERROR' };
}

function statusOf(err: unknown): number {
    return Boom.isBoom(err) ? err.output.statusCode : 500;
}
