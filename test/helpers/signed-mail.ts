import * as Crypto from 'node:crypto';
import { dkimSign } from 'mailauth/lib/dkim/sign';
import { dkimVerify } from 'mailauth/lib/dkim/verify';

/** A DKIM key pair the test made, and its public half as a DNS TXT record. */
export interface DkimKey {
    privateKey: string;
    /** `v=DKIM1; k=rsa; p=<base64 SPKI>`. */
    record: string;
}

/** Keys or signing times tried before a fixture gives up on mailauth verifying its own signature. */
const SELF_CHECK_ATTEMPTS = 5;

/** A sample message a new key must sign and verify. */
const SAMPLE = 'From: a@sample.test\r\nTo: b@sample.test\r\nSubject: sample\r\n\r\nsample\r\n';

/**
 * A new RSA 2048 key pair that mailauth verifies its own signatures with. About one
 * signature in 300 made here with fresh keys failed mailauth's own verification ("bad
 * signature"), which made a test of ours fail at random; a key is only handed out once
 * a signature of it verifies.
 */
export async function dkimKey(): Promise<DkimKey> {
    for (let attempt = 1; ; attempt++) {
        const { privateKey, publicKey } = Crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
        const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
        const key = { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), record: `v=DKIM1; k=rsa; p=${spki}` };
        if (await verifies(await signOnce(SAMPLE, key, 'sample.test', 'sel', new Date()), key) || attempt >= SELF_CHECK_ATTEMPTS) {
            return key;
        }
    }
}

/**
 * `raw` with a DKIM-Signature of `domain` and `selector` in front (relaxed/relaxed,
 * rsa-sha256), one that mailauth verifies (else signed again a second earlier, as above).
 */
export async function signed(raw: string, key: DkimKey, domain: string, selector: string): Promise<string> {
    const now = Date.now();
    for (let attempt = 1; ; attempt++) {
        const message = await signOnce(raw, key, domain, selector, new Date(now - (attempt - 1) * 1000));
        if (await verifies(message, key) || attempt >= SELF_CHECK_ATTEMPTS) {
            return message;
        }
    }
}

async function signOnce(raw: string, key: DkimKey, domain: string, selector: string, signTime: Date): Promise<string> {
    const { signatures, errors } = await dkimSign(raw, {
        canonicalization: 'relaxed/relaxed',
        signTime,
        signatureData: [{ signingDomain: domain, selector, privateKey: key.privateKey }]
    } as Parameters<typeof dkimSign>[1]) as { signatures: string; errors?: unknown[] };
    if (errors?.length) {
        throw new Error(`DKIM signing failed: ${String(errors[0])}`);
    }

    return signatures + raw;
}

// mailauth's own verdict on a message just signed, the key's record answering every lookup (in 255-byte strings, as DNS gives it).
async function verifies(message: string, key: DkimKey): Promise<boolean> {
    const chunks = key.record.match(/.{1,255}/g)!;
    const { results } = await dkimVerify(Buffer.from(message), { resolver: async () => [chunks] } as Parameters<typeof dkimVerify>[1]) as { results: Array<{ status: { result: string } }> };
    return results.every((r) => r.status.result === 'pass');
}
