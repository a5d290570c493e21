import type { InboxCapture } from '../../lib/service/inbox-capture';
import type { SmtpAuthLockoutOptions } from './auth-lockout';
import type { SmtpAuth } from './smtp-auth';
import type { SmtpTls, SmtpTlsInfo } from './smtp-tls';

/** How the SMTP listener is built. */
export interface SmtpListenerOptions {
    /**
     * The service messages are handed to (`ingestRawEmail`). Its `maxMessageBytes` is the
     * largest message (advertised with SIZE), and its `messageBudget` holds the bytes of
     * every session in DATA: set them where the service is created. Its `faults` are
     * applied at each stage (docs/api.md, "Faults"); its SMTP users' mail goes under their prefix (docs/tenants.md).
     */
    capture: Pick<InboxCapture, 'ingestRawEmail' | 'maxMessageBytes' | 'messageBudget'> & Partial<Pick<InboxCapture, 'faults' | 'verifySmtpUser' | 'inboxFromAddress'>>;
    /** Interface to listen on (default 127.0.0.1). */
    host?: string;
    /** TCP port (default 2525; 0 picks a free one, see `listen()`'s answer). */
    port?: number;
    /** Recipients per message (default and most: the core's 100); RCPT TO beyond it gets 452. */
    maxRecipients?: number;
    /** Concurrent connections (default 100); more get 421. */
    maxConnections?: number;
    /** Milliseconds of client silence before the connection is closed (default 300000). */
    idleTimeoutMs?: number;
    /**
     * Milliseconds a client may take for one line (a command or a line of the message),
     * from its first byte to its end (default 300000); then 421 and the connection is closed.
     */
    lineTimeoutMs?: number;
    /** Accept RCPT TO only for these domains (case-insensitive, exact); others get 550. Default: any. */
    allowedDomains?: string[];
    /**
     * SMTP AUTH (docs/operations.md, "SMTP authentication and TLS"), `'none'` by default (not offered). `'accept-any'`: AUTH
     * PLAIN and LOGIN offered, every credential accepted, and clients that do not log in
     * too (for apps that insist on logging in). `{ users }`: only these pairs; wrong ones
     * get 535, MAIL FROM without AUTH 530.
     */
    auth?: SmtpAuth;
    /**
     * With `{ users }`, failed AUTH counted per client address across connections: after
     * `failures` (5) within `windowMs` (60000), AUTH from that address gets 454 and the
     * connection is closed for `lockoutMs` (60000); `maxAddresses` (10000) bounds the table.
     */
    authLockout?: SmtpAuthLockoutOptions;
    /**
     * Allow AUTH on a connection without TLS (default true: test systems often send in
     * plain text). False keeps passwords off clear text: AUTH only after STARTTLS.
     */
    allowInsecureAuth?: boolean;
    /**
     * TLS (docs/operations.md, "SMTP authentication and TLS"), `'off'` by default. `'starttls'` or `'implicit'` (the greeting
     * inside TLS) with a self-signed certificate made at `listen()`, or
     * `{ mode?, key, cert }` (PEM) with that certificate (`mode` defaults to `'starttls'`).
     */
    tls?: SmtpTls;
    /** Host name in the greeting (default: the machine's host name). */
    name?: string;
    /** Receives failures worth knowing (storage failures behind a 451, socket errors). */
    log?: (message: string, error?: unknown) => void;
}

/** A running (or ready to run) SMTP listener. */
export interface SmtpListener {
    /** Starts listening; resolves with the bound port and, with TLS on, the certificate presented. */
    listen(): Promise<{ port: number; tls?: SmtpTlsInfo }>;
    /**
     * Stops accepting connections, tells idle clients 421, lets every message already
     * in DATA finish (stored and answered), then closes the remaining connections.
     */
    close(): Promise<void>;
}
