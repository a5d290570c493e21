import Joi from 'joi';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import type { InboxCapture } from '../../lib/service/inbox-capture';
import { DEFAULT_DATA_DIR } from '../../lib/defaults';
import { INBOX_PATTERN, MAX_INBOX_LENGTH, type InboxFromAddress } from '../../lib/identity/recipients';
import type { RecordStore } from '../../lib/record-store/record-store';
import { MAX_PER_INBOX_LIMIT, MAX_RETENTION_DURATION_MS, MIN_RETENTION_DURATION_MS, type RetentionOptions } from '../../lib/service/retention';
import {
    DEFAULT_WEBHOOK_CONCURRENCY, DEFAULT_WEBHOOK_FIRST_RETRY_MS, DEFAULT_WEBHOOK_GIVE_UP_MS, DEFAULT_WEBHOOK_MAX_RETRY_MS,
    DEFAULT_WEBHOOK_POLL_MS, DEFAULT_WEBHOOK_TIMEOUT_MS, type WebhookDeliveryOptions
} from '../webhooks/webhook-dispatcher';
import { webhookKey } from '../webhooks/webhook-secret';
import type { WebhookTarget } from '../webhooks/webhook-target';
import { DEFAULT_MAIL_DOMAIN, mailDomainSchema } from '../mcp/mail-domain';
import { mcpOriginsSchema } from './mcp-origin';
import type { MetricsAccess } from './routes/metrics';
import { relayOptionsSchema, type RelayOptions } from '../relay/relay-options';
import { linkCheckOptionsSchema, type LinkCheckOptions } from '../link-check/link-check-options';
import { authCheckOptionsSchema, type AuthCheckOptions } from '../auth-check/auth-check-options';

/** Longest download-link lifetime, seconds: 7 days, the most an S3 presigned URL allows. */
export const MAX_DOWNLOAD_TTL_SECONDS = 7 * 24 * 3600;
/** Shortest signing secret, characters: an HMAC key weaker than 128 bits is guessable. */
export const MIN_SIGNING_SECRET_LENGTH = 16;
/**
 * Byte budget of one list page's JSON: 8 MiB. A page ends before `limit` emails when the
 * next one would pass it (a single larger email is a page of its own), so a full inbox of
 * 24 MiB messages never makes one response (or the server's memory) hold 100 of them.
 * Measured: bench/README.md, "Tuned constants › DEFAULT_MAX_PAGE_BYTES".
 */
export const DEFAULT_MAX_PAGE_BYTES = 8 * 1024 * 1024;

/** Longest webhook URL, characters: what browsers and proxies reliably take. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Where the public routes are and which exist (docs/api.md, "Plugin options"). */
export interface PublicRoutesOptions {
    /** A path they are mounted under, `/inbox-capture` say, beside a host's own `/health` (default none). */
    prefix?: string;
    health?: boolean;
    version?: boolean;
    openapi?: boolean;
    docs?: boolean;
}

/** The public routes after validation: `true` and `false` spelt out. */
export type ResolvedPublicRoutes = Required<PublicRoutesOptions>;

/** Longest `publicRoutes.prefix`, characters: a path segment or two, not a document. */
export const MAX_PUBLIC_ROUTES_PREFIX_LENGTH = 100;

