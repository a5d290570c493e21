import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { X509Certificate } from 'node:crypto';
import { createSmtpListener } from '../../../adapters/smtp';
import { openConnection } from '../../helpers/net';
import { RawSmtpSession, sendRawMessage } from '../../helpers/raw-smtp';
import { mailTo, sendError, startSmtpCapture, stubCapture } from '../../helpers/smtp-capture';
import { certificatePairsForScript } from '../../helpers/tls-files';
import { openImplicitTls, openStartTls } from '../../helpers/tls-smtp';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const USERS = { users: { app: 'app-secret' } };
/** Nodemailer's setting for a self-signed certificate, as an application's mail settings put it. */
const TRUST_ANY = { rejectUnauthorized: false } as const;

const pairs = certificatePairsForScript({ before, after });

/** Sends one byte of `text` every `everyMs` until the server closes the session. */
async function trickle(session: RawSmtpSession, text: string, everyMs: number): Promise<void> {
    for (let sent = 0; !session.socket.destroyed && !session.socket.writableEnded; sent++) {
        session.socket.write(text[sent % text.length]);
        if (await Promise.race([session.closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), everyMs))])) {
            return;
        }
    }
}

describe('smtp-tls', () => {

    describe("tls 'starttls'", () => {

        it('offers STARTTLS and presents a self-signed certificate made for the listener, the one listen() reports', async () => {
            const t = await startSmtpCapture({ tls: 'starttls' });
            try {
                expect(t.tls).to.include({ mode: 'starttls', selfSigned: true });
                const { session, certificate } = await openStartTls(t.port, TRUST_ANY);
                expect(certificate.fingerprint256).to.equal(t.tls!.fingerprint256);
                expect(certificate.subjectAltName).to.contain('DNS:localhost');
                expect(certificate.subjectAltName).to.contain('IP Address:127.0.0.1');
                expect((await session.command('EHLO client.test')).text).to.not.contain('STARTTLS');
                await session.command('QUIT');
            }
            finally {
                await t.stop();
            }
        });

        it('delivers for Nodemailer with requireTLS (which fails where STARTTLS is not offered)', async () => {
            const t = await startSmtpCapture({ tls: 'starttls' });
            const plain = await startSmtpCapture();
            try {
                const settings = { ignoreTLS: false, requireTLS: true, tls: TRUST_ANY };
                const info = await t.transport(settings).sendMail(mailTo('tls', 'over starttls'));
                expect(info.response).to.startWith('250');
                expect(await t.subjects('tls')).to.equal(['over starttls']);

                // The same settings refuse to send in plain text: the delivery above was inside TLS.
                const refused = await sendError(plain.transport(settings).sendMail(mailTo('tls', 'refused')));
                expect(refused.code).to.equal('ETLS');
                expect(await plain.subjects('tls')).to.equal([]);
            }
            finally {
                await t.stop();
                await plain.stop();
            }
        });

        it('combined with users: the right pair delivers inside TLS, a wrong one gets 535, none 530', async () => {
            const t = await startSmtpCapture({ tls: 'starttls', auth: USERS });
            try {
                const settings = { ignoreTLS: false, requireTLS: true, tls: TRUST_ANY };
                await t.transport({ ...settings, auth: { user: 'app', pass: 'app-secret' } }).sendMail(mailTo('tls-users', 'authed over tls'));
                const wrong = await sendError(t.transport({ ...settings, auth: { user: 'app', pass: 'nope' } }).sendMail(mailTo('tls-users', 'wrong')));
                expect(wrong.responseCode).to.equal(535);
                const anonymous = await sendError(t.transport(settings).sendMail(mailTo('tls-users', 'anonymous')));
                expect(anonymous.responseCode).to.equal(530);
                // AUTH without TLS still works next to STARTTLS (docs/operations.md, "SMTP authentication and TLS").
                await t.transport({ auth: { user: 'app', pass: 'app-secret' } }).sendMail(mailTo('tls-users', 'authed in plain text'));
                expect((await t.subjects('tls-users')).sort()).to.equal(['authed in plain text', 'authed over tls']);
            }
            finally {
                await t.stop();
            }
        });

        it('keeps AUTH for after STARTTLS with allowInsecureAuth: false', async () => {
            const t = await startSmtpCapture({ tls: 'starttls', auth: USERS, allowInsecureAuth: false });
            try {
                const clear = await sendError(t.transport({ auth: { user: 'app', pass: 'app-secret' } }).sendMail(mailTo('strict', 'clear')));
                expect(clear.code).to.equal('EAUTH');
                await t.transport({ ignoreTLS: false, requireTLS: true, tls: TRUST_ANY, auth: { user: 'app', pass: 'app-secret' } }).sendMail(mailTo('strict', 'secured'));
                expect(await t.subjects('strict')).to.equal(['secured']);
            }
            finally {
                await t.stop();
            }
        });
    });

    describe("tls 'implicit'", () => {

        it('greets inside TLS with the certificate listen() reports, and offers no STARTTLS there', async () => {
            const t = await startSmtpCapture({ tls: 'implicit' });
            try {
                expect(t.tls).to.include({ mode: 'implicit', selfSigned: true });
                const { session, greeting, certificate } = await openImplicitTls(t.port, TRUST_ANY);
                expect(greeting.text).to.match(/^220 .*inbox-capture/);
                expect(certificate.fingerprint256).to.equal(t.tls!.fingerprint256);
                expect((await session.command('EHLO client.test')).text).to.not.contain('STARTTLS');
                await session.command('QUIT');
            }
            finally {
                await t.stop();
            }
        });

        it('delivers for Nodemailer with secure: true, with and without users', async () => {
            const open = await startSmtpCapture({ tls: 'implicit' });
            const users = await startSmtpCapture({ tls: 'implicit', auth: USERS });
            try {
                await open.transport({ secure: true, tls: TRUST_ANY }).sendMail(mailTo('implicit', 'secure true'));
                expect(await open.subjects('implicit')).to.equal(['secure true']);

                await users.transport({ secure: true, tls: TRUST_ANY, auth: { user: 'app', pass: 'app-secret' } }).sendMail(mailTo('implicit', 'secure with auth'));
                const wrong = await sendError(users.transport({ secure: true, tls: TRUST_ANY, auth: { user: 'app', pass: 'x' } }).sendMail(mailTo('implicit', 'wrong')));
                expect(wrong.responseCode).to.equal(535);
                expect(await users.subjects('implicit')).to.equal(['secure with auth']);
            }
            finally {
                await open.stop();
                await users.stop();
            }
        });

        it('sends a plain-text client no greeting and closes the connection once it talks', async () => {
            const t = await startSmtpCapture({ tls: 'implicit' });
            try {
                const { socket, closed } = await openConnection(t.port);
                socket.write('EHLO plain.test\r\n');
                const received = await closed;
                expect(received ?? '').to.not.contain('220');
                expect(received ?? '').to.not.contain('inbox-capture');
            }
            finally {
                await t.stop();
            }
        });
    });

    describe('TLS handshake', () => {

        it('closes a connection that never starts its handshake once the idle timeout passes, without a reply', async () => {
            const t = await startSmtpCapture({ tls: 'implicit', idleTimeoutMs: 300 });
            try {
                const { closed } = await openConnection(t.port);
                expect(await closed).to.be.null();
            }
            finally {
                await t.stop();
            }
        });
    });

    describe('given certificate', () => {

        for (const mode of ['starttls', 'implicit'] as const) {
            it(`presents it (${mode}), and a client that trusts only it delivers`, async () => {
                const t = await startSmtpCapture({ tls: { mode, key: pairs.files.key, cert: pairs.files.cert } });
                try {
                    const expected = new X509Certificate(pairs.files.cert).fingerprint256;
                    expect(t.tls).to.equal({ mode, fingerprint256: expected, selfSigned: false });
                    const open = mode === 'implicit' ? openImplicitTls : openStartTls;
                    const { session, certificate } = await open(t.port, { ca: pairs.files.cert });
                    expect(certificate.fingerprint256).to.equal(expected);
                    await session.command('QUIT');

                    const settings = mode === 'implicit' ? { secure: true } : { ignoreTLS: false, requireTLS: true };
                    await t.transport({ ...settings, tls: { ca: [pairs.files.cert], servername: 'localhost' } }).sendMail(mailTo('pinned', mode));
                    expect(await t.subjects('pinned')).to.equal([mode]);
                    // A client that trusts another certificate refuses this one.
                    const distrust = await sendError(t.transport({ ...settings, tls: { ca: [pairs.other.cert], servername: 'localhost' } }).sendMail(mailTo('pinned', 'distrust')));
                    expect(distrust.code).to.match(/ETLS|ESOCKET|ECONNECTION/);
                }
                finally {
                    await t.stop();
                }
            });
        }

        it('defaults its mode to starttls ({ key, cert })', async () => {
            const t = await startSmtpCapture({ tls: { key: pairs.files.key, cert: pairs.files.cert } });
            try {
                expect(t.tls!.mode).to.equal('starttls');
                const { certificate, session } = await openStartTls(t.port, { ca: pairs.files.cert });
                expect(certificate.fingerprint256).to.equal(t.tls!.fingerprint256);
                await session.command('QUIT');
            }
            finally {
                await t.stop();
            }
        });
    });

    describe('limits inside TLS', () => {

        for (const mode of ['starttls', 'implicit'] as const) {
            it(`applies the recipient cap, the size cap, the message budget and the line deadline (${mode})`, { timeout: 30_000 }, async () => {
                const t = await startSmtpCapture({ tls: mode, maxRecipients: 2, lineTimeoutMs: 1000, idleTimeoutMs: 60_000 }, { maxMessageBytes: 64 * 1024, maxMessageBytesInFlight: 48 * 1024 });
                const open = () => mode === 'implicit' ? openImplicitTls(t.port, TRUST_ANY) : openStartTls(t.port, TRUST_ANY);
                try {
                    const { session } = await open();
                    expect((await session.command('EHLO client.test')).code).to.equal(250);
                    const raw = Buffer.from('Subject: capped\r\n\r\nHello.\r\n');
                    expect((await sendRawMessage(session, raw, ['a@example.test', 'b@example.test', 'c@example.test'])).code).to.equal(452);
                    const big = Buffer.from(`Subject: too big\r\n\r\n${'x'.repeat(100 * 1024)}\r\n`);
                    expect((await sendRawMessage(session, big, ['big@example.test'])).code).to.equal(552);

                    // A second session holds 40 KiB of the 48 KiB budget in DATA: a third announcing 16 KiB is told 452 at once.
                    const { session: holder } = await open();
                    await holder.command('EHLO holder.test');
                    expect((await holder.command('MAIL FROM:<a@example.test>')).code).to.equal(250);
                    expect((await holder.command('RCPT TO:<held@example.test>')).code).to.equal(250);
                    expect((await holder.command('DATA')).code).to.equal(354);
                    await holder.write(`Subject: held\r\n\r\n${'h'.repeat(40 * 1024)}\r\n`);
                    let mail;
                    for (let i = 0; i < 100 && (mail = await session.command(`MAIL FROM:<a@example.test> SIZE=${16 * 1024}`)).code === 250; i++) {
                        // The holder's bytes are still on their way through TLS: ask again.
                        await session.command('RSET');
                        await new Promise((resolve) => setTimeout(resolve, 20));
                    }

                    expect(mail!.code).to.equal(452);
                    await holder.write('.\r\n');
                    expect((await holder.reply()).code).to.equal(250);
                    await holder.command('QUIT');

                    // A command trickled a byte at a time inside TLS is cut off.
                    await session.command('RSET');
                    const trickling = trickle(session, 'EHLO slow.example.test', 100);
                    const reply = await session.reply();
                    expect(reply.code).to.equal(421);
                    expect(reply.text).to.contain('line not completed in time');
                    await session.closed;
                    await trickling;
                    expect(await t.subjects('held')).to.equal(['held']);
                    expect(await t.subjects('big')).to.equal([]);
                    expect(await t.subjects('a')).to.equal([]);
                }
                finally {
                    await t.stop();
                }
            });
        }
    });

    describe('options', () => {

        it('rejects a tls option that is malformed, incomplete or not a matching PEM pair at creation', () => {
            const capture = stubCapture();
            expect(() => createSmtpListener({ capture, tls: 'tls' as never })).to.throw(TypeError, /tls must be 'off', 'starttls', 'implicit'/);
            expect(() => createSmtpListener({ capture, tls: { mode: 'off' as never, key: pairs.files.key, cert: pairs.files.cert } })).to.throw(TypeError, /tls must be/);
            expect(() => createSmtpListener({ capture, tls: { key: pairs.files.key } as never })).to.throw(TypeError, /both key and cert/);
            expect(() => createSmtpListener({ capture, tls: { key: pairs.files.key, cert: 'not a certificate' } })).to.throw(TypeError, /not a PEM X.509 certificate/);
            expect(() => createSmtpListener({ capture, tls: { key: pairs.files.cert, cert: pairs.files.cert } })).to.throw(TypeError, /not an unencrypted PEM private key/);
            expect(() => createSmtpListener({ capture, tls: { key: pairs.other.key, cert: pairs.files.cert } })).to.throw(TypeError, /does not belong to the certificate/);
        });
    });
});
