/**
 * The standalone service: Hapi with the inbox-capture plugin, the SMTP listener and the
 * background sweeps, sharing one service object, as the environment configures them
 * (docs/operations.md, "Running the service"). No process handling here (serve.ts has it).
 */

import * as Hapi from '@hapi/hapi';
import { DEFAULT_ORPHAN_SWEEP_INTERVAL_MS } from '../../lib/defaults';
import { createInboxCapture } from '../../lib/service/inbox-capture';
import { detailLine, ERROR_DETAIL_HEADER, quoted } from '../error-detail/detail-line';
import { plugin } from '../hapi/plugin';
import { createSmtpListener, DEFAULT_MAX_CONNECTIONS as SMTP_MAX_CONNECTIONS, type SmtpListener } from '../smtp/smtp-listener';
import { describeRelay } from '../relay/relay-env';
import { describeStores, openStoresFromConfig, type EnvConfig } from './env-config';
import { capHttpConnections, defaultMaxHttpConnections, readOpenFileLimit } from './http-connection-cap';
import { resetSilentConnections } from './http-silent-reset';
import { explainListenFailure } from './listen-failure';
import { describeSmtpSecurity, type SmtpEnvConfig } from './smtp-env-config';
import { createPop3Listener, type Pop3Listener } from '../pop3/pop3-listener';
import { sharedTls, type Pop3EnvConfig } from './pop3-env-config';
import { DEFAULT_MAX_POP3_CONNECTIONS } from '../pop3/pop3-defaults';

/** Milliseconds hapi waits for requests in flight on stop before cutting them (long-polls end at once). */
export const HTTP_STOP_TIMEOUT_MS = 10_000;

/** Everything the environment says: stores, addresses, limits, webhooks, and SMTP's AUTH and TLS. */
export interface StandaloneConfig extends EnvConfig {
    smtpSecurity: SmtpEnvConfig;
    /** INBOX_CAPTURE_POP3_*; absent: POP3 off. */
    pop3?: Pop3EnvConfig;
}

/** A running standalone service. */
export interface StandaloneService {
    /** What to print once it listens: where HTTP and SMTP are, where data goes, how to make a key. */
    readonly startLines: string[];
    /** Stops accepting on HTTP and SMTP at once, lets what is in flight finish, then closes the service. */
    stop(): Promise<void>;
}

/** How the service reports failures: one line each, with the error's stack. */
export type StandaloneLog = (message: string, error?: unknown) => void;

/**
 * Opens the configured stores and starts HTTP (the API, /docs, /ui), SMTP (unless its port
 * is 0), the webhooks and the sweeps. A failure stops what had started and throws.
 */
