'use strict';

// The whole service on one machine: Hapi + the inbox-capture plugin + the SMTP
// listener, sharing one service object. Configured only by environment variables
// (see docs/api.md): INBOX_CAPTURE_DATA_DIR, DATABASE_URL, S3_BUCKET (+ S3_ENDPOINT,
// S3_REGION, S3_FORCE_PATH_STYLE), HOST, PORT, SMTP_PORT, INBOX_CAPTURE_SIGNING_SECRET,
// INBOX_CAPTURE_MAX_HTTP_CONNECTIONS, INBOX_CAPTURE_MAX_MESSAGE_BYTES_IN_FLIGHT,
// SMTP_AUTH (+ SMTP_AUTH_USERS), SMTP_TLS (+ SMTP_TLS_CERT, SMTP_TLS_KEY),
// INBOX_CAPTURE_RETENTION_MAX_AGE / _MAX_PER_INBOX / _INTERVAL (retention, off by default),
// INBOX_CAPTURE_WEBHOOK_URL (+ INBOX_CAPTURE_WEBHOOK_SECRET), INBOX_CAPTURE_MAIL_DOMAIN (MCP's new_inbox).
// Orphan blobs (left by a crash) are swept at start and then hourly.
//
//   npm ci && node examples/standalone.js
//
// It runs the compiled package (npm ci builds it into dist/).

const Hapi = require('@hapi/hapi');

function load(path) {
    try {
        return require(path);
    }
    catch (err) {
        if (err.code === 'MODULE_NOT_FOUND' && String(err.message).includes(path.replace('../', ''))) {
            console.error('inbox-capture: the package is not built yet: run `npm ci` (or `npm run build`) first');
            process.exit(1);
        }

        throw err;
    }
}

const { createInboxCapture, DEFAULT_ORPHAN_SWEEP_INTERVAL_MS } = load('../dist/lib/service/inbox-capture');
const { createMessageBudget } = load('../dist/lib/service/message-budget');
const { inboxCapturePlugin } = load('../dist/adapters/hapi');
const { createSmtpListener, DEFAULT_MAX_CONNECTIONS: SMTP_MAX_CONNECTIONS } = load('../dist/adapters/smtp');
const { capHttpConnections, defaultMaxHttpConnections, readOpenFileLimit } = load('../dist/adapters/http-connection-cap');
const { resetSilentConnections } = load('../dist/adapters/http-silent-reset');
const { ConfigError, describeStores, openStoresFromConfig, readEnvConfig } = load('../dist/adapters/env-config');
const { describeSmtpSecurity, readSmtpEnvConfig } = load('../dist/adapters/smtp-env-config');

/** Milliseconds hapi waits for requests in flight on stop before cutting them (long-polls end at once). */
const HTTP_STOP_TIMEOUT_MS = 10_000;
/** Milliseconds after a clean stop before a leftover handle is no longer waited for. */
const EXIT_GRACE_MS = 2_000;

function logError(message, error) {
    console.error(`inbox-capture: ${message}${error ? `: ${error.stack || error}` : ''}`);
}