/** Options of `server.register({ plugin, options })`. Every one is optional. */
export interface InboxCapturePluginOptions {
    /** A ready service (e.g. shared with an SMTP listener); excludes the store and ingest options. */
    capture?: InboxCapture;
    /** Where records and keys live (default: SQLite in `dataDir`). */
    recordStore?: RecordStore;
    /** Where raw messages and attachments live (default: files in `dataDir`). */
    blobStore?: BlobStore;
    /** Directory of the embedded stores (default `./data`). */
    dataDir?: string;
    /** HMAC key of the embedded filesystem store's links (default: generated once in `dataDir`). */
    signingSecret?: string;
    /** Largest accepted message, bytes (default 25 MiB). */
    maxMessageBytes?: number;
    /** Raw message bytes the service's ingests hold at once (default 128 MiB); past it, ingests fail with BUSY. */
    maxMessageBytesInFlight?: number;
    /** Lifetime of download links, seconds (default 900). */
    downloadTtlSeconds?: number;
    /** Byte budget of one list page's JSON; a page ends early to stay within it (default 8 MiB). */
    maxPageBytes?: number;
    /** Recipient address → inbox name (default: the local-part rule of docs/design.md). */
    inboxFromAddress?: InboxFromAddress;
    /** `false` removes /openapi.json and /docs (default true). */
    docs?: boolean;
    /**
     * `/health`, `/version`, `/openapi.json` and `/docs`: `true` (default) mounts them,
     * `false` leaves them out, `{ prefix }` mounts them under a path of their own;
     * `{ health: false }` and the like leave single ones out.
     */
    publicRoutes?: boolean | PublicRoutesOptions;
    /** Deletes old mail every `intervalMs` (docs/operations.md, "Retention"): past `maxAgeMs`, beyond the newest `maxPerInbox` per inbox (default: off). */
    retention?: RetentionOptions;
    /** `false` removes the web interface at /ui (default true). */
    ui?: boolean;
    /** Told of every stored email with a POST (docs/api.md, "Webhooks"; default none). Allowed with `capture`. */
    webhooks?: WebhookTarget[];
    /** Timing of webhook deliveries (docs/api.md; each has a default). */
    webhookDelivery?: WebhookDeliveryOptions;
    /** `false` removes the MCP server at /mcp (default true). */
    mcp?: boolean;
    /** The domain of the addresses MCP's new_inbox makes (default `inbox-capture.test`). */
    mailDomain?: string;
    /** Origins (`https://agent.example`) whose browser pages may call /mcp (default none: only clients that send no `Origin`). */
    mcpOrigins?: string[];
    /** A real SMTP server captured mail may be released to (docs/api.md, "Release"; default none). */
    relay?: RelayOptions;
    /** What POST .../checks/links may ask (docs/api.md, "Link check"; default none: the check is off). */
    linkCheck?: LinkCheckOptions;
    /** GET /metrics (docs/operations.md, "Metrics"): `'off'` (default), `'on'` (public) or `'key'` (any valid API key). */
    metrics?: MetricsAccess;
    /** The DNS servers GET .../checks/auth asks (docs/api.md, "Authentication check"; default the system's). */
    authCheck?: AuthCheckOptions;
}

/**
 * The options after validation: the plugin's own defaults applied. Those of the service
 * it builds (message caps, budget, link lifetime, retention interval) are the service's
 * to apply, so they stay as given.
 */
export interface ResolvedPluginOptions extends InboxCapturePluginOptions {
    dataDir: string;
    maxPageBytes: number;
    docs: boolean;
    publicRoutes: ResolvedPublicRoutes;
    ui: boolean;
    webhooks: WebhookTarget[];
    webhookDelivery: Required<WebhookDeliveryOptions>;
    mcp: boolean;
    mailDomain: string;
    mcpOrigins: string[];
    metrics: MetricsAccess;
}

// An object with these methods, checked by shape (stores from another copy of this
// package, or hand-written ones, are fine) and passed on as it is: Joi.any() never
// clones, and a live store must stay the very object the caller holds.
const withMethods = (label: string, methods: string[]) => Joi.any()
    .custom((value: unknown, helpers) => {
        if (typeof value !== 'object' || value === null) {
            return helpers.message({ custom: `"${label}" must be an object` });
        }

        const missing = methods.filter((m) => typeof (value as Record<string, unknown>)[m] !== 'function');
        return missing.length === 0 ? value : helpers.message({ custom: `"${label}" lacks ${missing.map((m) => `${m}()`).join(', ')}` });
    });

const STORE_OPTIONS = ['recordStore', 'blobStore', 'dataDir', 'signingSecret', 'maxMessageBytes', 'maxMessageBytesInFlight', 'downloadTtlSeconds', 'inboxFromAddress', 'retention'];

// Durations of retention, ms: docs/operations.md, "Retention" allows `1s` as the shortest.
const retentionDuration = Joi.number().integer().min(MIN_RETENTION_DURATION_MS).max(MAX_RETENTION_DURATION_MS);

