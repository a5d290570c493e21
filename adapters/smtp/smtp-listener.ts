import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import {
    SMTPServer,
    type SMTPServerAddress,
    type SMTPServerDataStream,
    type SMTPServerOptions,
    type SMTPServerSession
} from 'smtp-server';
import { MAX_RECIPIENTS } from '../../lib/identity/recipients';
import { createTenantSessions } from './tenant-sessions';
import type { SmtpListener, SmtpListenerOptions } from './smtp-listener-options';
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_LINE_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_RECIPIENTS, DEFAULT_SMTP_PORT, MAX_COMMAND_LINE_BYTES, SMTP_BANNER } from './smtp-defaults';
import { watchLineDeadline } from './line-deadline';
import { sessionParts } from './session-parts';
import { receiveMessage } from './message-receiver';
import { batchReplies } from './reply-batching';
import { checkSmtpServerInit, greetAtOnce } from './greet-at-once';
import { createSelfSignedCertificate } from './self-signed-certificate';
import { createAuthLockout } from './auth-lockout';
import { checkSmtpAuth, smtpAuthOptions } from './smtp-auth';
import { busyReply, replyForIngestError, smtpReply, tooLargeReply } from './smtp-replies';
import { createFaultGate } from './smtp-faults';
import { metricsOf, rejectReasonOf, secondsSince } from '../metrics/service-metrics';
import { countedRuleRefusal, sessionMetrics } from './smtp-metrics';
import { resolveSmtpTls, tlsInfo, type SmtpTlsInfo } from './smtp-tls';

export type { SmtpAuth, SmtpAuthUsers } from './smtp-auth';
export type { SmtpAuthLockoutOptions } from './auth-lockout';
export type { SmtpTls, SmtpTlsCertificate, SmtpTlsInfo, SmtpTlsMode } from './smtp-tls';

export type { SmtpListener, SmtpListenerOptions } from './smtp-listener-options';

export { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_LINE_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_RECIPIENTS, DEFAULT_SMTP_PORT, MAX_COMMAND_LINE_BYTES, SMTP_BANNER } from './smtp-defaults';

/** The domain of an address, lowercased ('' when it has none). */
function domainOf(address: string): string {
    const at = address.lastIndexOf('@');
    return at === -1 ? '' : address.slice(at + 1).toLowerCase();
}