async function main() {
    let config;
    try {
        config = readEnvConfig();
        config.smtpSecurity = readSmtpEnvConfig();
    }
    catch (err) {
        if (err instanceof ConfigError) {
            console.error(`inbox-capture: configuration: ${err.message}`);
            process.exit(1);
        }

        throw err;
    }

    const stores = await openStoresFromConfig(config);
    // One budget for SMTP sessions and ingests alike (docs/guarantees.md).
    const messageBudget = config.maxMessageBytesInFlight === undefined ? undefined : createMessageBudget(config.maxMessageBytesInFlight);
    const capture = createInboxCapture({
        ...stores,
        messageBudget,
        retention: config.retention,
        orphanSweep: { intervalMs: DEFAULT_ORPHAN_SWEEP_INTERVAL_MS },
        log: logError
    });

    const server = Hapi.server({ host: config.host, port: config.port });
    // Below the open-file limit, so idle connections cannot starve SMTP, files or /health.
    const smtpConnections = config.smtpPort === 0 ? 0 : SMTP_MAX_CONNECTIONS;
    capHttpConnections(server.listener, config.maxHttpConnections ?? defaultMaxHttpConnections(readOpenFileLimit(), smtpConnections), logError);
    // Thousands of idle connections ending at once must not hold /health up (issue 17, attack 6).
    resetSilentConnections(server.listener);
    // Details of failures go to the log only; clients see { "error": "INTERNAL_ERROR" }.
    server.events.on({ name: 'request', channels: 'error' }, (request, event) => {
        logError(`${request.method.toUpperCase()} ${request.path} failed`, event.error);
    });
    server.events.on('log', (event, tags) => {
        if (tags.error || tags.warning) {
            logError(event.data && event.data.message ? event.data.message : 'server', event.data && event.data.error);
        }
    });

    let smtp = null;
    let smtpSecurityText = '';
    const stop = async () => {
        // Stop accepting on both sides at once; each lets what is in flight finish.
        await Promise.all([
            server.stop({ timeout: HTTP_STOP_TIMEOUT_MS }),
            smtp ? smtp.close() : undefined
        ]);
        await capture.close();
    };

    try {
        // One service for HTTP and SMTP: mail arriving over SMTP wakes the HTTP long-polls.
        // /mcp (the MCP server for agents) is on by default; its new_inbox makes addresses at INBOX_CAPTURE_MAIL_DOMAIN.
        await server.register({ plugin: inboxCapturePlugin, options: { capture, ...config.webhooks, ...(config.mailDomain ? { mailDomain: config.mailDomain } : {}) } });

        // People opening the service's address get the web interface (docs/ui.md).
        server.route({ method: 'GET', path: '/', options: { auth: false }, handler: (request, h) => h.redirect('/ui/') });

        // The host's choice (the plugin leaves host 404s alone): every unknown path answers
        // the API's error shape.
        server.route({
            method: '*',
            path: '/{any*}',
            options: { auth: false },
            handler: (request, h) => h.response({ error: 'NOT_FOUND' }).code(404)
        });

        await server.start();
        if (config.smtpPort !== 0) {
            smtp = createSmtpListener({ capture, host: config.host, port: config.smtpPort, log: logError, ...config.smtpSecurity });
            smtpSecurityText = describeSmtpSecurity(config.smtpSecurity, (await smtp.listen()).tls);
        }
    }
    catch (err) {
        logError('cannot start', err.message ? new Error(err.message) : err);
        await stop().catch((closeErr) => logError('while stopping', closeErr));
        process.exit(1);
    }

    const uri = server.info.uri;
    const smtpText = smtp ? `SMTP on ${config.host}:${config.smtpPort} (${smtpSecurityText})` : 'SMTP off (SMTP_PORT=0)';
    // One write, so that whoever waits for the first line has them all.
    console.log([
        `inbox-capture listening: HTTP on ${uri} (docs: ${uri}/docs), ${smtpText}`,
        `data: ${describeStores(config)}`,
        'create an API key: npx inbox-capture keys create <name>'
    ].join('\n'));

    let stopping = false;
    const onSignal = (signal) => {
        if (stopping) {
            console.error(`inbox-capture: ${signal} again, exiting now`);
            process.exit(1);
        }

        stopping = true;
        console.log(`inbox-capture: ${signal} received, finishing what is in flight (again to force)`);
        stop().then(() => {
            console.log('inbox-capture: stopped');
            process.exitCode = 0;
            // Everything is closed; do not let a stray handle keep the process alive.
            setTimeout(() => process.exit(0), EXIT_GRACE_MS).unref();
        }, (err) => {
            logError('error while stopping', err);
            process.exit(1);
        });
    };

    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
}

main().catch((err) => {
    logError('cannot start', err);
    process.exit(1);
});
