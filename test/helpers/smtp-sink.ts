import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { makeCertificateFiles } from './tls-files';

/** One message a sink received: its envelope, its bytes as they came out of DATA, and how. */
export interface SunkMessage {
    from: string;
    to: string[];
    raw: Buffer;
    /** The session ran inside TLS (STARTTLS or implicit). */
    secure: boolean;
    /** The user it logged in as, if it did. */
    user?: string;
}

/** A real SMTP server standing in for a relay: it keeps what it receives. */
export interface SmtpSink {
    port: number;
    url(user?: string, pass?: string): string;
    received: SunkMessage[];
    /** The reply of the next `n` messages' DATA (default 250): a relay that refuses. */
    refuseNext(code: number, n?: number): void;
    close(): Promise<void>;
}

/** How the sink behaves: STARTTLS with this key and certificate, AUTH required with these credentials. */
export interface SmtpSinkOptions {
    tls?: { key: Buffer; cert: Buffer };
    auth?: { user: string; pass: string };
    /** Called with each message once it is answered 250, as a relay passes mail on after taking it. */
    onMessage?: (message: SunkMessage) => void;
}

/** Starts an smtp-server on a free loopback port that records every message. */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
    const received: SunkMessage[] = [];
    let refusals: { code: number; left: number } | null = null;
    const serverOptions: SMTPServerOptions = {
        logger: false,
        disableReverseLookup: true,
        authOptional: !options.auth,
        allowInsecureAuth: !options.tls,
        ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : { disabledCommands: ['STARTTLS'] }),
        ...(options.auth ? {} : { disabledCommands: options.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'] }),
        onAuth(auth, _session, callback) {
            if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) {
                callback(null, { user: auth.username });
                return;
            }

            callback(Object.assign(new Error('Invalid credentials'), { responseCode: 535 }));
        },
        onData(stream, session, callback) {
            const chunks: Buffer[] = [];
            stream.on('data', (chunk: Buffer) => chunks.push(chunk));
            stream.on('end', () => {
                if (refusals && refusals.left > 0) {
                    refusals.left--;
                    callback(Object.assign(new Error('Refused by the test relay'), { responseCode: refusals.code }));
                    return;
                }

                const message: SunkMessage = {
                    from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                    to: session.envelope.rcptTo.map((r) => r.address),
                    raw: Buffer.concat(chunks),
                    secure: session.secure,
                    ...(typeof session.user === 'string' ? { user: session.user } : {})
                };
                received.push(message);
                callback();
                options.onMessage?.(message);
            });
        }
    };
    const server = new SMTPServer(serverOptions);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.server.address() as AddressInfo).port;
    return {
        port,
        url: (user, pass) => `smtp://${user ? `${encodeURIComponent(user)}:${encodeURIComponent(pass ?? '')}@` : ''}127.0.0.1:${port}`,
        received,
        refuseNext(code, n = 1) {
            refusals = { code, left: n };
        },
        close: () => new Promise<void>((resolve) => server.close(() => resolve()))
    };
}

/** A sink that offers STARTTLS with a fresh certificate (its PEM as `ca`, for the client to trust) and requires AUTH with `auth`. */
export async function startTlsAuthSink(auth: { user: string; pass: string }): Promise<SmtpSink & { ca: Buffer }> {
    const certificate = await makeCertificateFiles();
    try {
        const sink = await startSmtpSink({ tls: { key: certificate.key, cert: certificate.cert }, auth });
        return {
            ...sink,
            ca: certificate.cert,
            async close() {
                await sink.close();
                await certificate.remove();
            }
        };
    }
    catch (err) {
        await certificate.remove();
        throw err;
    }
}
