import * as Path from 'node:path';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import { BLOBS_DIRNAME, BLOBS_SQLITE_FILENAME, DEFAULT_DATA_DIR, SQLITE_FILENAME } from '../../lib/defaults';
import type { RecordStore } from '../../lib/record-store/record-store';
import { MissingPackageError, requireInstalled } from '../../lib/util/optional-package';
import type { RetentionOptions } from '../../lib/service/retention';
import { ConfigError } from './config-error';
import { DEFAULT_HOST, DEFAULT_HTTP_PORT } from './http-defaults';
import { readRetentionEnv } from './retention-config';
import { mailDomainSchema } from '../mcp/mail-domain';
import { mcpOriginsSchema } from '../hapi/mcp-origin';
import type { MetricsAccess } from '../hapi/routes/metrics';
import { DEFAULT_SMTP_PORT } from '../smtp/smtp-defaults';
import { readWebhookEnv, type WebhookEnv } from '../webhooks/webhook-env';
import { readLinkCheckEnv } from '../link-check/link-check-env';
import type { LinkCheckOptions } from '../link-check/link-check-options';
import { readAuthCheckEnv } from '../auth-check/auth-check-env';
import type { AuthCheckOptions } from '../auth-check/auth-check-options';
import { readRelayEnv } from '../relay/relay-env';
import type { RelayOptions } from '../relay/relay-options';
import { settingName } from './serve-flags';

// In a file of their own, so that the CLI's help shows them without loading this one.
export { DEFAULT_HOST, DEFAULT_HTTP_PORT };

/** Where the S3 blob store lives; credentials come from the AWS SDK's own chain. */
export interface S3Config {
    bucket: string;
    endpoint?: string;
    region: string;
    forcePathStyle: boolean;
}

/** The service configuration read from the environment (docs/design.md, "Configuration"). */
export interface EnvConfig {
    /** Absolute path of INBOX_CAPTURE_DATA_DIR. */
    dataDir: string;
    /** DATABASE_URL when it selects Postgres; absent means SQLite in `dataDir`. */
    databaseUrl?: string;
    /** Present when S3_BUCKET selects the S3 blob store; absent means files in `dataDir`. */
    s3?: S3Config;
    host: string;
    port: number;
    /** 0 disables the SMTP listener. */
    smtpPort: number;
    /** INBOX_CAPTURE_SIGNING_SECRET; absent means generated once and kept in `dataDir`. */
    signingSecret?: string;
    /** INBOX_CAPTURE_MAX_HTTP_CONNECTIONS; absent means derived from the open-file limit (http-connection-cap.ts). */
    maxHttpConnections?: number;
    /** INBOX_CAPTURE_MAX_MESSAGE_BYTES_IN_FLIGHT; absent means the service's default budget (128 MiB). */
    maxMessageBytesInFlight?: number;
    /** INBOX_CAPTURE_RETENTION_*; absent means off (docs/operations.md, "Retention"). */
    retention?: RetentionOptions;
    /** INBOX_CAPTURE_WEBHOOK_*: the plugin's `webhooks` and `webhookDelivery` options (absent: no webhooks). */
    webhooks?: WebhookEnv;
    /** INBOX_CAPTURE_MAIL_DOMAIN: the plugin's `mailDomain` (absent: its default). */
    mailDomain?: string;
    /** INBOX_CAPTURE_RELAY_*: the plugin's `relay` option (absent: no relay). */
    relay?: RelayOptions;
    /** INBOX_CAPTURE_LINK_CHECK_ALLOW: the plugin's `linkCheck` option (absent: the link check is off). */
    linkCheck?: LinkCheckOptions;
    /** INBOX_CAPTURE_DNS_SERVERS: the plugin's `authCheck` option (absent: the system's DNS servers). */
    authCheck?: AuthCheckOptions;
    /** INBOX_CAPTURE_MCP_ORIGINS: the plugin's `mcpOrigins` (absent: its default, none). */
    mcpOrigins?: string[];
    /** INBOX_CAPTURE_METRICS: the plugin's `metrics` (absent: its default, off). */
    metrics?: MetricsAccess;
}

export { ConfigError };

/** Treats an empty variable as unset (`PORT= node …` should mean the default). */
export function read(env: NodeJS.ProcessEnv, name: string): string | undefined {
    const value = env[name]?.trim();
    return value ? value : undefined;
}

/** A port variable (0..65535), or `fallback` when unset; throws ConfigError otherwise. */
export function readPort(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
    const value = read(env, name);
    if (value === undefined) {
        return fallback;
    }

    if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) {
        throw new ConfigError(`${settingName(name)} must be a port number 0..65535, got "${value}"`);
    }

    return Number(value);
}

