import * as Boom from '@hapi/boom';
import type { Request } from '@hapi/hapi';
import { isInboxCaptureError } from '../../lib/errors';

/** Every `error` code the plugin's routes answer with. */
export type ApiErrorCode =
    | 'UNAUTHORIZED'
    | 'FORBIDDEN'
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
    | 'UNSUPPORTED_MEDIA_TYPE'
    | 'SERVICE_UNAVAILABLE'
    | 'INTERNAL_ERROR';

/** Seconds a client should wait before retrying when the record store is unavailable. */
export const RETRY_AFTER_SECONDS = 5;

/** The one WWW-Authenticate value of every 401, whatever was wrong with the token (docs/design.md). */
export const WWW_AUTHENTICATE = 'Bearer';

/** An error the plugin raises on purpose: its status and code reach the client as they are. */
export class ApiError extends Error {
    readonly code: ApiErrorCode;

    constructor(code: ApiErrorCode) {
        super(code);
        this.name = 'ApiError';
        this.code = code;
    }
}

/** A Boom error carrying one of our codes (Boom, so hapi does not log it as a crash). */
export function apiError(statusCode: number, code: ApiErrorCode): Boom.Boom {
    return Boom.boomify(new ApiError(code), { statusCode });
}

/** What the client gets for an error: status, body code and extra headers. */
export interface ErrorReply {
    statusCode: number;
    code: ApiErrorCode;
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
 * THE mapping from anything a plugin route can fail with to `{ error: CODE }`.
 * Unknown failures are 500 INTERNAL_ERROR with the failure as `cause`, which the
 * response extension hands to hapi's log of failed requests (never to the client);
 * a 503 of the core is logged on the request here.
 */
export function toErrorReply(err: unknown, request: Request): ErrorReply {
    const { statusCode, code } = classify(err, request);
    // Every 401 looks the same, whatever the token was (docs/design.md).
    const headers: Record<string, string> = statusCode === 401 ? { 'WWW-Authenticate': WWW_AUTHENTICATE } :
        statusCode === 503 ? { 'Retry-After': String(RETRY_AFTER_SECONDS) } : {};
    return statusCode === 500 ? { statusCode, code, headers, cause: err } : { statusCode, code, headers };
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
