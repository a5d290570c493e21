import { readFileSync } from 'node:fs';
import * as Path from 'node:path';
import { ConfigError, read as readEnvVar } from './env-config';
import type { SmtpAuth } from '../smtp/smtp-auth';
import { certificatePairProblem, type SmtpTls, type SmtpTlsInfo } from '../smtp/smtp-tls';

/** SMTP authentication and TLS of the standalone service (docs/operations.md, "SMTP authentication and TLS"), as `createSmtpListener()` options. */
export interface SmtpEnvConfig {
    auth: SmtpAuth;
    tls: SmtpTls;
}

const AUTH_MODES = ['none', 'accept-any', 'users'];
const TLS_MODES = ['off', 'starttls', 'implicit'];

/** A variable that takes one of a few words (case-insensitive), or its default when unset. */
function readChoice(env: NodeJS.ProcessEnv, name: string, choices: string[]): string {
    const value = readEnvVar(env, name)?.toLowerCase() ?? choices[0];
    if (!choices.includes(value)) {
        throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${value}"`);
    }

    return value;
}

/**
 * `SMTP_AUTH_USERS=name:password,...`: the password is everything after the first
 * colon (it may hold colons, not commas). Errors name the entry by its position,
 * never by its text, which holds a password.
 */
function parseUsers(value: string): Record<string, string> {
    const users: Record<string, string> = {};
    const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean);
    entries.forEach((entry, index) => {
        const colon = entry.indexOf(':');
        const name = colon === -1 ? '' : entry.slice(0, colon).trim();
        const password = colon === -1 ? '' : entry.slice(colon + 1);
        if (!name || !password) {
            throw new ConfigError(`SMTP_AUTH_USERS entry ${index + 1} must be name:password with neither empty`);
        }

        if (Object.hasOwn(users, name)) {
            throw new ConfigError(`SMTP_AUTH_USERS names user "${name}" twice`);
        }

        users[name] = password;
    });

    if (entries.length === 0) {
        throw new ConfigError('SMTP_AUTH_USERS must list at least one name:password');
    }

    return users;
}

function readPemFile(env: NodeJS.ProcessEnv, name: string, cwd: string): Buffer {
    const file = Path.resolve(cwd, readEnvVar(env, name)!);
    try {
        return readFileSync(file);
    }
    catch (err) {
        throw new ConfigError(`${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
}

/**
 * Reads SMTP_AUTH, SMTP_AUTH_USERS, SMTP_TLS, SMTP_TLS_CERT and SMTP_TLS_KEY; reads
 * and checks the PEM files now, so a bad one stops the service at start. Throws
 * ConfigError on the first mistake, including settings that would be silently ignored.
 */
export function readSmtpEnvConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): SmtpEnvConfig {
    const authMode = readChoice(env, 'SMTP_AUTH', AUTH_MODES);
    const usersValue = readEnvVar(env, 'SMTP_AUTH_USERS');
    if (authMode !== 'users' && usersValue !== undefined) {
        throw new ConfigError(`SMTP_AUTH_USERS is only used with SMTP_AUTH=users (SMTP_AUTH is ${authMode})`);
    }

    // Without SMTP_AUTH_USERS, only the SMTP users kept in the store log in (docs/tenants.md).
    const auth: SmtpAuth = authMode === 'users' ? { users: usersValue === undefined ? {} : parseUsers(usersValue) } : authMode as 'none' | 'accept-any';

    const tlsMode = readChoice(env, 'SMTP_TLS', TLS_MODES) as 'off' | 'starttls' | 'implicit';
    const certGiven = readEnvVar(env, 'SMTP_TLS_CERT') !== undefined;
    const keyGiven = readEnvVar(env, 'SMTP_TLS_KEY') !== undefined;
    if (tlsMode === 'off' && (certGiven || keyGiven)) {
        throw new ConfigError('SMTP_TLS_CERT and SMTP_TLS_KEY are only used with SMTP_TLS=starttls or implicit (SMTP_TLS is off)');
    }

    if (certGiven !== keyGiven) {
        throw new ConfigError('SMTP_TLS_CERT and SMTP_TLS_KEY go together: set both, or neither for a self-signed certificate');
    }

    if (tlsMode === 'off' || !certGiven) {
        return { auth, tls: tlsMode };
    }

    const cert = readPemFile(env, 'SMTP_TLS_CERT', cwd);
    const key = readPemFile(env, 'SMTP_TLS_KEY', cwd);
    const problem = certificatePairProblem(key, cert);
    if (problem) {
        throw new ConfigError(`SMTP_TLS_CERT / SMTP_TLS_KEY: ${problem}`);
    }

    return { auth, tls: { mode: tlsMode, key, cert } };
}

/**
 * Words for the start-up line: how clients log in and where TLS starts, with the
 * certificate's SHA-256 fingerprint (to compare with what a client sees, or to pin it).
 */
export function describeSmtpSecurity(config: SmtpEnvConfig, tls?: SmtpTlsInfo): string {
    const users = typeof config.auth === 'object' ? Object.keys(config.auth.users).length : 0;
    const auth = typeof config.auth === 'object' ? `AUTH required (${users === 0 ? 'the SMTP users kept in the store' : `${users} ${users === 1 ? 'user' : 'users'}`})` :
        config.auth === 'accept-any' ? 'AUTH optional, any credentials' : 'no AUTH';
    if (!tls) {
        return `${auth}, no TLS`;
    }

    const where = tls.mode === 'implicit' ? 'implicit TLS' : 'STARTTLS';
    return `${auth}, ${where}, ${tls.selfSigned ? 'self-signed certificate made at start' : 'certificate from SMTP_TLS_CERT'}, SHA-256 ${tls.fingerprint256}`;
}
