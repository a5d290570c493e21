import type { RouteOptions, ServerRoute } from '@hapi/hapi';
import { ERROR_DETAIL_HEADER } from '../error-detail/detail-line';

/** The part of hapi's CORS settings this file reads. */
interface CorsSettings {
    additionalExposedHeaders?: string[];
}

/**
 * `routes` with the detail header added to what browsers may read, when the host turned
 * CORS on (`Hapi.server({ routes: { cors } })`, docs/api.md, "Errors"). The host's own
 * extra exposed headers are kept; with CORS off nothing changes, and no route turns it on.
 */
export function exposeErrorDetail(routes: ServerRoute[], hostCors: unknown): ServerRoute[] {
    if (!hostCors) {
        return routes;
    }

    const host = (typeof hostCors === 'object' ? hostCors : {}) as CorsSettings;
    const additionalExposedHeaders = [...(host.additionalExposedHeaders ?? []), ERROR_DETAIL_HEADER];
    return routes.map((route) => {
        const options = (route.options ?? {}) as RouteOptions;
        // A route that set its own CORS (none of ours does today) keeps it.
        if (options.cors !== undefined) {
            return route;
        }

        return { ...route, options: { ...options, cors: { additionalExposedHeaders } } };
    });
}
