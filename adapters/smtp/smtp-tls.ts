import { createPrivateKey, X509Certificate } from 'node:crypto';
/** Where TLS starts (docs/operations.md, "SMTP authentication and TLS"): `'off'` (STARTTLS not offered), `'starttls'`, or `'implicit'` (the greeting comes inside TLS). */
export type SmtpTlsMode = 'off' | 'starttls' | 'implicit';

/** TLS with a certificate of one's own (PEM); `mode` defaults to `'starttls'`. */
export interface SmtpTlsCertificate {
    mode?: Exclude<SmtpTlsMode, 'off'>;
    key: string | Buffer;
    cert: string | Buffer;
}

/** The listener's `tls` option: a mode (a self-signed certificate is made at `listen()`), or a certificate and its mode. */
export type SmtpTls = SmtpTlsMode | SmtpTlsCertificate;

/** The certificate a listener presents, as `listen()` reports it (to log, or for clients to pin). */
export interface SmtpTlsInfo {
    mode: Exclude<SmtpTlsMode, 'off'>;
    /** SHA-256 fingerprint, colon-separated hex as `openssl x509 -fingerprint -sha256` prints it. */
    fingerprint256: string;
    /** True when no certificate was given and one was generated for this listener. */
    selfSigned: boolean;
}

/** The `tls` option, checked: its mode and the given certificate, if any. */
export interface ResolvedSmtpTls {
    mode: SmtpTlsMode;
    pair: { key: string | Buffer; cert: string | Buffer } | null;
}

const MODES: readonly string[] = ['off', 'starttls', 'implicit'];

/**
 * What is wrong with a PEM key and certificate pair, in words for a human, or null
 * when the key is a private key, the certificate one, and the key belongs to it.
 */
export function certificatePairProblem(key: string | Buffer, cert: string | Buffer): string | null {
    let certificate: X509Certificate;
    try {
        certificate = new X509Certificate(cert);
    }
    catch {
        return 'the certificate is not a PEM X.509 certificate';
    }

    let privateKey;
    try {
        privateKey = createPrivateKey(key);
    }
    catch {
        return 'the key is not an unencrypted PEM private key';
    }

    return certificate.checkPrivateKey(privateKey) ? null : 'the key does not belong to the certificate';
}

/** Checks the listener's `tls` option; throws a TypeError naming what is wrong. */
export function resolveSmtpTls(tls: unknown): ResolvedSmtpTls {
    if (tls === undefined) {
        return { mode: 'off', pair: null };
    }

    if (typeof tls === 'string' && MODES.includes(tls)) {
        return { mode: tls as SmtpTlsMode, pair: null };
    }

    const given = (typeof tls === 'object' && tls !== null ? tls : { mode: tls }) as Partial<SmtpTlsCertificate>;
    const mode = given.mode ?? 'starttls';
    if (mode !== 'starttls' && mode !== 'implicit') {
        throw new TypeError(`createSmtpListener: tls must be 'off', 'starttls', 'implicit' or { mode?: 'starttls' | 'implicit', key, cert }`);
    }

    if (!given.key || !given.cert) {
        throw new TypeError('createSmtpListener: tls needs both key and cert (PEM), or neither (a mode alone: a self-signed certificate)');
    }

    const problem = certificatePairProblem(given.key, given.cert);
    if (problem) {
        throw new TypeError(`createSmtpListener: tls: ${problem}`);
    }

    return { mode, pair: { key: given.key, cert: given.cert } };
}

/** What `listen()` reports of a certificate. */
export function tlsInfo(mode: Exclude<SmtpTlsMode, 'off'>, cert: string | Buffer, selfSigned: boolean): SmtpTlsInfo {
    return { mode, fingerprint256: new X509Certificate(cert).fingerprint256, selfSigned };
}
