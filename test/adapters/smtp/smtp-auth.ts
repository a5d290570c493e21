import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createSmtpListener } from '../../../adapters/smtp';
import { MAX_AUTH_FAILURES_PER_CONNECTION, SMTP_AUTH_METHODS } from '../../../adapters/smtp/smtp-auth';
import { RawSmtpSession } from '../../helpers/raw-smtp';
import { mailTo, sendError, startSmtpCapture, stubCapture } from '../../helpers/smtp-capture';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const USERS = { users: { app: 'app-secret', 'ci:bot': 'p:a:s:s' } };

/** The EHLO reply of a fresh plain-text session. */
async function ehlo(port: number): Promise<string> {
    const { session } = await RawSmtpSession.open(port);
    try {
        return (await session.command('EHLO client.test')).text;
    }
    finally {
        await session.command('QUIT');
        await session.closed;
    }
}

describe('smtp-auth', () => {

    describe("auth 'none' (the default)", () => {

        it('does not offer AUTH; an application without credentials delivers', async () => {
            const t = await startSmtpCapture();
            try {
                expect(await ehlo(t.port)).to.not.contain('AUTH');
                const info = await t.transport().sendMail(mailTo('none', 'no auth'));
                expect(info.response).to.startWith('250');
                expect(await t.subjects('none')).to.equal(['no auth']);
            }
            finally {
                await t.stop();
            }
        });

        it('answers an AUTH command 500 not recognized, so a client that insists on logging in fails clearly', async () => {
            const t = await startSmtpCapture();
            try {
                const { session } = await RawSmtpSession.open(t.port);
                await session.command('EHLO client.test');
                const auth = await session.command(`AUTH PLAIN ${Buffer.from('\0app\0app-secret').toString('base64')}`);
                expect(auth.code).to.equal(500);
                await session.command('QUIT');

                // Nodemailer with `auth` and `forceAuth` (an application that insists on logging in).
                // (`forceAuth` is a Nodemailer option its type declarations leave out.)
                const insisting = { forceAuth: true };
                const err = await sendError(t.transport({ auth: { user: 'app', pass: 'app-secret' }, ...insisting }).sendMail(mailTo('none', 'forced')));
                expect(err.code).to.equal('EAUTH');
                expect(err.responseCode).to.equal(500);
                expect(await t.subjects('none')).to.equal([]);
            }
            finally {
                await t.stop();
            }
        });

        it('still delivers for Nodemailer with plain `auth` (it logs in only where AUTH is offered)', async () => {
            const t = await startSmtpCapture({ auth: 'none' });
            try {
                await t.transport({ auth: { user: 'app', pass: 'app-secret' } }).sendMail(mailTo('none', 'creds ignored'));
                expect(await t.subjects('none')).to.equal(['creds ignored']);
            }
            finally {
                await t.stop();
            }
        });
    });

    describe("auth 'accept-any'", () => {

        it('offers AUTH PLAIN and LOGIN in plain text', async () => {
            const t = await startSmtpCapture({ auth: 'accept-any' });
            try {
                expect(await ehlo(t.port)).to.contain(`250-AUTH ${SMTP_AUTH_METHODS.join(' ')}`);
                expect(SMTP_AUTH_METHODS).to.equal(['PLAIN', 'LOGIN']);
            }
            finally {
                await t.stop();
            }
        });

        it('accepts any credentials by PLAIN and by LOGIN, and no credentials, without TLS', async () => {
            const t = await startSmtpCapture({ auth: 'accept-any' });
            try {
                await t.transport({ auth: { user: 'whoever', pass: 'whatever' }, authMethod: 'PLAIN' }).sendMail(mailTo('any', 'plain'));
                await t.transport({ auth: { user: 'someone', pass: 'else' }, authMethod: 'LOGIN' }).sendMail(mailTo('any', 'login'));
                await t.transport().sendMail(mailTo('any', 'anonymous'));
                expect((await t.subjects('any')).sort()).to.equal(['anonymous', 'login', 'plain']);
            }
            finally {
                await t.stop();
            }
        });
    });

    describe('auth { users }', () => {

        it('offers AUTH PLAIN and LOGIN and delivers for the right pair by either, without TLS', async () => {
            const t = await startSmtpCapture({ auth: USERS });
            try {
                expect(await ehlo(t.port)).to.contain('250-AUTH PLAIN LOGIN');
                await t.transport({ auth: { user: 'app', pass: 'app-secret' }, authMethod: 'PLAIN' }).sendMail(mailTo('users', 'by plain'));
                // A user name with a colon, a password with colons.
                await t.transport({ auth: { user: 'ci:bot', pass: 'p:a:s:s' }, authMethod: 'LOGIN' }).sendMail(mailTo('users', 'by login'));
                expect((await t.subjects('users')).sort()).to.equal(['by login', 'by plain']);
            }
            finally {
                await t.stop();
            }
        });

        it('answers a wrong password and an unknown user 535, by PLAIN and by LOGIN, and stores nothing', async () => {
            const t = await startSmtpCapture({ auth: USERS });
            try {
                for (const authMethod of ['PLAIN', 'LOGIN']) {
                    const wrong = await sendError(t.transport({ auth: { user: 'app', pass: 'guess' }, authMethod }).sendMail(mailTo('users', 'wrong')));
                    expect(wrong.code).to.equal('EAUTH');
                    expect(wrong.responseCode).to.equal(535);
                    const unknown = await sendError(t.transport({ auth: { user: 'mallory', pass: 'app-secret' }, authMethod }).sendMail(mailTo('users', 'unknown')));
                    expect(unknown.responseCode).to.equal(535);
                }

                expect(await t.subjects('users')).to.equal([]);
            }
            finally {
                await t.stop();
            }
        });

        it('closes a connection with 421 at its third failed AUTH; a new connection may log in', async () => {
            const t = await startSmtpCapture({ auth: USERS });
            try {
                expect(MAX_AUTH_FAILURES_PER_CONNECTION).to.equal(3);
                const { session } = await RawSmtpSession.open(t.port);
                await session.command('EHLO client.test');
                const wrong = `AUTH PLAIN ${Buffer.from('\0app\0guess').toString('base64')}`;
                expect((await session.command(wrong)).code).to.equal(535);
                expect((await session.command(wrong)).code).to.equal(535);
                const last = await session.command(wrong);
                expect(last.code).to.equal(421);
                expect(last.text).to.contain('too many failed authentication attempts');
                await session.closed;

                await t.transport({ auth: { user: 'app', pass: 'app-secret' } }).sendMail(mailTo('users', 'after the guesses'));
                expect(await t.subjects('users')).to.equal(['after the guesses']);
            }
            finally {
                await t.stop();
            }
        });

        it('answers MAIL FROM without AUTH 530', async () => {
            const t = await startSmtpCapture({ auth: USERS });
            try {
                const anonymous = await sendError(t.transport().sendMail(mailTo('users', 'anonymous')));
                expect(anonymous.responseCode).to.equal(530);

                const { session } = await RawSmtpSession.open(t.port);
                await session.command('EHLO client.test');
                expect((await session.command('MAIL FROM:<app@example.test>')).code).to.equal(530);
                // After AUTH the same session may send.
                const plain = Buffer.from('\0app\0app-secret').toString('base64');
                expect((await session.command(`AUTH PLAIN ${plain}`)).code).to.equal(235);
                expect((await session.command('MAIL FROM:<app@example.test>')).code).to.equal(250);
                await session.command('QUIT');
                expect(await t.subjects('users')).to.equal([]);
            }
            finally {
                await t.stop();
            }
        });
    });

    describe('options', () => {

        it('rejects malformed auth settings at creation', () => {
            const capture = stubCapture();
            expect(() => createSmtpListener({ capture, auth: 'any' as never })).to.throw(TypeError, /auth must be 'none', 'accept-any' or \{ users/);
            expect(() => createSmtpListener({ capture, auth: { users: {} } })).to.throw(TypeError, /at least one user/);
            expect(() => createSmtpListener({ capture, auth: { users: { app: '' } } })).to.throw(TypeError, /non-empty/);
            expect(() => createSmtpListener({ capture, auth: { users: { app: 42 as never } } })).to.throw(TypeError, /string password/);
            // AUTH only over TLS, with TLS off, would let nobody in.
            expect(() => createSmtpListener({ capture, auth: USERS, allowInsecureAuth: false })).to.throw(TypeError, /allowInsecureAuth: false needs tls/);
        });
    });
});
