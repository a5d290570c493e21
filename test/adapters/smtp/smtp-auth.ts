import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createSmtpListener } from '../../../adapters/smtp';
import { DEFAULT_AUTH_FAILURE_WINDOW_MS, DEFAULT_AUTH_FAILURES_PER_ADDRESS, DEFAULT_AUTH_LOCKOUT_MS } from '../../../adapters/smtp/auth-lockout';
import { MAX_AUTH_FAILURES_PER_CONNECTION, SMTP_AUTH_METHODS } from '../../../adapters/smtp/smtp-auth';
import { RawSmtpSession } from '../../helpers/raw-smtp';
import { mailTo, sendError, startSmtpCapture, stubCapture } from '../../helpers/smtp-capture';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const USERS = { users: { app: 'app-secret', 'ci:bot': 'p:a:s:s' } };

/** How long a session waits for the server to close the connection, ms: it closes at once; far above that. */
const CLOSE_WAIT_MS = 5000;

/** An AUTH PLAIN command line for user app. */
const authPlain = (password: string) => `AUTH PLAIN ${Buffer.from(`\0app\0${password}`).toString('base64')}`;

/** A session from `localAddress` that sends EHLO, then each AUTH password in turn; the reply codes, and whether the server closed the connection. */
async function tryPasswords(port: number, passwords: string[], localAddress = '127.0.0.1'): Promise<{ codes: number[]; closed: boolean }> {
    const { session } = await RawSmtpSession.open(port, localAddress);
    const codes: number[] = [];
    await session.command('EHLO client.test');
    for (const password of passwords) {
        codes.push((await session.command(authPlain(password))).code);
        if (codes.at(-1) !== 535) {
            break;
        }
    }

    const last = codes.at(-1);
    if (last === 235) {
        // Logged in: the session may send (MAIL FROM is refused 530 otherwise).
        codes.push((await session.command('MAIL FROM:<app@example.test>')).code);
    }

    if (last === 235 || last === 535) {
        await session.command('QUIT');
    }

    // The server hangs up after QUIT, 421 and 454: nothing of ours closes the connection first.
    const closed = await Promise.race([session.closed.then(() => true), new Promise<false>((resolve) => setTimeout(resolve, CLOSE_WAIT_MS, false))]);
    await session.destroy();
    return { codes, closed };
}

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

    describe('auth { users }: failures counted per client address', () => {

        it('answers the sixth attempt within a minute from one address 454 and closes, the right password included', async () => {
            const t = await startSmtpCapture({ auth: USERS });
            try {
                expect([DEFAULT_AUTH_FAILURES_PER_ADDRESS, DEFAULT_AUTH_FAILURE_WINDOW_MS, DEFAULT_AUTH_LOCKOUT_MS]).to.equal([5, 60_000, 60_000]);
                // Five wrong passwords over two connections (the first closed at its third, 421).
                expect(await tryPasswords(t.port, ['g1', 'g2', 'g3'])).to.equal({ codes: [535, 535, 421], closed: true });
                expect(await tryPasswords(t.port, ['g4', 'g5', 'g6'])).to.equal({ codes: [535, 535, 454], closed: true });
                // Locked out: even the right password is refused, unchecked, on a new connection.
                expect(await tryPasswords(t.port, ['app-secret'])).to.equal({ codes: [454], closed: true });
            }
            finally {
                await t.stop();
            }
        });

        it('lets the right password in from another address while one is locked out, and delivers', async () => {
            const t = await startSmtpCapture({ auth: USERS });
            try {
                expect((await tryPasswords(t.port, ['g1', 'g2', 'g3'])).codes).to.equal([535, 535, 421]);
                expect((await tryPasswords(t.port, ['g4', 'g5', 'g6'])).codes).to.equal([535, 535, 454]);

                // 127.0.0.2 reaches the same listener on 127.0.0.1 (Linux routes 127/8 to lo).
                expect(await tryPasswords(t.port, ['app-secret'], '127.0.0.2')).to.equal({ codes: [235, 250], closed: true });
                // Its own wrong passwords count apart: not locked by 127.0.0.1's failures.
                expect((await tryPasswords(t.port, ['h1', 'h2', 'app-secret'], '127.0.0.2')).codes).to.equal([535, 535, 235, 250]);
                const err = await sendError(t.transport({ auth: { user: 'app', pass: 'app-secret' } }).sendMail(mailTo('users', 'from the locked address')));
                expect(err.responseCode).to.equal(454);
                await t.transport({ auth: { user: 'app', pass: 'app-secret' }, localAddress: '127.0.0.3' }).sendMail(mailTo('users', 'from another address'));
                expect(await t.subjects('users')).to.equal(['from another address']);
            }
            finally {
                await t.stop();
            }
        });

        it('lets the address try again once the lockout is over', async () => {
            const t = await startSmtpCapture({ auth: USERS, authLockout: { lockoutMs: 300 } });
            try {
                expect((await tryPasswords(t.port, ['g1', 'g2', 'g3'])).codes).to.equal([535, 535, 421]);
                expect((await tryPasswords(t.port, ['g4', 'g5', 'g6'])).codes).to.equal([535, 535, 454]);
                await new Promise((resolve) => setTimeout(resolve, 400));
                expect((await tryPasswords(t.port, ['g7', 'app-secret'])).codes).to.equal([535, 235, 250]);
            }
            finally {
                await t.stop();
            }
        });

        it('counts only the failures within the window', async () => {
            const t = await startSmtpCapture({ auth: USERS, authLockout: { windowMs: 300 } });
            try {
                expect((await tryPasswords(t.port, ['g1', 'g2'])).codes).to.equal([535, 535]);
                expect((await tryPasswords(t.port, ['g3', 'g4'])).codes).to.equal([535, 535]);
                await new Promise((resolve) => setTimeout(resolve, 400));
                // Four failures, then the window passed: four more are allowed, the fifth locks.
                expect((await tryPasswords(t.port, ['g5', 'g6'])).codes).to.equal([535, 535]);
                expect((await tryPasswords(t.port, ['g7', 'g8', 'g9', 'g10'])).codes).to.equal([535, 535, 421]);
                expect((await tryPasswords(t.port, ['app-secret'])).codes).to.equal([454]);
            }
            finally {
                await t.stop();
            }
        });

        it("takes the numbers as options: { failures: 2 } locks at the second failure", async () => {
            const t = await startSmtpCapture({ auth: USERS, authLockout: { failures: 2 } });
            try {
                expect(await tryPasswords(t.port, ['g1', 'g2', 'g3'])).to.equal({ codes: [535, 535, 454], closed: true });
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
            expect(() => createSmtpListener({ capture, auth: { users: { app: '' } } })).to.throw(TypeError, /non-empty/);
            expect(() => createSmtpListener({ capture, auth: { users: { app: 42 as never } } })).to.throw(TypeError, /string password/);
            // AUTH only over TLS, with TLS off, would let nobody in.
            expect(() => createSmtpListener({ capture, auth: USERS, allowInsecureAuth: false })).to.throw(TypeError, /allowInsecureAuth: false needs tls/);
            expect(() => createSmtpListener({ capture, auth: USERS, authLockout: { failures: 0 } })).to.throw(TypeError, /authLockout.failures must be a positive integer/);
            expect(() => createSmtpListener({ capture, auth: USERS, authLockout: { windowMs: 1.5 } })).to.throw(TypeError, /authLockout.windowMs/);
        });
    });
});
