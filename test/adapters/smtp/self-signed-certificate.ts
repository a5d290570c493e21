import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSelfSignedCertificate } from '../../../adapters/smtp/self-signed-certificate';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('self-signed-certificate', () => {

    describe('createSelfSignedCertificate()', () => {

        it('makes a matching RSA key and a certificate for localhost, loopback and the host name, valid now', async () => {
            const { key, cert } = await createSelfSignedCertificate('mail.example.test');
            const certificate = new X509Certificate(cert);
            const privateKey = createPrivateKey(key);
            expect(certificate.checkPrivateKey(privateKey)).to.be.true();
            expect(privateKey.asymmetricKeyType).to.equal('rsa');
            expect(certificate.subject).to.contain('CN=mail.example.test');
            expect(certificate.subjectAltName).to.equal('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:mail.example.test');
            expect(certificate.ca).to.be.false();
            expect(Date.parse(certificate.validFrom)).to.be.at.most(Date.now());
            expect(Date.parse(certificate.validTo)).to.be.above(Date.now() + 300 * 86_400_000);
        });

        it('makes a new key each time, and takes an IP address as the host name', async () => {
            const first = await createSelfSignedCertificate('127.0.0.1');
            const second = await createSelfSignedCertificate('127.0.0.1');
            expect(new X509Certificate(first.cert).fingerprint256).to.not.equal(new X509Certificate(second.cert).fingerprint256);
            expect(new X509Certificate(first.cert).subjectAltName).to.equal('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
        });
    });
});