export async function startStandaloneService(config: StandaloneConfig, log: StandaloneLog): Promise<StandaloneService> {
    const stores = await openStoresFromConfig(config);
    const capture = createInboxCapture({
        ...stores,
        // The service's budget holds SMTP sessions and ingests alike (docs/guarantees.md).
        maxMessageBytesInFlight: config.maxMessageBytesInFlight,
        retention: config.retention,
        // Orphan blobs (left by a crash) are swept at start and then hourly.
        orphanSweep: { intervalMs: DEFAULT_ORPHAN_SWEEP_INTERVAL_MS },
        log
    });

    // debug: false, as failures reach `log` below (hapi's default would print 500s a second time).
    const server = Hapi.server({ host: config.host, port: config.port, debug: false });
    // Below the open-file limit, so idle connections cannot starve SMTP, files or /health.
    capHttpConnections(server.listener, config.maxHttpConnections ?? defaultMaxHttpConnections(readOpenFileLimit(), mailConnections(config)), log);
    // Thousands of idle connections ending at once must not hold /health up (docs/guarantees.md).
    resetSilentConnections(server.listener);
    // Details of failures go to the log only; clients see { "error": "INTERNAL_ERROR" }. hapi
    // reports every 500 on the `error` channel; the plugin logs a 503's cause on the request
    // (`app`, tagged error), and a relay's refusal behind a 502 (tagged warning).
    server.events.on({ name: 'request', channels: ['error', 'app'] }, (request, event, tags) => {
        if (event.channel === 'error' || tags.error || tags.warning) {
            log(`${request.method.toUpperCase()} ${request.path} failed`, event.error ?? event.data);
        }
    });
    server.events.on('log', (event, tags) => {
        if (tags.error || tags.warning) {
            const data = event.data as { message?: string; error?: unknown } | undefined;
            log(data?.message ? data.message : 'server', data?.error);
        }
    });

    let smtp: SmtpListener | null = null;
    let pop3: Pop3Listener | null = null;
    const stop = async () => {
        // Stop accepting on every side at once; each lets what is in flight finish.
        await Promise.all([
            server.stop({ timeout: HTTP_STOP_TIMEOUT_MS }),
            smtp ? smtp.close() : undefined,
            pop3 ? pop3.close() : undefined
        ]);
        await capture.close();
    };

    let smtpText = 'SMTP off (SMTP_PORT=0)';
    const pop3Lines: string[] = [];
    try {
        // One certificate for SMTP and POP3, so that a mail client trusts one for both.
        const tls = config.pop3 ? await sharedTls(config.smtpSecurity.tls, config.pop3) : { smtp: config.smtpSecurity.tls, pop3: 'off' as const, madeHere: false };
        // One service for HTTP and SMTP: mail arriving over SMTP wakes the HTTP long-polls.
        // The plugin starts the webhook sender for the environment's webhooks, and the relay.
        // /mcp (the MCP server for agents) is on by default; its new_inbox makes addresses at the mail domain.
        await server.register({
            plugin,
            options: { capture, ...config.webhooks, ...(config.mailDomain ? { mailDomain: config.mailDomain } : {}), ...(config.relay ? { relay: config.relay } : {}), ...(config.mcpOrigins ? { mcpOrigins: config.mcpOrigins } : {}), ...(config.metrics ? { metrics: config.metrics } : {}),
                // The SMTP and POP3 ports are the service's own too: a link check refuses them unless listed with the port.
                ...(config.linkCheck ? { linkCheck: { ...config.linkCheck, ownPorts: mailPorts(config) } } : {}),
                ...(config.authCheck ? { authCheck: config.authCheck } : {}) }
        });

        // People opening the service's address get the web interface (docs/ui.md).
        server.route({ method: 'GET', path: '/', options: { auth: false }, handler: (_request, h) => h.redirect('/ui/') });

        // The host's choice (the plugin leaves host 404s alone): every unknown path answers
        // the API's error shape, with its detail (docs/api.md, "Errors").
        server.route({
            method: '*',
            path: '/{any*}',
            options: { auth: false },
            handler: (request, h) => h.response({ error: 'NOT_FOUND' }).code(404)
                .header(ERROR_DETAIL_HEADER, detailLine(`path: no endpoint at ${quoted(request.path)}`))
        });

        await server.start().catch((err: unknown) => {
            throw explainListenFailure(err, config.host, config.port, 'PORT');
        });
        if (config.smtpPort !== 0) {
            smtp = createSmtpListener({ capture, host: config.host, port: config.smtpPort, log, ...config.smtpSecurity, tls: tls.smtp });
            const listening = await smtp.listen().catch((err: unknown) => {
                throw explainListenFailure(err, config.host, config.smtpPort, 'SMTP_PORT');
            });
            const security = describeSmtpSecurity(config.smtpSecurity, listening.tls && { ...listening.tls, selfSigned: listening.tls.selfSigned || tls.madeHere });
            smtpText = `SMTP on ${config.host}:${config.smtpPort} (${security})`;
        }

        if (config.pop3) {
            pop3 = createPop3Listener(capture, { host: config.host, port: config.pop3.port, tls: tls.pop3, log });
            const listening = await pop3.listen().catch((err: unknown) => {
                throw explainListenFailure(err, config.host, config.pop3!.port, 'INBOX_CAPTURE_POP3_PORT');
            });
            const where = !listening.tls ? 'no TLS' : `${listening.tls.mode === 'implicit' ? 'implicit TLS (POP3S)' : 'STLS'}, SHA-256 ${listening.tls.fingerprint256}`;
            pop3Lines.push(`POP3 on ${config.host}:${config.pop3.port} (${where}): user = an inbox, password = an API key`);
        }
    }
    catch (err) {
        await stop().catch((closeErr: unknown) => log('while stopping', closeErr));
        throw err;
    }

    const uri = server.info.uri;
    return {
        startLines: [
            `inbox-capture listening: HTTP on ${uri} (docs: ${uri}/docs), ${smtpText}`,
            ...pop3Lines,
            `data: ${describeStores(config)}`,
            ...(config.relay ? [describeRelay(config.relay)] : []),
            ...(config.linkCheck ? [`link check: may ask ${config.linkCheck.allow.join(', ')}`] : []),
            'create an API key: npx inbox-capture keys create <name>'
        ],
        stop
    };
}

/** The service's own mail ports (SMTP unless off, POP3 when on), which a link check refuses. */
export function mailPorts(config: Pick<StandaloneConfig, 'smtpPort' | 'pop3'>): number[] {
    return [...(config.smtpPort === 0 ? [] : [config.smtpPort]), ...(config.pop3 ? [config.pop3.port] : [])];
}

/** The mail connections the service may hold besides HTTP's: POP3's sessions hold descriptors as SMTP's do. */
export function mailConnections(config: Pick<StandaloneConfig, 'smtpPort' | 'pop3'>): number {
    return (config.smtpPort === 0 ? 0 : SMTP_MAX_CONNECTIONS) + (config.pop3 ? DEFAULT_MAX_POP3_CONNECTIONS : 0);
}