function readBoolean(env: NodeJS.ProcessEnv, name: string): boolean {
    const value = read(env, name)?.toLowerCase();
    if (value === undefined || value === 'false' || value === '0') {
        return false;
    }

    if (value === 'true' || value === '1') {
        return true;
    }

    throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

/** Reads and validates the configuration; throws ConfigError on the first bad variable. */
export function readEnvConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): EnvConfig {
    const config: EnvConfig = {
        dataDir: Path.resolve(cwd, read(env, 'INBOX_CAPTURE_DATA_DIR') ?? DEFAULT_DATA_DIR),
        host: read(env, 'HOST') ?? DEFAULT_HOST,
        port: readPort(env, 'PORT', DEFAULT_HTTP_PORT),
        smtpPort: readPort(env, 'SMTP_PORT', DEFAULT_SMTP_PORT)
    };

    const databaseUrl = read(env, 'DATABASE_URL');
    if (databaseUrl !== undefined) {
        if (!/^postgres(ql)?:\/\//i.test(databaseUrl)) {
            // Never echo the value: it usually holds a password.
            throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL (unset it to use SQLite in the data dir)');
        }

        config.databaseUrl = databaseUrl;
    }

    const bucket = read(env, 'S3_BUCKET');
    if (bucket !== undefined) {
        const endpoint = read(env, 'S3_ENDPOINT');
        if (endpoint !== undefined && !/^https?:\/\/[^\s]+$/i.test(endpoint)) {
            throw new ConfigError(`S3_ENDPOINT must be an http:// or https:// URL, got "${endpoint}"`);
        }

        config.s3 = {
            bucket,
            endpoint,
            region: read(env, 'S3_REGION') ?? read(env, 'AWS_REGION') ?? 'us-east-1',
            forcePathStyle: readBoolean(env, 'S3_FORCE_PATH_STYLE')
        };
    }

    const signingSecret = read(env, 'INBOX_CAPTURE_SIGNING_SECRET');
    if (signingSecret !== undefined) {
        // 16 bytes is the floor the file-based secret also enforces: shorter is guessable.
        if (Buffer.byteLength(signingSecret) < 16) {
            throw new ConfigError('INBOX_CAPTURE_SIGNING_SECRET must be at least 16 characters');
        }

        config.signingSecret = signingSecret;
    }

    const maxHttpConnections = read(env, 'INBOX_CAPTURE_MAX_HTTP_CONNECTIONS');
    if (maxHttpConnections !== undefined) {
        if (!/^\d{1,9}$/.test(maxHttpConnections) || Number(maxHttpConnections) < 1) {
            throw new ConfigError(`INBOX_CAPTURE_MAX_HTTP_CONNECTIONS must be a whole number 1..999999999, got "${maxHttpConnections}"`);
        }

        config.maxHttpConnections = Number(maxHttpConnections);
    }

    const inFlight = read(env, 'INBOX_CAPTURE_MAX_MESSAGE_BYTES_IN_FLIGHT');
    if (inFlight !== undefined) {
        if (!/^\d{1,15}$/.test(inFlight) || Number(inFlight) < 1) {
            throw new ConfigError(`INBOX_CAPTURE_MAX_MESSAGE_BYTES_IN_FLIGHT must be a whole number of bytes, at least 1, got "${inFlight}"`);
        }

        config.maxMessageBytesInFlight = Number(inFlight);
    }

    const retention = readRetentionEnv((name) => read(env, name), (message) => new ConfigError(message));
    if (retention) {
        config.retention = retention;
    }

    const webhooks = readWebhookEnv((name) => read(env, name), (message) => {
        throw new ConfigError(message);
    });
    if (webhooks) {
        config.webhooks = webhooks;
    }

    const mailDomain = readMailDomain(env);
    if (mailDomain !== undefined) {
        config.mailDomain = mailDomain;
    }

    const mcpOrigins = read(env, 'INBOX_CAPTURE_MCP_ORIGINS');
    if (mcpOrigins !== undefined) {
        const { value, error } = mcpOriginsSchema.validate(mcpOrigins.split(',').map((o) => o.trim()).filter((o) => o !== ''));
        if (error) {
            throw new ConfigError(`INBOX_CAPTURE_MCP_ORIGINS must be comma-separated origins such as https://agent.example: ${error.message}`);
        }

        config.mcpOrigins = value as string[];
    }

    const metrics = read(env, 'INBOX_CAPTURE_METRICS');
    if (metrics !== undefined) {
        if (metrics !== 'off' && metrics !== 'on' && metrics !== 'key') {
            throw new ConfigError(`INBOX_CAPTURE_METRICS must be off, on or key, not ${JSON.stringify(metrics)}`);
        }

        config.metrics = metrics;
    }

    const relay = readRelayEnv((name) => read(env, name), (message) => {
        throw new ConfigError(message);
    });
    if (relay) {
        config.relay = relay;
    }

    const linkCheck = readLinkCheckEnv((name) => read(env, name), (message) => {
        throw new ConfigError(message);
    });
    if (linkCheck) {
        config.linkCheck = linkCheck;
    }

    const authCheck = readAuthCheckEnv((name) => read(env, name), (message) => {
        throw new ConfigError(message);
    });
    if (authCheck) {
        config.authCheck = authCheck;
    }

    return config;
}