/** Creates an SMTP listener that stores every accepted message through `capture.ingestRawEmail()`. */
export function createSmtpListener(options: SmtpListenerOptions): SmtpListener {
    const { capture } = options;
    const host = options.host ?? '127.0.0.1';
    const port = options.port ?? DEFAULT_SMTP_PORT;
    // The service's, so that SMTP and every other way in refuse the same messages and share one budget.
    const { maxMessageBytes, messageBudget: budget } = capture;
    if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes < 1 || typeof budget?.reserve !== 'function') {
        throw new TypeError('createSmtpListener: capture must be a service (createInboxCapture()): its maxMessageBytes and messageBudget are missing');
    }

    const log = options.log ?? (() => undefined);
    const allowedDomains = options.allowedDomains ? new Set(options.allowedDomains.map((d) => d.toLowerCase())) : null;
    checkSmtpAuth(options.auth);
    const tls = resolveSmtpTls(options.tls);
    const name = options.name ?? hostname();
    const tenants = createTenantSessions(capture.verifySmtpUser?.bind(capture), capture.inboxFromAddress, log);
    const { offered: authOffered, ...authOptions } = smtpAuthOptions(options.auth ?? 'none', options.allowInsecureAuth ?? true, {
        lockout: createAuthLockout(options.authLockout),
        close: (session) => connectionOf(session.id)?.close(),
        ...tenants.guard
    });
    if (authOffered && options.allowInsecureAuth === false && tls.mode === 'off') {
        throw new TypeError('createSmtpListener: allowInsecureAuth: false needs tls, or no client could ever log in');
    }

    const lineTimeoutMs = options.lineTimeoutMs ?? DEFAULT_LINE_TIMEOUT_MS;
    for (const [name, value] of Object.entries({ maxRecipients: options.maxRecipients, maxConnections: options.maxConnections, idleTimeoutMs: options.idleTimeoutMs, lineTimeoutMs })) {
        if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
            throw new TypeError(`createSmtpListener: ${name} must be a positive integer`);
        }
    }

    // More would pass RCPT TO only to have the core refuse the whole message after DATA.
    if (options.maxRecipients !== undefined && options.maxRecipients > MAX_RECIPIENTS) {
        throw new TypeError(`createSmtpListener: maxRecipients must be at most ${MAX_RECIPIENTS}`);
    }

    if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new TypeError('createSmtpListener: port must be an integer 0..65535');
    }

    // Session id → settles once that session's message is stored (or refused) and answered.
    const inFlight = new Map<string, Promise<void>>();
    // Session id → stops watching that connection's socket (line deadline, reply batching).
    const deadlines = new Map<string, () => void>();
    let closing = false;
    let listening = false;
    // Fault rules' waits end when the listener closes.
    const stopping = new AbortController();
    const gate = createFaultGate({ faults: capture.faults, close: (id) => connectionOf(id)?.close(), signal: stopping.signal, log });
    // Counted only while the plugin has metrics on for this service (docs/operations.md, "Metrics").
    const sessions = sessionMetrics(capture);

    const disabledCommands: string[] = [];
    if (!authOffered) {
        disabledCommands.push('AUTH');
    }

    if (tls.mode !== 'starttls') {
        disabledCommands.push('STARTTLS');
    }

    const serverOptions: SMTPServerOptions = {
        name,
        banner: SMTP_BANNER,
        logger: false,
        disableReverseLookup: true,
        // SIZE is advertised so that a client which announces SIZE= is refused at MAIL FROM;
        // a client that does not is refused at the end of DATA, nothing past the cap held (message-receiver.ts).
        size: maxMessageBytes,
        maxRecipients: options.maxRecipients ?? DEFAULT_MAX_RECIPIENTS,
        maxClients: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
        socketTimeout: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
        maxCommandLength: MAX_COMMAND_LINE_BYTES,
        disabledCommands,
        ...authOptions,
        // Implicit TLS: the handshake comes first, then the greeting (smtp-server's `secure`).
        secure: tls.mode === 'implicit',
        // Without a certificate of the caller's, listen() installs a generated one before the
        // first connection: smtp-server's built-in pair is public and never presented.
        ...(tls.pair ?? {}),

        onConnect(session, callback) {
            if (closing) {
                callback(smtpReply(421, 'Error: shutting down, try again later'));
                return;
            }

            void gate('connect', {}, session.id, callback, () => {
                sessions.opened(session.id);
                callback(null);
                // Under implicit TLS onSecure (called from that callback) watches the TLS socket.
                if (!session.secure) {
                    watchLines(session.id);
                }
            });
        },

        // After STARTTLS, or at once under implicit TLS, the lines travel inside TLS: the
        // deadline and the reply batching follow them there. Watched after the callback,
        // which pipes the TLS socket to the parser: a 'data' listener added before would
        // start the flow with nobody else listening.
        onSecure(_socket, session, callback) {
            callback(null);
            watchLines(session.id);
        },

        onClose(session) {
            sessions.closed(session.id);
            deadlines.get(session.id)?.();
            deadlines.delete(session.id);
        },

        onMailFrom(address, session, callback) {
            if (closing) {
                callback(smtpReply(421, 'Error: shutting down, try again later'));
                return;
            }

            // A client that announces SIZE= is told at once when its message cannot fit
            // now, before it sends the bytes (DATA checks again: the budget may fill meanwhile).
            const size = Number((address.args as Record<string, string | undefined>).SIZE);
            void gate('mail', { sender: address.address }, session.id, countedRuleRefusal(capture, callback), () =>
                callback(size > 0 && budget.heldBytes > 0 && budget.heldBytes + size > budget.limitBytes ? busyReply() : null));
        },

        onRcptTo(address: SMTPServerAddress, session, callback) {
            const sender = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
            const inboxPrefix = tenants.prefixOf(session);
            void gate('rcpt', { sender, recipients: [address.address], inboxPrefix }, session.id, callback, () => {
                if (allowedDomains && !allowedDomains.has(domainOf(address.address))) {
                    callback(smtpReply(550, 'Error: this server does not accept mail for that domain'));
                    return;
                }

                const refusal = tenants.refusal(address.address, inboxPrefix);
                if (refusal) {
                    callback(smtpReply(550, refusal));
                    return;
                }

                callback();
            });
        },

        onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
            const recipients = session.envelope.rcptTo.map((r) => r.address);
            const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
            const inboxPrefix = tenants.prefixOf(session);

            // The whole message is read before the core sees it (the core reads it whole
            // anyway, and the reply can only follow the final dot); nothing past the cap is held.
            // Past the budget the connection is closed at once (closeBusy) rather than the rest read.
            const reservation = budget.reserve(0);
            const done = receiveMessage(stream, maxMessageBytes, reservation, () => closeBusy(session.id)).then(async (received) => {
                if (received.aborted) {
                    // A client that hung up mid-DATA gets no reply (nobody reads it) and needs no log line.
                    callback(smtpReply(451, 'Error: connection closed before the end of DATA'));
                    return;
                }

                const metrics = metricsOf(capture);
                if (received.tooLarge) {
                    metrics?.messageRejected('too_large');
                    callback(tooLargeReply(maxMessageBytes));
                    return;
                }

                if (received.overBudget) {
                    // The connection is closing (421 sent): smtp-server writes nothing more.
                    metrics?.messageRejected('busy');
                    callback(busyReply());
                    return;
                }

                // A data rule's reply replaces the ingest: nothing of the message is stored.
                await gate('data', { sender: mailFrom, recipients, inboxPrefix }, session.id, countedRuleRefusal(capture, callback), async () => {
                    const start = process.hrtime.bigint();
                    try {
                        // The ingest takes the reservation over, so the bytes are not counted twice.
                        const copies = await capture.ingestRawEmail(received.raw!, { recipients, ...sessionParts(session), ...(inboxPrefix ? { inboxPrefix } : {}), reservation: reservation! });
                        metrics?.messageStored('smtp', secondsSince(start));
                        callback(null, `OK: message stored (${copies.length} ${copies.length === 1 ? 'copy' : 'copies'})`);
                    }
                    catch (err) {
                        metrics?.messageRejected(rejectReasonOf(err));
                        const reply = replyForIngestError(err, maxMessageBytes);
                        if (reply.responseCode === 451) {
                            log(`smtp: message from ${session.remoteAddress} not stored, answered 451`, err);
                        }

                        callback(reply);
                    }
                });
            });

            void done.finally(() => reservation?.release());
            inFlight.set(session.id, done);
            void done.finally(() => inFlight.delete(session.id));
        }
    };

    const server = new SMTPServer(serverOptions);
    // The 220 without smtp-server's 100 ms pause (greet-at-once.ts), checked against the installed version first.
    checkSmtpServerInit();
    greetAtOnce(server);

    // smtp-server hands hooks the session, not the connection: the one with that id.
    const connectionOf = (sessionId: string) => [...server.connections].find((c) => c.id === sessionId);

    // (Re)starts the line deadline on the connection's current socket (plain, or TLS after
    // STARTTLS). smtp-server hands hooks the session, not the socket: the connection with
    // that id holds it (`_socket`, declared in smtp-server's own types).
    const watchLines = (sessionId: string) => {
        const connection = connectionOf(sessionId);
        if (!connection) {
            return;
        }

        deadlines.get(sessionId)?.();
        const socket = connection._socket;
        const stopDeadline = watchLineDeadline(socket, lineTimeoutMs, () => {
            deadlines.delete(sessionId);
            stopBatching();
            // 421 closes the connection; a message cut off mid-DATA is not stored (the
            // client's side of DATA never ends) and the sender retries it.
            connection.send(421, 'Error: line not completed in time, closing connection');
        });
        const stopBatching = batchReplies(socket);
        deadlines.set(sessionId, () => {
            stopDeadline();
            stopBatching();
        });
    };

    // A message the memory budget cannot hold mid-DATA: 421 and the connection closed at
    // once (RFC 5321 section 3.8; the client retries later), the socket no longer read, so the
    // rest of the message costs neither CPU nor memory. smtp-server's close() resumes the
    // socket to discard what still arrives; pausing it instead leaves the bytes with the
    // client (its writes stall), and smtp-server destroys the socket after its half-close wait.
    const closeBusy = (sessionId: string) => {
        const connection = connectionOf(sessionId);
        if (!connection) {
            return;
        }

        deadlines.get(sessionId)?.();
        deadlines.delete(sessionId);
        connection.send(421, 'Error: too many messages in flight, closing connection, try again later');
        connection._socket.pause();
    };

    // Before listening, the one error is a failed listen(): listen() rejects with it.
    server.on('error', (err) => {
        if (listening) {
            log('smtp: connection error', err);
        }
    });

    // The certificate presented: the caller's, or one made for this listener at its first listen().
    let certificate: SmtpTlsInfo | undefined = tls.mode !== 'off' && tls.pair ? tlsInfo(tls.mode, tls.pair.cert, false) : undefined;

    return {
        async listen() {
            if (tls.mode !== 'off' && !certificate) {
                const generated = await createSelfSignedCertificate(name);
                server.updateSecureContext(generated);
                certificate = tlsInfo(tls.mode, generated.cert, true);
            }

            return new Promise((resolve, reject) => {
                const onError = (err: Error) => reject(err);
                server.server.once('error', onError);
                server.listen(port, host, () => {
                    server.server.off('error', onError);
                    listening = true;
                    resolve({ port: (server.server.address() as AddressInfo).port, ...(certificate ? { tls: certificate } : {}) });
                });
            });
        },

        async close() {
            if (closing) {
                return;
            }

            closing = true;
            stopping.abort();
            const stopped = listening ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
            const goodbye = () => {
                for (const connection of [...server.connections]) {
                    if (!inFlight.has(connection.id)) {
                        connection.send(421, 'inbox-capture shutting down, try again later');
                    }
                }
            };

            goodbye();
            await Promise.allSettled(inFlight.values());
            goodbye();
            await stopped;
        }
    };
}
