import { hostname } from 'node:os';
import { createSelfSignedCertificate } from '../smtp/self-signed-certificate';
import type { SmtpTls, SmtpTlsMode } from '../smtp/smtp-tls';
import { ConfigError, read as readEnvVar, readPort } from './env-config';

/** POP3 of the standalone service (docs/operations.md, "POP3"): its port, and where TLS starts. */
export interface Pop3EnvConfig {
    port: number;
    tls: SmtpTlsMode;
}

const TLS_MODES = ['off', 'starttls', 'implicit'];

/**
 * Reads INBOX_CAPTURE_POP3_PORT (0, the default, leaves POP3 off) and INBOX_CAPTURE_POP3_TLS
 * (default: STLS when SMTP_TLS is on, else none); null when POP3 is off. Throws ConfigError
 * on a bad value, and on POP3_TLS set while POP3 is off (it would be silently ignored).
 */
export function readPop3EnvConfig(env: NodeJS.ProcessEnv, smtpTls: SmtpTls): Pop3EnvConfig | null {
    const port = readPort(env, 'INBOX_CAPTURE_POP3_PORT', 0);
    const tlsValue = readEnvVar(env, 'INBOX_CAPTURE_POP3_TLS')?.toLowerCase();
    if (port === 0) {
        if (tlsValue !== undefined) {
            throw new ConfigError('INBOX_CAPTURE_POP3_TLS is only used with INBOX_CAPTURE_POP3_PORT (POP3 is off)');
        }

        return null;
    }

    if (tlsValue !== undefined && !TLS_MODES.includes(tlsValue)) {
        throw new ConfigError(`INBOX_CAPTURE_POP3_TLS must be one of ${TLS_MODES.join(', ')}, got "${tlsValue}"`);
    }

    const smtpMode = typeof smtpTls === 'string' ? smtpTls : smtpTls.mode ?? 'starttls';
    return { port, tls: (tlsValue ?? (smtpMode === 'off' ? 'off' : 'starttls')) as SmtpTlsMode };
}

/**
 * The TLS options of the SMTP and POP3 listeners, one certificate for both: SMTP's own
 * (SMTP_TLS_CERT), or, when SMTP makes a self-signed one, one made here and handed to each,
 * so that a mail client trusts one certificate for sending and reading.
 */
export async function sharedTls(smtpTls: SmtpTls, pop3: Pop3EnvConfig): Promise<{ smtp: SmtpTls; pop3: SmtpTls; madeHere: boolean }> {
    if (pop3.tls === 'off') {
        return { smtp: smtpTls, pop3: 'off', madeHere: false };
    }

    if (typeof smtpTls === 'object') {
        return { smtp: smtpTls, pop3: { mode: pop3.tls, key: smtpTls.key, cert: smtpTls.cert }, madeHere: false };
    }

    if (smtpTls === 'off') {
        return { smtp: smtpTls, pop3: pop3.tls, madeHere: false };
    }

    const pair = await createSelfSignedCertificate(hostname());
    return { smtp: { mode: smtpTls, ...pair }, pop3: { mode: pop3.tls, ...pair }, madeHere: true };
}
