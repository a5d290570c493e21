import { createHash, timingSafeEqual } from 'node:crypto';
import type { SMTPServerAuthentication, SMTPServerAuthenticationResponse, SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import type { SmtpUserCheck } from '../../lib/service/smtp-users';
import type { AuthLockout } from './auth-lockout';
import { smtpReply } from './smtp-replies';

/** Credentials accepted by SMTP AUTH (PLAIN, LOGIN). */
export interface SmtpAuthUsers {
    /** user name → password */
    users: Record<string, string>;
}

/**
 * SMTP AUTH (docs/operations.md, "SMTP authentication and TLS"). `'none'`: AUTH is not offered. `'accept-any'`: AUTH PLAIN
 * and LOGIN are offered and every credential accepted, and a client that does not log
 * in is accepted too. `{ users }`: only these pairs; MAIL FROM without AUTH gets 530.
 */
export type SmtpAuth = 'none' | 'accept-any' | SmtpAuthUsers;

/** The AUTH mechanisms offered: the two every application's mail library speaks. */
export const SMTP_AUTH_METHODS = ['PLAIN', 'LOGIN'];

/**
 * Failed AUTH attempts one connection may make: the last one is answered 421 and the
 * connection closed (a real client logs in once; a typo fails the first time). The
 * count per client address across connections (auth-lockout.ts) is what slows guessing.
 */
export const MAX_AUTH_FAILURES_PER_CONNECTION = 3;

/** SHA-256 of a string: equal-length inputs for a constant-time comparison. */
function digest(value: string): Buffer {
    return createHash('sha256').update(value, 'utf8').digest();
}

/** Throws a TypeError naming the option when `auth` is not one of the documented shapes. */
export function checkSmtpAuth(auth: unknown): asserts auth is SmtpAuth | undefined {
    if (auth === undefined || auth === 'none' || auth === 'accept-any') {
        return;
    }

    const users = typeof auth === 'object' && auth !== null ? (auth as { users?: unknown }).users : undefined;
    if (typeof users !== 'object' || users === null || Array.isArray(users)) {
        throw new TypeError(`createSmtpListener: auth must be 'none', 'accept-any' or { users: { name: 'password' } }`);
    }

    // `{ users: {} }` lets in only the users kept in the store (docs/tenants.md, "SMTP users").
    for (const [name, password] of Object.entries(users)) {
        if (name === '' || typeof password !== 'string' || password === '') {
            throw new TypeError('createSmtpListener: every auth.users entry needs a non-empty name and a non-empty string password');
        }
    }
}

/** A login checked against the users kept in the store (the service's verifySmtpUser()). */
export type StoredSmtpUsers = (name: string, password: string) => Promise<SmtpUserCheck>;

/** What the AUTH check needs besides the mode: the count per client address, and a way to hang up. */
export interface SmtpAuthGuard {
    /** Failures per client address, across connections. */
    lockout: AuthLockout;
    /** Closes the connection of `session` (after the reply already written). */
    close(session: SMTPServerSession): void;
    /** The users kept in the store (docs/tenants.md, "SMTP users"), asked on every AUTH; absent: none. */
    stored?: StoredSmtpUsers;
    /** Told of a session logged in as a stored user, with that user's inbox prefix. */
    onTenant?(session: SMTPServerSession, user: string, inboxPrefix: string): void;
    /** Told why the store could not be asked (the client got 454). */
    onError?(err: unknown): void;
}

/**
 * The smtp-server settings of an auth mode: whether AUTH is offered, whether it is
 * required, and the check of the credentials. AUTH works without TLS unless
 * `allowInsecureAuth` is false (test systems often send in plain text). With `{ users }`,
 * an address locked out by `guard.lockout` gets 454 and is hung up on before its
 * password is looked at, so guessing costs a minute per few tries per address. Users kept
 * in the store log in beside `{ users }`; under `'accept-any'` their wrong passwords are
 * refused and counted like any other guess (docs/tenants.md, "SMTP users").
 */
export function smtpAuthOptions(auth: SmtpAuth, allowInsecureAuth: boolean, guard: SmtpAuthGuard): Pick<SMTPServerOptions, 'authMethods' | 'authOptional' | 'allowInsecureAuth' | 'onAuth'> & { offered: boolean } {
    const users = typeof auth === 'object' ? new Map(Object.entries(auth.users).map(([u, p]) => [u, digest(p)])) : null;
    // Per connection: smtp-server keeps one session object for the life of a connection.
    const failures = new WeakMap<SMTPServerSession, number>();
    type Callback = (err: Error | null | undefined, response?: SMTPServerAuthenticationResponse) => void;

    const refuse = (session: SMTPServerSession, callback: Callback) => {
        guard.lockout.fail(session.remoteAddress);
        const failed = (failures.get(session) ?? 0) + 1;
        failures.set(session, failed);
        callback(failed >= MAX_AUTH_FAILURES_PER_CONNECTION ?
            smtpReply(421, 'Error: too many failed authentication attempts, closing connection') :
            smtpReply(535, 'Error: authentication failed'));
    };

    const lockedOut = (session: SMTPServerSession, callback: Callback) => {
        if (!guard.lockout.isLocked(session.remoteAddress)) {
            return false;
        }

        // RFC 4954 section 6: 454, temporary; a right password is refused too, or the lockout would still answer guesses.
        callback(smtpReply(454, 'Error: too many failed authentication attempts from your address, try again later'));
        guard.close(session);
        return true;
    };

    const check = async (credentials: SMTPServerAuthentication, session: SMTPServerSession, callback: Callback) => {
        const username = credentials.username ?? '';
        const password = credentials.password ?? '';
        if (users && lockedOut(session, callback)) {
            return;
        }

        const expected = users?.get(username);
        if (users) {
            // Compare digests even for an unknown user, so timing does not tell which names exist.
            const given = digest(password);
            if (timingSafeEqual(expected ?? digest('\0unknown user'), given) && expected !== undefined) {
                callback(null, { user: username });
                return;
            }
        }

        // A name of `users` is that user alone: the store is asked only for the others.
        const found = guard.stored && expected === undefined ? await guard.stored(username, password) : 'unknown-user';
        if (typeof found === 'object') {
            if (!users && lockedOut(session, callback)) {
                return;
            }

            guard.onTenant?.(session, username, found.inboxPrefix);
            callback(null, { user: username });
            return;
        }

        if (!users && found === 'unknown-user') {
            callback(null, { user: username });
            return;
        }

        if (!users && lockedOut(session, callback)) {
            return;
        }

        refuse(session, callback);
    };

    return {
        offered: auth !== 'none',
        authMethods: SMTP_AUTH_METHODS,
        authOptional: !users,
        allowInsecureAuth,
        onAuth(credentials: SMTPServerAuthentication, session, callback: Callback) {
            if (!users && !guard.stored) {
                callback(null, { user: credentials.username ?? '' });
                return;
            }

            check(credentials, session, callback).catch((err: unknown) => {
                // The store could not be asked: temporary, as any other store failure.
                callback(smtpReply(454, 'Error: authentication temporarily unavailable, try again later'));
                guard.onError?.(err);
            });
        }
    };
}
