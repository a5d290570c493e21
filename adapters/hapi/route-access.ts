import type { Lifecycle, Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import { FULL_ACCESS, inboxInScope } from '../../lib/identity/key-scope';
import type { KeyScope } from '../../lib/types';
import { AUTH_STRATEGY, type ApiKeyCredentials } from './auth-scheme';
import { quoted } from '../error-detail/detail-line';
import { apiError } from './error-mapping';

/**
 * What a keyed route does, declared on the route itself: `read` serves any key, `change`
 * refuses read-only keys. `inboxFromQuery` names the inbox the request works on in its
 * `inbox` query parameter, which must lie inside the key's prefix.
 */
export interface RouteAccess {
    access: 'read' | 'change';
    inboxFromQuery?: boolean;
}

declare module '@hapi/hapi' {
    interface PluginSpecificConfiguration {
        'inbox-capture'?: RouteAccess;
    }
}

/** The `options.plugins` of a keyed route, declaring its access. */
export function routeAccess(access: RouteAccess): { 'inbox-capture': RouteAccess } {
    return { 'inbox-capture': access };
}

/** The scope of the key a request was authenticated with (full access for credentials a host made without one). */
export function keyScopeOf(request: Request): KeyScope {
    const app = request.auth.credentials?.app as Partial<ApiKeyCredentials> | undefined;
    return app?.scope ?? FULL_ACCESS;
}

/**
 * Throws at registration when a route behind the API key declares no access: a new route
 * must decide what read-only and prefix-scoped keys may do with it.
 */
export function assertAccessDeclared(routes: ServerRoute[]): void {
    for (const route of routes) {
        const auth = route.options && typeof route.options === 'object' ? (route.options as { auth?: unknown }).auth : undefined;
        const keyed = typeof auth === 'object' && auth !== null && (auth as { strategy?: string }).strategy === AUTH_STRATEGY;
        const declared = route.options && typeof route.options === 'object' ? (route.options as { plugins?: { 'inbox-capture'?: RouteAccess } }).plugins?.['inbox-capture'] : undefined;
        if (keyed && !declared) {
            throw new Error(`inbox-capture plugin: route ${String(route.method)} ${route.path} needs an API key but declares no access (routeAccess())`);
        }
    }
}

/**
 * The plugin's `onPreHandler` (sandboxed to its routes): after authentication (401) and
 * validation (400), a read-only key on a route that changes, or an inbox outside the key's
 * prefix, is 403 FORBIDDEN. Emails of other inboxes are the handlers' to hide (404).
 */
export function enforceRouteAccess(request: Request, h: ResponseToolkit): Lifecycle.ReturnValue {
    const declared = request.route.settings.plugins?.['inbox-capture'];
    if (!declared || !request.auth.isAuthenticated) {
        return h.continue;
    }

    const scope = keyScopeOf(request);
    if (declared.access === 'change' && scope.readOnly) {
        throw apiError(403, 'FORBIDDEN', `key scope: this key is read-only; ${request.method.toUpperCase()} ${request.route.path} changes data`);
    }

    const inbox = (request.query as { inbox: string }).inbox;
    if (declared.inboxFromQuery && !inboxInScope(scope, inbox)) {
        throw apiError(403, 'FORBIDDEN', `key scope: inbox ${quoted(inbox)} is outside the prefix ${quoted(scope.inboxPrefix)}`);
    }

    return h.continue;
}
