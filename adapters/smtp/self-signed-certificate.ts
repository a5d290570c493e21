import { isIP } from 'node:net';

/** Days a generated certificate is valid: one is made at every start, so a year is never reached in practice. */
const SELF_SIGNED_VALIDITY_DAYS = 365;

/** A PEM key and certificate pair. */
export interface CertificatePair {
    key: string;
    cert: string;
}

/**
 * A fresh self-signed certificate for the listener's TLS when none is given: RSA 2048
 * (the key every TLS client, old ones included, accepts), SHA-256, for `localhost`,
 * 127.0.0.1, ::1 and the listener's own host name. Clients either skip verification
 * (Nodemailer `tls: { rejectUnauthorized: false }`) or pin it by its fingerprint.
 */
export async function createSelfSignedCertificate(hostName: string): Promise<CertificatePair> {
    const names = [...new Set(['localhost', '127.0.0.1', '::1', hostName])].filter(Boolean);
    const altNames = names.map((name) => isIP(name) ? { type: 7 as const, ip: name } : { type: 2 as const, value: name });
    const notBeforeDate = new Date();
    const notAfterDate = new Date(notBeforeDate.getTime() + SELF_SIGNED_VALIDITY_DAYS * 86_400_000);
    // Loaded only here: its X.509 stack is large and most listeners never need it.
    const { generate } = await import('selfsigned');
    const pems = await generate([{ name: 'commonName', value: hostName || 'localhost' }], {
        keyType: 'rsa',
        keySize: 2048,
        algorithm: 'sha256',
        notBeforeDate,
        notAfterDate,
        extensions: [
            { name: 'basicConstraints', cA: false },
            { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
            { name: 'extKeyUsage', serverAuth: true },
            { name: 'subjectAltName', altNames }
        ]
    });
    return { key: pems.private, cert: pems.cert };
}
