import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { createSecureContext, createServer as createTlsServer, type SecureContext } from 'node:tls';
import { createAuthLockout } from '../smtp/auth-lockout';
import { createSelfSignedCertificate } from '../smtp/self-signed-certificate';
import { tlsInfo, type SmtpTlsInfo } from '../smtp/smtp-tls';
import type { Pop3Service } from './maildrop';
import { MAX_POP3_LINE_BYTES } from './pop3-defaults';
import { runConnection, type Pop3Connection } from './pop3-connection';
import { resolvePop3Options, type Pop3ListenerOptions } from './pop3-options';
import { createPop3Session } from './pop3-session';

export type { Pop3ListenerOptions } from './pop3-options';
export type { Pop3Service } from './maildrop';

/** A running (or ready to run) POP3 listener. */
export interface Pop3Listener {
    /** Starts listening; resolves with the bound port and, with TLS on, the certificate presented. */
    listen(): Promise<{ port: number; tls?: SmtpTlsInfo }>;
    /**
     * Stops accepting connections and ends every session after the command under way,
     * with `-ERR`; deletions marked in a session that did not QUIT are not made.
     */
    close(): Promise<void>;
}

/**
 * Creates a POP3 listener (RFC 1939, with CAPA, STLS and implicit TLS) that serves each
 * inbox as a maildrop: USER is the inbox, PASS an API key that reaches it (docs/operations.md, "POP3").
 */
export function createPop3Listener(service: Pop3Service, options: Pop3ListenerOptions = {}): Pop3Listener {
    for (const method of ['listEmails', 'verifyKey', 'deleteEmail'] as const) {
        if (typeof service?.[method] !== 'function' || typeof service.blobStore?.get !== 'function') {
            throw new TypeError('createPop3Listener: service must be a service (createInboxCapture())');
        }
    }

    const settings = resolvePop3Options(options);
    const log = settings.log ?? (() => undefined);
    const name = settings.name ?? hostname();
    const lockout = createAuthLockout(settings.authLockout);
    const tls = settings.tls;
    const mode = typeof tls === 'string' ? tls : tls.mode ?? 'starttls';
    let pair: { key: string | Buffer; cert: string | Buffer } | null = typeof tls === 'object' ? { key: tls.key, cert: tls.cert } : null;
    let secureContext: SecureContext | null = pair ? createSecureContext(pair) : null;
    let certificate: SmtpTlsInfo | undefined = typeof tls === 'object' ? tlsInfo(mode as 'starttls' | 'implicit', tls.cert, false) : undefined;

    const connections = new Set<Pop3Connection>();
    let closing = false;

    const accept = (socket: Socket) => {
        socket.on('error', () => undefined);
        if (closing || connections.size >= settings.maxConnections) {
            socket.end(closing ? '-ERR [SYS/TEMP] shutting down, try again later\r\n' : '-ERR [SYS/TEMP] too many connections, try again later\r\n');
            return;
        }

        const session = createPop3Session({
            service,
            stls: mode === 'starttls',
            lockout,
            authFailureDelayMs: settings.authFailureDelayMs,
            log
        });
        const connection = runConnection(socket, {
            maxLineBytes: MAX_POP3_LINE_BYTES,
            maxCommands: settings.maxCommands,
            idleTimeoutMs: settings.idleTimeoutMs,
            secureContext: mode === 'starttls' ? secureContext : null,
            log
        }, (t) => session.greet(t), (command, t) => session.handle(command, t));
        connections.add(connection);
        void connection.closed.then(() => connections.delete(connection));
    };

    let server: Server | null = null;
    return {
        async listen() {
            if (mode !== 'off' && !secureContext) {
                const generated = await createSelfSignedCertificate(name);
                pair = generated;
                secureContext = createSecureContext(generated);
                certificate = tlsInfo(mode, generated.cert, true);
            }

            server = mode === 'implicit' ? createTlsServer({ key: pair!.key, cert: pair!.cert }, accept) : createNetServer(accept);
            // A failed handshake under implicit TLS is the client's: nothing to log.
            server.on('tlsClientError', () => undefined);
            const listening = server;
            return new Promise((resolve, reject) => {
                listening.once('error', reject);
                listening.listen(settings.port, settings.host ?? '127.0.0.1', () => {
                    listening.off('error', reject);
                    listening.on('error', (error) => log('pop3: listener error', error));
                    resolve({ port: (listening.address() as AddressInfo).port, ...(certificate ? { tls: certificate } : {}) });
                });
            });
        },

        async close() {
            if (closing) {
                return;
            }

            closing = true;
            const stopped = server?.listening ? new Promise<void>((resolve) => server!.close(() => resolve())) : Promise.resolve();
            for (const connection of connections) {
                connection.shutdown('inbox-capture shutting down, try again later');
            }

            await Promise.all([...connections].map((c) => c.closed));
            await stopped;
        }
    };
}
