import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { X509Certificate } from 'node:crypto';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { runNode } from '../helpers/child-process';
import { openConnection } from '../helpers/net';
import { RawSmtpSession } from '../helpers/raw-smtp';
import { isolatedEnv } from '../helpers/service-env';
import { mailTo, sendError } from '../helpers/smtp-capture';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';
import { makeCertificateFiles, type CertificateFiles } from '../helpers/tls-files';
import { openImplicitTls, openStartTls } from '../helpers/tls-smtp';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const TRUST_ANY = { rejectUnauthorized: false } as const;

let files: CertificateFiles;

before(async () => {
    files = await makeCertificateFiles();
});

after(async () => {
    await files.remove();
});

/** Sends with Nodemailer configured as an application's mail settings would configure it. */
async function send(service: StandaloneService, options: SMTPTransport.Options, inbox: string, subject: string): Promise<SMTPTransport.SentMessageInfo> {
    const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: service.smtpPort, ...options });
    try {
        return await transport.sendMail(mailTo(inbox, subject));
    }
    finally {
        transport.close();
    }
}

/** Subjects in an inbox, read over HTTP with the service's key. */
async function subjects(service: StandaloneService, inbox: string): Promise<string[]> {
    const res = await fetch(`${service.baseUrl}/v1/emails?inbox=${inbox}`, { headers: { authorization: `Bearer ${service.apiKey}` } });
    expect(res.status).to.equal(200);
    const page = await res.json() as { emails: { subject: string }[] };
    return page.emails.map((e) => e.subject).sort();
}

/** The SHA-256 fingerprint the start-up line names. */
function loggedFingerprint(service: StandaloneService): string {
    const match = /SHA-256 ([0-9A-F:]{95})/.exec(service.spawned.stdout());
    expect(match).to.exist();
    return match![1];
}

// docs/operations.md, "SMTP authentication and TLS", end to end.
describe('SMTP authentication and TLS of the standalone service', () => {

    it('offers neither AUTH nor STARTTLS by default, and says so at start', { timeout: 60_000 }, async () => {
        const service = await startStandalone();
        try {
            expect(service.spawned.stdout()).to.contain(`SMTP on 127.0.0.1:${service.smtpPort} (no AUTH, no TLS)`);
            const { session } = await RawSmtpSession.open(service.smtpPort);
            const ehlo = await session.command('EHLO client.test');
            expect(ehlo.text).to.not.contain('AUTH');
            expect(ehlo.text).to.not.contain('STARTTLS');
            await session.command('QUIT');
            await send(service, {}, 'default', 'plain and anonymous');
            expect(await subjects(service, 'default')).to.equal(['plain and anonymous']);
        }
        finally {
            await service.stop();
        }
    });

    it('SMTP_AUTH=users with SMTP_TLS=starttls: the pairs by PLAIN and LOGIN, in TLS or not; 535 and 530 otherwise; a self-signed certificate whose fingerprint is logged', { timeout: 60_000 }, async () => {
        const service = await startStandalone({ env: { SMTP_AUTH: 'users', SMTP_AUTH_USERS: 'app:app-secret,ci:ci:secret', SMTP_TLS: 'starttls' } });
        try {
            expect(service.spawned.stdout()).to.contain('AUTH required (2 users), STARTTLS, self-signed certificate made at start, SHA-256 ');
            expect(service.spawned.stdout()).to.not.contain('app-secret');
            const { session, certificate } = await openStartTls(service.smtpPort, TRUST_ANY);
            expect(certificate.fingerprint256).to.equal(loggedFingerprint(service));
            expect((await session.command('EHLO client.test')).text).to.contain('AUTH PLAIN LOGIN');
            await session.command('QUIT');

            const inTls = { requireTLS: true, tls: TRUST_ANY };
            await send(service, { ...inTls, auth: { user: 'app', pass: 'app-secret' }, authMethod: 'PLAIN' }, 'e2e-auth', 'plain in tls');
            await send(service, { ...inTls, auth: { user: 'ci', pass: 'ci:secret' }, authMethod: 'LOGIN' }, 'e2e-auth', 'login in tls');
            await send(service, { ignoreTLS: true, auth: { user: 'app', pass: 'app-secret' } }, 'e2e-auth', 'plain text');
            const wrong = await sendError(send(service, { ...inTls, auth: { user: 'app', pass: 'guess' } }, 'e2e-auth', 'wrong'));
            expect(wrong.responseCode).to.equal(535);
            const unknown = await sendError(send(service, { ...inTls, auth: { user: 'nobody', pass: 'app-secret' } }, 'e2e-auth', 'unknown'));
            expect(unknown.responseCode).to.equal(535);
            const anonymous = await sendError(send(service, inTls, 'e2e-auth', 'anonymous'));
            expect(anonymous.responseCode).to.equal(530);

            expect(await subjects(service, 'e2e-auth')).to.equal(['login in tls', 'plain in tls', 'plain text']);
        }
        finally {
            await service.stop();
        }
    });

    it('SMTP_AUTH=accept-any with SMTP_TLS=implicit and SMTP_TLS_CERT / SMTP_TLS_KEY: that certificate, any credentials or none, no greeting in plain text', { timeout: 60_000 }, async () => {
        const service = await startStandalone({ env: { SMTP_AUTH: 'accept-any', SMTP_TLS: 'implicit', SMTP_TLS_CERT: files.certFile, SMTP_TLS_KEY: files.keyFile } });
        try {
            const expected = new X509Certificate(files.cert).fingerprint256;
            expect(service.spawned.stdout()).to.contain(`AUTH optional, any credentials, implicit TLS, certificate from SMTP_TLS_CERT, SHA-256 ${expected}`);
            const { session, greeting, certificate } = await openImplicitTls(service.smtpPort, { ca: files.cert });
            expect(greeting.code).to.equal(220);
            expect(certificate.fingerprint256).to.equal(expected);
            expect((await session.command('EHLO client.test')).text).to.contain('AUTH PLAIN LOGIN');
            await session.command('QUIT');

            const pinned = { secure: true, tls: { ca: [files.cert], servername: 'localhost' } };
            await send(service, { ...pinned, auth: { user: 'anyone', pass: 'anything' } }, 'e2e-any', 'with credentials');
            await send(service, pinned, 'e2e-any', 'without credentials');
            expect(await subjects(service, 'e2e-any')).to.equal(['with credentials', 'without credentials']);

            const { socket, closed } = await openConnection(service.smtpPort);
            socket.write('EHLO plain.test\r\n');
            expect(await closed ?? '').to.not.contain('220');
        }
        finally {
            await service.stop();
        }
    });

    it('refuses bad settings at start with a clear message and exit 1', { timeout: 60_000 }, async () => {
        const start = (env: Record<string, string>) => runNode([Path.join(ROOT, 'examples', 'standalone.js')], { cwd: ROOT, env: isolatedEnv({ SMTP_PORT: '0', PORT: '0', ...env }) });
        const badPem = await start({ SMTP_TLS: 'starttls', SMTP_TLS_CERT: files.keyFile, SMTP_TLS_KEY: files.keyFile });
        expect(badPem.code).to.equal(1);
        expect(badPem.stderr).to.contain('configuration: SMTP_TLS_CERT / SMTP_TLS_KEY: the certificate is not a PEM X.509 certificate');
        const unreadable = await start({ SMTP_TLS: 'implicit', SMTP_TLS_CERT: Path.join(files.dir, 'absent.pem'), SMTP_TLS_KEY: files.keyFile });
        expect(unreadable.code).to.equal(1);
        expect(unreadable.stderr).to.contain('SMTP_TLS_CERT: cannot read');
    });
});
