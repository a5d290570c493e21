import type { ServerRoute } from '@hapi/hapi';
import { healthSchema, versionSchema } from '../api-schemas';
import type { HealthView, VersionView } from '../api-types';
import { API_TAG, GROUP_SERVICE } from '../route-context';

/** API versions this plugin serves (docs/design.md). */
export const API_VERSIONS = ['v1'];

/** GET /health (docs/design.md): liveness of the HTTP layer, cheap enough for a tight probe interval. */
export function healthRoute(): ServerRoute {
    return {
        method: 'GET',
        path: '/health',
        options: {
            auth: false,
            tags: [API_TAG, GROUP_SERVICE],
            description: 'Health check',
            plugins: { 'hapi-swagger': { responses: { 200: { description: 'The service is up', schema: healthSchema } } } }
        },
        handler: (): HealthView => ({ status: 'ok', timestamp: Date.now() })
    };
}

/** GET /version (docs/design.md): this package's version and the API versions it serves. */
export function versionRoute(version: string): ServerRoute {
    return {
        method: 'GET',
        path: '/version',
        options: {
            auth: false,
            tags: [API_TAG, GROUP_SERVICE],
            description: 'Service and API versions',
            plugins: { 'hapi-swagger': { responses: { 200: { description: 'Versions', schema: versionSchema } } } }
        },
        handler: (): VersionView => ({ version, apiVersions: API_VERSIONS })
    };
}
