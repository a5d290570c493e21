/**
 * The relay's SMTP client (docs/api.md, "Release"): nodemailer's SMTP transport, with TLS
 * and AUTH as the URL says. It sends the stored bytes as they are (`raw`), with the
 * envelope it is given; nodemailer only dot-stuffs them on the wire, as SMTP requires.
 */

import * as Nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import type { RelayTransport } from '../../lib/relay/relay';

/** Longest wait for the relay's connection, greeting or any reply, ms: a release answers within it. */
export const DEFAULT_RELAY_TIMEOUT_MS = 10_000;

/** How the relay is reached. */
export interface SmtpRelayOptions {
    /** `smtp://[user:pass@]host[:port]` (STARTTLS when offered; port 25) or `smtps://...` (TLS from the start; port 465). */
    url: string;
    /** Trust for the relay's certificate beyond the system's (a private CA), or `rejectUnauthorized: false`. */
    tls?: { ca?: string | Buffer; rejectUnauthorized?: boolean };
    /** Deadline of the connection, the greeting and each reply, ms (default 10000). */
    timeoutMs?: number;
}

/** Connections a pooled relay keeps open at most, and messages sent over one before it is renewed. */
export interface RelayPool {
    maxConnections: number;
    maxMessages: number;
}

/** The relay URL's parts, checked; throws a TypeError naming the problem (never the password). */
export function parseRelayUrl(url: string): { secure: boolean; host: string; port: number; auth?: { user: string; pass: string } } {
    let parsed: URL;
    try {
        parsed = new URL(url);
    }
    catch {
        throw new TypeError('the relay URL must be smtp://[user:pass@]host:port or smtps://...');
    }

    if ((parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') || parsed.hostname === '' || (parsed.pathname !== '' && parsed.pathname !== '/') || parsed.search !== '') {
        throw new TypeError(`the relay URL must be smtp://[user:pass@]host:port or smtps://..., not ${parsed.protocol}//${parsed.host}${parsed.pathname}`);
    }

    const secure = parsed.protocol === 'smtps:';
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = parsed.port === '' ? (secure ? 465 : 25) : Number(parsed.port);
    const user = decodeURIComponent(parsed.username);
    return { secure, host, port, ...(user !== '' ? { auth: { user, pass: decodeURIComponent(parsed.password) } } : {}) };
}

/**
 * A RelayTransport over nodemailer: a connection per message, so nothing stays open between
 * releases; or, with `pool`, connections kept and reused (auto-relay's steady stream).
 */
export function createSmtpRelay(options: SmtpRelayOptions, pool?: RelayPool): RelayTransport {
    const timeoutMs = options.timeoutMs ?? DEFAULT_RELAY_TIMEOUT_MS;
    const transportOptions: SMTPTransport.Options = {
        ...parseRelayUrl(options.url),
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs,
        // The message is the stored one: nothing is read from files or URLs.
        disableFileAccess: true,
        disableUrlAccess: true,
        ...(options.tls ? { tls: { ...options.tls } } : {})
    };
    const transport = pool ? Nodemailer.createTransport({ ...transportOptions, pool: true, ...pool }) : Nodemailer.createTransport(transportOptions);
    return {
        async send(envelope, raw) {
            await transport.sendMail({ envelope: { from: envelope.from, to: envelope.to }, raw });
        },
        close() {
            transport.close();
        }
    };
}
