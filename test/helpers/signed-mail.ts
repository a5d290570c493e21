import * as Crypto from 'node:crypto';
import { dkimSign } from 'mailauth/lib/dkim/sign';

/** A DKIM key pair the test made, and its public half as a DNS TXT record. */
export interface DkimKey {
    privateKey: string;
    /** `v=DKIM1; k=rsa; p=<base64 SPKI>`. */
    record: string;
}

/** A new RSA 2048 key pair. */
export function dkimKey(): DkimKey {
    const { privateKey, publicKey } = Crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), record: `v=DKIM1; k=rsa; p=${spki}` };
}

/** `raw` with a DKIM-Signature of `domain` and `selector` in front (relaxed/relaxed, rsa-sha256). */
export async function signed(raw: string, key: DkimKey, domain: string, selector: string): Promise<string> {
    const { signatures, errors } = await dkimSign(raw, {
        canonicalization: 'relaxed/relaxed',
        signatureData: [{ signingDomain: domain, selector, privateKey: key.privateKey }]
    } as Parameters<typeof dkimSign>[1]) as { signatures: string; errors?: unknown[] };
    if (errors?.length) {
        throw new Error(`DKIM signing failed: ${String(errors[0])}`);
    }

    return signatures + raw;
}