/** INBOX_CAPTURE_MAIL_DOMAIN, checked: the domain of MCP new_inbox's addresses, or undefined when unset. */
export function readMailDomain(env: NodeJS.ProcessEnv): string | undefined {
    const value = read(env, 'INBOX_CAPTURE_MAIL_DOMAIN');
    if (value !== undefined && mailDomainSchema.validate(value).error) {
        throw new ConfigError(`INBOX_CAPTURE_MAIL_DOMAIN must be a domain name such as example.test, got "${value}"`);
    }

    return value;
}

/** The stores a configuration selects, ready for createInboxCapture(). */
export interface ConfiguredStores {
    recordStore: RecordStore;
    blobStore: BlobStore;
}

/** A one-line description of where data goes, without secrets (for start-up output). */
export function describeStores(config: EnvConfig): string {
    const records = config.databaseUrl ? 'Postgres (DATABASE_URL)' : Path.join(config.dataDir, SQLITE_FILENAME);
    // With the records in SQLite, an ingest's small files commit with them, in the same file.
    const small = config.databaseUrl ? Path.join(config.dataDir, BLOBS_SQLITE_FILENAME) : `${records} with the records`;
    const blobs = config.s3 ?
        `files in S3 bucket ${config.s3.bucket}` :
        `small files in ${small}, large ones in ${Path.join(config.dataDir, BLOBS_DIRNAME)}`;
    return `records in ${records}, ${blobs}`;
}

/**
 * Opens the stores the configuration selects: SQLite and files in the data dir by
 * default, Postgres with DATABASE_URL, S3 with S3_BUCKET (each independently).
 * Drivers load only when selected, so the embedded default never loads the AWS SDK; they
 * are optional peer dependencies, and a missing one is a ConfigError that names it.
 * The record store is not migrated yet (InboxCapture.start() or RecordStore.migrate() does).
 */
export async function openStoresFromConfig(config: EnvConfig): Promise<ConfiguredStores> {
    // Both drivers before either store: a missing one must leave nothing created behind.
    if (config.databaseUrl) {
        needPackages(['pg'], 'DATABASE_URL is a Postgres URL');
    }

    if (config.s3) {
        needPackages(['@aws-sdk/client-s3', '@aws-sdk/s3-request-presigner'], 'S3_BUCKET selects the S3 blob store');
    }

    const recordStore = await openRecordStore(config);
    try {
        const blobStore = await openBlobStore(config);
        return { recordStore, blobStore };
    }
    catch (err) {
        await recordStore.close();
        throw err;
    }
}

/** The optional drivers a setting needs, or a ConfigError saying which to install (docs/api.md, "Environment variables"). */
function needPackages(names: string[], setting: string): void {
    try {
        requireInstalled(names, setting);
    }
    catch (err) {
        if (err instanceof MissingPackageError) {
            throw new ConfigError(err.message);
        }

        throw err;
    }
}

// The stores load when opened, not with the configuration: `inbox-capture --help` and a
// configuration mistake need neither Knex nor SQLite.
async function openRecordStore(config: EnvConfig): Promise<RecordStore> {
    if (!config.databaseUrl) {
        const { openEmbeddedRecordStore } = await import('../../lib/service/embedded-stores');
        return openEmbeddedRecordStore({ dataDir: config.dataDir });
    }

    const { openPostgresKnex } = await import('../../lib/record-store/postgres/postgres-knex');
    const { createKnexRecordStore } = await import('../../lib/record-store/knex-record-store');
    return createKnexRecordStore({ knex: openPostgresKnex(config.databaseUrl), destroyKnexOnClose: true });
}

async function openBlobStore(config: EnvConfig): Promise<BlobStore> {
    if (!config.s3) {
        const { openEmbeddedBlobStore } = await import('../../lib/service/embedded-stores');
        return openEmbeddedBlobStore({ dataDir: config.dataDir, signingSecret: config.signingSecret });
    }

    const { S3Client } = await import('@aws-sdk/client-s3');
    const { createS3BlobStore } = await import('../../lib/blob-store/s3-blob-store');
    const client = new S3Client({
        region: config.s3.region,
        forcePathStyle: config.s3.forcePathStyle,
        ...(config.s3.endpoint ? { endpoint: config.s3.endpoint } : {})
    });
    const store = createS3BlobStore({ client, bucket: config.s3.bucket });
    return {
        ...store,
        // The S3 store never destroys a client it was given; this one is ours.
        async close() {
            await store.close?.();
            client.destroy();
        }
    };
}
