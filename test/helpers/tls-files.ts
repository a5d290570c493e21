import { execFileSync } from 'node:child_process';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { removeDir, tempDir } from './temp-dir';

/** A certificate made by openssl (not by our code) for localhost / 127.0.0.1, as PEM files and bytes. */
export interface CertificateFiles {
    dir: string;
    keyFile: string;
    certFile: string;
    key: Buffer;
    cert: Buffer;
    remove(): Promise<void>;
}

/** Writes a fresh EC P-256 key and a one-day self-signed certificate with openssl into a temp dir. */
export async function makeCertificateFiles(commonName = 'localhost'): Promise<CertificateFiles> {
    const dir = await tempDir('tls');
    const keyFile = Path.join(dir, 'key.pem');
    const certFile = Path.join(dir, 'cert.pem');
    execFileSync('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
        '-keyout', keyFile, '-out', certFile,
        '-days', '1', '-subj', `/CN=${commonName}`, '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'
    ], { stdio: 'ignore' });
    return {
        dir,
        keyFile,
        certFile,
        key: await Fs.readFile(keyFile),
        cert: await Fs.readFile(certFile),
        remove: () => removeDir(dir)
    };
}

/** Two certificate pairs of one test script: `files` (for localhost) and `other` (a stranger's). */
export interface CertificatePairs {
    files: CertificateFiles;
    other: CertificateFiles;
}

/** Makes two certificate pairs before the script's tests and removes them after (its own before/after hooks). */
export function certificatePairsForScript(hooks: { before: (fn: () => Promise<void>) => void; after: (fn: () => Promise<void>) => void }): CertificatePairs {
    const pairs = {} as CertificatePairs;
    hooks.before(async () => {
        pairs.files = await makeCertificateFiles();
        pairs.other = await makeCertificateFiles('other');
    });
    hooks.after(async () => {
        await pairs.files.remove();
        await pairs.other.remove();
    });
    return pairs;
}
