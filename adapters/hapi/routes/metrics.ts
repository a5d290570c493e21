import type { Lifecycle, Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { ServiceMetrics } from '../../metrics/service-metrics';
import { AUTH_STRATEGY } from '../auth-scheme';
import { routeAccess } from '../route-access';

/** Who may read `/metrics` (docs/operations.md, "Metrics"): nobody (no route), anyone, or any valid key. */
export type MetricsAccess = 'off' | 'on' | 'key';

/**
 * GET /metrics: the service's metrics in the Prometheus text format, under `at` beside
 * /health. Not in the OpenAPI document: its body is for Prometheus, not for API clients.
 */
export function metricsRoute(metrics: ServiceMetrics, access: Exclude<MetricsAccess, 'off'>, at = ''): ServerRoute {
    return {
        method: 'GET',
        path: `${at}/metrics`,
        options: {
            auth: access === 'key' ? { strategy: AUTH_STRATEGY } : false,
            // Any valid key may read it, read-only and prefix-scoped ones too: figures, no mail.
            ...(access === 'key' ? { plugins: routeAccess({ access: 'read' }) } : {}),
            description: 'Prometheus metrics'
        },
        handler: async (_request, h) => h.response(await metrics.registry.metrics()).type(metrics.registry.contentType)
    };
}

/**
 * The plugin's `onPostResponse` (sandboxed to its routes): one count per answered request,
 * by method and route template (never the raw path: one series per route, not per email) and status.
 */
export function countRequests(metrics: ServiceMetrics): Lifecycle.Method {
    return (request: Request, h: ResponseToolkit) => {
        const response = request.response as { statusCode?: number; output?: { statusCode: number } } | null;
        const status = response?.output?.statusCode ?? response?.statusCode ?? 0;
        metrics.httpRequest(`${request.method.toUpperCase()} ${request.route.path}`, status);
        return h.continue;
    };
}
