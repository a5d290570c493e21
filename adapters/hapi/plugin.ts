import type { Plugin, Server, ServerRoute } from '@hapi/hapi';
import type { Readable } from 'node:stream';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import { openEmbeddedBlobStore, openEmbeddedRecordStore } from '../../lib/service/embedded-stores';
import { createInboxCapture, type InboxCapture } from '../../lib/service/inbox-capture';
import type { IngestOptions } from '../../lib/ingest/ingest';
import { packageVersion } from '../../lib/util/package-version';
import type { RecordStore } from '../../lib/record-store/record-store';
import type { WebhookDispatcher } from '../webhooks/webhook-dispatcher';
import { startWebhooks } from '../webhooks/start-webhooks';
import type { EmailView } from './api-types';
import { registerAuth } from './auth-scheme';
import { docsRoutes } from './docs-page';
import { exposeErrorDetail } from './cors-expose';
import { createEmailJsonSource } from './email-json';
import { toEmailView } from './email-view';
import { releaseAfterResponse } from './json-response';
import { malformedPathGuard } from './malformed-path';
import { OPENAPI_PATH, openapiRoute } from './openapi';
import { validateOptions, type InboxCapturePluginOptions, type ResolvedPluginOptions } from './options-schema';
import { shapePluginResponse } from './response-ext';
import { assertAccessDeclared, enforceRouteAccess } from './route-access';
import type { RouteContext } from './route-context';
import { checkRoutes } from './routes/checks';
import { blobRoutes, servesOwnLinks } from './routes/blobs';
import { downloadRoutes } from './routes/downloads';
import { emailRoutes } from './routes/emails';
import { sendRoutes } from './routes/send';
import { faultRoutes } from './routes/faults';
import { releaseRoutes } from './routes/release';
import { linkCheckRoutes } from './routes/checks-links';
import { linkCheckerFor } from '../link-check/link-check-options';
import { authCheckRoutes } from './routes/checks-auth';
import { authDnsFor } from '../auth-check/auth-check-options';
import { startRelay, type StartedRelay } from '../relay/start-relay';
import { inboxRoutes } from './routes/inboxes';
import { keyRoutes } from './routes/keys';
import { mcpRoutes } from './routes/mcp';
import { notFoundRoute } from './routes/not-found';
import { countRequests, metricsRoute } from './routes/metrics';
import { enableMetrics } from '../metrics/service-metrics';
import { healthRoute, versionRoute } from './routes/public';
import { downloadOrigins, uiRoutes } from './ui-routes';

/** The plugin's name: `server.plugins['inbox-capture']`, `server.registrations['inbox-capture']`. */
export const PLUGIN_NAME = 'inbox-capture';

/** What the plugin exposes on `server.plugins['inbox-capture']`. */
export interface InboxCapturePluginApi {
    /**
     * Ingests one message through the plugin's service and wakes its long-polls (for an MTA
     * hook in the same process), as `capture.ingestRawEmail()` does; answers the API's email
     * objects (not records), URLs under the plugin's prefix.
     */
    ingestForApi(raw: Buffer | string | Readable, options?: IngestOptions): Promise<EmailView[]>;
    /** The service the routes use. */
    capture: InboxCapture;
}

declare module '@hapi/hapi' {
    interface PluginProperties {
        'inbox-capture': InboxCapturePluginApi;
    }
}

/** Where the plugin reports failures that are handled but worth knowing: the server's log. */
type Log = (message: string, error?: unknown) => void;

// The service from the options, and the closers of whatever the plugin opened itself.
async function buildCapture(options: ResolvedPluginOptions, log: Log): Promise<{ capture: InboxCapture; owned: Array<() => Promise<void>>; ownsAll: boolean }> {
    if (options.capture) {
        return { capture: options.capture, owned: [], ownsAll: false };
    }

    const owned: Array<() => Promise<void>> = [];
    let recordStore: RecordStore | undefined = options.recordStore;
    let blobStore: BlobStore | undefined = options.blobStore;
    try {
        if (!blobStore) {
            const store = await openEmbeddedBlobStore({ dataDir: options.dataDir, signingSecret: options.signingSecret });
            owned.push(async () => store.close?.());
            blobStore = store;
        }

        if (!recordStore) {
            const store = await openEmbeddedRecordStore({ dataDir: options.dataDir });
            owned.push(() => store.close());
            recordStore = store;
        }
    }
    catch (err) {
        await closeAll(owned);
        throw err;
    }

    const capture = createInboxCapture({
        recordStore,
        blobStore,
        maxMessageBytes: options.maxMessageBytes,
        maxMessageBytesInFlight: options.maxMessageBytesInFlight,
        downloadTtlSeconds: options.downloadTtlSeconds,
        inboxFromAddress: options.inboxFromAddress,
        retention: options.retention,
        log
    });
    return { capture, owned, ownsAll: !options.recordStore && !options.blobStore };
}

async function closeAll(closers: Array<() => Promise<void>>): Promise<void> {
    for (const close of closers) {
        await close();
    }
}

/**
 * The Hapi plugin: every endpoint of the API (docs/design.md) on the plugin's own routes,
 * a good guest otherwise (no default auth, no server-wide response extensions).
 */
