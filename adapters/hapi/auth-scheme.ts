import type { Request, ResponseToolkit, Server, ServerAuthSchemeObject } from '@hapi/hapi';
import type { InboxCapture } from '../../lib/inbox-capture';
import { apiError } from './error-mapping';

/** Name of the auth scheme the plugin registers (auth names are server-wide, hence the prefix). */
export const AUTH_SCHEME = 'inbox-capture-bearer';
/** Name of the strategy the plugin's protected routes use; never made the server default. */
export const AUTH_STRATEGY = 'inbox-capture-api-key';

/**
 * Longest token looked up, characters. Our keys are 46 (`ic_` + 43 base64url); the
 * cap keeps hashing and the key lookup bounded whatever a client sends.
 */
export const MAX_TOKEN_LENGTH = 512;

// `<scheme> <token>`, exactly one space, the scheme word case-insensitive (DECISIONS),
// the token an RFC 6750 b64token. Anything else is "malformed" and never reaches the store.
const AUTHORIZATION = /^bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

// Whitespace around a field value is not part of it (RFC 9110 §5.5); Node's parser
// strips it from real requests, and this makes injected ones behave the same.
const OUTER_WHITESPACE = /^[ \t]+|[ \t]+$/g;

/** `request.auth.credentials.app` of an authenticated request: the key's name, never the token or its hash. */
export interface ApiKeyCredentials {
    keyName: string;
}

/** The token of a well-formed `Authorization: Bearer <token>` header, or null. */
export function parseBearer(header: unknown): string | null {
    if (typeof header !== 'string' || header.length > MAX_TOKEN_LENGTH + 7) {
        return null;
    }

    const match = AUTHORIZATION.exec(header.replace(OUTER_WHITESPACE, ''));
    return match ? match[1] : null;
}

/**
 * Registers the API-key scheme and strategy on the server. Missing, malformed,
 * unknown and revoked tokens all fail the same way (spec §5.5); a broken key store
 * is an error of its own, never a 401.
 */
export function registerAuth(server: Server, capture: InboxCapture): void {
    const scheme = (): ServerAuthSchemeObject => ({
        async authenticate(request: Request, h: ResponseToolkit) {
            const token = parseBearer(request.headers.authorization);
            const key = token === null ? null : await capture.verifyKey(token);
            if (!key) {
                throw apiError(401, 'UNAUTHORIZED');
            }

            const app: ApiKeyCredentials = { keyName: key.name };
            return h.authenticated({ credentials: { app } });
        }
    });

    server.auth.scheme(AUTH_SCHEME, scheme);
    server.auth.strategy(AUTH_STRATEGY, AUTH_SCHEME);
}
