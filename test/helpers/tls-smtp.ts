import { once } from 'node:events';
import type { X509Certificate } from 'node:crypto';
import * as Tls from 'node:tls';
import { RawSmtpSession, type SmtpReply } from './raw-smtp';

/** A hand-driven SMTP session inside TLS, and the certificate the server presented. */
export interface TlsSmtpSession {
    session: RawSmtpSession;
    /** The 220 greeting: read inside TLS for implicit TLS, in plain text before STARTTLS. */
    greeting: SmtpReply;
    certificate: X509Certificate;
}

/** How the client checks the server's certificate: against `ca`, or not at all. */
export type TlsTrust = { ca: Buffer | string } | { rejectUnauthorized: false };

function tlsOptions(trust: TlsTrust): Tls.ConnectionOptions {
    return 'ca' in trust ? { ca: [trust.ca], servername: 'localhost' } : { rejectUnauthorized: false };
}

/** Connects with TLS from the first byte (implicit TLS) and reads the greeting inside it. */
export async function openImplicitTls(port: number, trust: TlsTrust): Promise<TlsSmtpSession> {
    const socket = Tls.connect({ host: '127.0.0.1', port, ...tlsOptions(trust) });
    await once(socket, 'secureConnect');
    const session = RawSmtpSession.wrap(socket);
    return { session, greeting: await session.reply(), certificate: socket.getPeerX509Certificate()! };
}

/** Connects in plain text, says EHLO, upgrades with STARTTLS; the session is inside TLS, before its second EHLO. */
export async function openStartTls(port: number, trust: TlsTrust): Promise<TlsSmtpSession> {
    const { session: plain, greeting } = await RawSmtpSession.open(port);
    const ehlo = await plain.command('EHLO client.test');
    if (!ehlo.text.includes('STARTTLS')) {
        throw new Error(`STARTTLS not offered: ${ehlo.text}`);
    }

    const ready = await plain.command('STARTTLS');
    if (ready.code !== 220) {
        throw new Error(`STARTTLS refused: ${ready.text}`);
    }

    const socket = Tls.connect({ socket: plain.socket, ...tlsOptions(trust) });
    await once(socket, 'secureConnect');
    return { session: RawSmtpSession.wrap(socket), greeting, certificate: socket.getPeerX509Certificate()! };
}