export const plugin: Plugin<InboxCapturePluginOptions> = {
    name: PLUGIN_NAME,
    version: packageVersion(),
    requirements: { hapi: '>=21.0.0', node: '>=20.0.0' },

    async register(server: Server, rawOptions: InboxCapturePluginOptions) {
        const options = validateOptions(rawOptions);
        const version = packageVersion();
        const prefix = server.realm.modifiers.route.prefix ?? '';
        const log: Log = (message, error) => server.log(['inbox-capture', 'warning'], { message, error });
        const { capture, owned, ownsAll } = await buildCapture(options, log);
        // Closing the service closes both stores and stops watching; with a store of
        // the caller's, only what the plugin opened is closed.
        const close = ownsAll ? () => capture.close() : () => closeAll(owned);

        const emailJson = createEmailJsonSource(capture.messageBudget, prefix);
        const context: RouteContext = { capture, prefix, emailJson, maxPageBytes: options.maxPageBytes, longPolls: new Set() };
        let webhooks: WebhookDispatcher | undefined;
        let relay: StartedRelay | undefined;
        try {
            registerAuth(server, capture);
            // The HTTP port is read when a check runs: a server on port 0 has its port only once started.
            const linkChecker = options.linkCheck ? linkCheckerFor(options.linkCheck, () => (typeof server.info.port === 'number' && server.info.port > 0 ? [server.info.port] : [])) : undefined;
            const authDns = authDnsFor(options.authCheck);
            const keyed = [
                ...emailRoutes(context), ...sendRoutes(context), ...inboxRoutes(context), ...downloadRoutes(context), ...keyRoutes(),
                ...faultRoutes(context), ...releaseRoutes(context, () => relay?.relay), ...checkRoutes(context),
                ...linkCheckRoutes(context, linkChecker),
                ...authCheckRoutes(context, authDns)
            ];
            if (options.mcp) {
                const log = (message: string, error: unknown) => server.log(['inbox-capture', 'error'], { message, error });
                keyed.push(...mcpRoutes({ ...context, mailDomain: options.mailDomain, origins: options.mcpOrigins, version, log, ...(linkChecker ? { linkChecker } : {}), authDns }));
            }

            assertAccessDeclared(keyed);
            // Every route of the plugin: browsers of a host with CORS may read the detail header.
            const route = (routes: ServerRoute | ServerRoute[]) => server.route(exposeErrorDetail(([] as ServerRoute[]).concat(routes), server.settings.routes?.cors));
            route([...keyed, notFoundRoute()]);
            if (servesOwnLinks(capture.blobStore)) {
                route(blobRoutes(capture.blobStore, async (key) => (await capture.recordStore.referencedBlobKeys([key])).has(key)));
            }

            // Under their own prefix if asked, beside a host's own /health.
            const publicRoutes = options.publicRoutes;
            const at = publicRoutes.prefix;
            if (publicRoutes.health) {
                route(healthRoute(at));
            }

            if (publicRoutes.version) {
                route(versionRoute(version, at));
            }

            if (options.docs && publicRoutes.openapi) {
                route(openapiRoute(version, at));
            }

            if (options.docs && publicRoutes.docs) {
                route(docsRoutes({ prefix, at, openapiPath: `${at}${OPENAPI_PATH}`, title: 'inbox-capture API' }));
            }

            if (options.metrics !== 'off') {
                // Turned on here, for the service: the SMTP listener and webhooks built on it count into the same registry.
                const metrics = enableMetrics(capture, () => capture.longPoller.waiterCount());
                route(metricsRoute(metrics, options.metrics, at));
                server.ext('onPostResponse', countRequests(metrics), { sandbox: 'plugin' });
            }

            if (options.ui) {
                route(uiRoutes({ prefix, connectSources: await downloadOrigins(capture.blobStore) }));
            }

            // Last: a route clash with the host (say its own /health) fails before any migration.
            await capture.start();
            if (options.webhooks.length > 0) {
                // The plugin sends them, not the core: the email object as GET /v1/emails/{messageId}
                // answers it, under this registration's prefix.
                webhooks = startWebhooks(capture, { ...options.webhookDelivery, targets: options.webhooks, render: (record) => toEmailView(record, prefix), log });
            }

            if (options.relay) {
                relay = startRelay(capture, options.relay, log);
            }
        }
        catch (err) {
            await webhooks?.close();
            await relay?.close();
            await close();
            throw err;
        }

        // Sandboxed: only this plugin's routes are shaped; the host's are never touched.
        server.ext('onPreResponse', shapePluginResponse, { sandbox: 'plugin' });
        // The emails' JSON an answer held goes back to the memory budget once it is sent.
        server.ext('onPostResponse', releaseAfterResponse, { sandbox: 'plugin' });
        // After authentication and validation: 401, then 400, then 403 (docs/api.md, "Keys with a scope").
        server.ext('onPreHandler', enforceRouteAccess, { sandbox: 'plugin' });
        // Server-wide (hapi answers an undecodable path from a route of its own), but it
        // acts only on paths under the plugin's /v1.
        server.ext('onPreResponse', malformedPathGuard(prefix));

        // Waiting requests answer their empty page at once, so a stopping server drains fast.
        server.ext('onPreStop', () => {
            for (const controller of context.longPolls) {
                controller.abort();
            }
        });
        // The dispatcher first: its last writes need the stores open.
        server.ext('onPostStop', async () => {
            await webhooks?.close();
            await relay?.close();
            await close();
        });

        const api: InboxCapturePluginApi = {
            ingestForApi: async (raw, ingestOptions) => (await capture.ingestRawEmail(raw, ingestOptions)).map((record) => toEmailView(record, prefix)),
            capture
        };
        server.expose('ingestForApi', api.ingestForApi);
        server.expose('capture', capture);
    }
};