/** The plugin's options: one schema, the only place their defaults live. */
export const optionsSchema = Joi.object({
    capture: withMethods('capture', ['start', 'ingestRawEmail', 'listEmails', 'waitForEmails', 'getEmail', 'deleteEmail', 'deleteInbox', 'rawDownloadLink', 'attachmentDownloadLink', 'verifyKey', 'close']),
    recordStore: withMethods('recordStore', ['migrate', 'saveEmails', 'getEmail', 'listEmails', 'listInboxes', 'inboxVersion', 'deleteEmail', 'deleteInboxBatch', 'findActiveKeyByHash', 'close']),
    blobStore: withMethods('blobStore', ['put', 'get', 'delete', 'listBlobs', 'createDownloadLink']),
    dataDir: Joi.string().min(1).default(DEFAULT_DATA_DIR),
    signingSecret: Joi.string().min(MIN_SIGNING_SECRET_LENGTH),
    maxMessageBytes: Joi.number().integer().min(1),
    maxMessageBytesInFlight: Joi.number().integer().min(1),
    downloadTtlSeconds: Joi.number().integer().min(1).max(MAX_DOWNLOAD_TTL_SECONDS),
    maxPageBytes: Joi.number().integer().min(1).default(DEFAULT_MAX_PAGE_BYTES),
    inboxFromAddress: Joi.function().maxArity(1),
    docs: Joi.boolean().default(true),
    retention: Joi.object({
        maxAgeMs: retentionDuration,
        maxPerInbox: Joi.number().integer().min(1).max(MAX_PER_INBOX_LIMIT),
        intervalMs: retentionDuration
    }).or('maxAgeMs', 'maxPerInbox'),
    publicRoutes: Joi.alternatives(
        // `true` and `false` are every route on or off, at their own paths.
        Joi.boolean().custom((on: boolean) => ({ prefix: '', health: on, version: on, openapi: on, docs: on })),
        Joi.object({
            // A path: `/` then segments of URL-safe characters, no trailing slash, no `..`.
            prefix: Joi.string().max(MAX_PUBLIC_ROUTES_PREFIX_LENGTH).pattern(/^(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$/).default(''),
            health: Joi.boolean().default(true),
            version: Joi.boolean().default(true),
            openapi: Joi.boolean().default(true),
            docs: Joi.boolean().default(true)
        })
    ).default(() => ({ prefix: '', health: true, version: true, openapi: true, docs: true })),
    ui: Joi.boolean().default(true),
    mcp: Joi.boolean().default(true),
    mailDomain: mailDomainSchema.default(DEFAULT_MAIL_DOMAIN),
    mcpOrigins: mcpOriginsSchema,
    webhooks: Joi.array().items(Joi.object({
        url: Joi.string().uri({ scheme: ['http', 'https'] }).max(MAX_WEBHOOK_URL_LENGTH).required(),
        // `whsec_<base64>` or plain text (docs/api.md, "Webhooks"); a malformed whsec_ fails at registration.
        secret: Joi.string().min(1).custom((value: string, helpers) => {
            const key = webhookKey(value);
            return typeof key === 'string' ? helpers.message({ custom: key }) : value;
        }),
        inboxes: Joi.array().items(Joi.string().max(MAX_INBOX_LENGTH).pattern(INBOX_PATTERN)).min(1)
    })).unique('url').default([]),
    webhookDelivery: Joi.object({
        // At most 10 s: a 2xx within 10 s is success (docs/api.md, "Webhooks").
        timeoutMs: Joi.number().integer().min(1).max(DEFAULT_WEBHOOK_TIMEOUT_MS).default(DEFAULT_WEBHOOK_TIMEOUT_MS),
        // At most 10 s: the first retry comes within 10 s.
        firstRetryMs: Joi.number().integer().min(1).max(10_000).default(DEFAULT_WEBHOOK_FIRST_RETRY_MS),
        maxRetryMs: Joi.number().integer().min(1).default(DEFAULT_WEBHOOK_MAX_RETRY_MS),
        giveUpAfterMs: Joi.number().integer().min(1).default(DEFAULT_WEBHOOK_GIVE_UP_MS),
        pollIntervalMs: Joi.number().integer().min(10).default(DEFAULT_WEBHOOK_POLL_MS),
        concurrency: Joi.number().integer().min(1).max(1000).default(DEFAULT_WEBHOOK_CONCURRENCY)
    }).default(),
    relay: relayOptionsSchema,
    linkCheck: linkCheckOptionsSchema,
    authCheck: authCheckOptionsSchema,
    metrics: Joi.string().valid('off', 'on', 'key').default('off')
})
    .custom((value: ResolvedPluginOptions, helpers) => {
        // The page is Swagger UI over the document: without the document it would be empty.
        if (value.docs && value.publicRoutes.docs && !value.publicRoutes.openapi) {
            return helpers.message({ custom: '"publicRoutes.docs" needs "publicRoutes.openapi" (the page shows that document); turn both off or keep both' });
        }

        return value;
    });

/**
 * Validates the caller's options once, on a clone (theirs stay untouched), with a
 * clear message for a wrong one. Throws at registration, so a typo fails start-up.
 */
export function validateOptions(options: unknown): ResolvedPluginOptions {
    const raw = (options ?? {}) as Record<string, unknown>;
    if (raw.capture !== undefined) {
        const clash = STORE_OPTIONS.filter((name) => raw[name] !== undefined);
        if (clash.length > 0) {
            throw new Error(`inbox-capture plugin: "capture" is a ready service; do not also pass ${clash.map((n) => `"${n}"`).join(', ')} (configure them where the service is created)`);
        }
    }

    const { error, value } = optionsSchema.validate({ ...raw }, { abortEarly: false, convert: false });
    if (error) {
        throw new Error(`inbox-capture plugin: invalid options: ${error.details.map((d) => d.message).join('; ')}`);
    }

    return value as ResolvedPluginOptions;
}
