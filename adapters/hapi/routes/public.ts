import type { ServerRoute } from '@hapi/hapi';
import { healthSchema, versionSchema } from '../api-schemas';
import type { HealthView, VersionView } from '../api-types';
import { API_TAG, GROUP_SERVICE, PUBLIC_SECURITY } from '../route-context';

/** API versions this plugin serves (docs/design.md). */
export const API_VERSIONS = ['v1'];

/** GET /health (docs/design.md): liveness of the HTTP layer, cheap enough for a tight probe interval; under `at` if given. */
export function healthRoute(at = ''): ServerRoute {
    return {
        method: 'GET',
        path: `${at}/health`,
        options: {
            auth: false,
            tags: [API_TAG, GROUP_SERVICE],
            description: 'Health check',
            notes: 'Answers while the HTTP layer runs; it does not touch the stores, so it stays cheap at a tight probe interval.',
            plugins: { 'hapi-swagger': { id: 'health', security: PUBLIC_SECURITY, responses: { 200: { description: 'The service is up', schema: healthSchema } } } }
        },
        handler: (): HealthView => ({ status: 'ok', timestamp: Date.now() })
    };
}

/** GET /version (docs/design.md): this package's version and the API versions it serves; under `at` if given. */
export function versionRoute(version: string, at = ''): ServerRoute {
    return {
        method: 'GET',
        path: `${at}/version`,
        options: {
            auth: false,
            tags: [API_TAG, GROUP_SERVICE],
            description: 'Service and API versions',
            notes: 'The package version and the API versions this server answers (`v1`).',
            plugins: { 'hapi-swagger': { id: 'getVersion', security: PUBLIC_SECURITY, responses: { 200: { description: 'Versions', schema: versionSchema } } } }
        },
        handler: (): VersionView => ({ version, apiVersions: API_VERSIONS })
    };
}
