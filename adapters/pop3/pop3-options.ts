import Joi from 'joi';
import type { SmtpAuthLockoutOptions } from '../smtp/auth-lockout';
import { certificatePairProblem, type SmtpTls } from '../smtp/smtp-tls';
import { DEFAULT_MAX_POP3_COMMANDS, DEFAULT_MAX_POP3_CONNECTIONS, DEFAULT_POP3_AUTH_FAILURE_DELAY_MS, DEFAULT_POP3_IDLE_TIMEOUT_MS, DEFAULT_POP3_PORT } from './pop3-defaults';

/** How the POP3 listener is built (docs/operations.md, "POP3"). */
export interface Pop3ListenerOptions {
    /** Interface to listen on (default 127.0.0.1). */
    host?: string;
    /** TCP port (default 1110; 0 picks a free one, see `listen()`'s answer). */
    port?: number;
    /**
     * TLS, `'off'` by default. `'starttls'` offers STLS, `'implicit'` is POP3S (the greeting
     * inside TLS); a mode alone makes a self-signed certificate at `listen()`, or
     * `{ mode?, key, cert }` (PEM) gives one (`mode` defaults to `'starttls'`), as the SMTP listener takes it.
     */
    tls?: SmtpTls;
    /** Concurrent connections (default 100); more are answered `-ERR` and closed. */
    maxConnections?: number;
    /** Milliseconds of client silence before a session is closed (default 600000). */
    idleTimeoutMs?: number;
    /** Commands one session may send (default 10000); the next is answered `-ERR` and the session closed. */
    maxCommands?: number;
    /** Milliseconds a wrong USER/PASS waits before its `-ERR` (default 1000). */
    authFailureDelayMs?: number;
    /** Failed logins counted per client address, as for SMTP AUTH: 5 within a minute lock it out for a minute. */
    authLockout?: SmtpAuthLockoutOptions;
    /** Host name for a generated certificate (default: the machine's host name). */
    name?: string;
    /** Receives failures worth knowing (a store failing mid-session, socket errors). */
    log?: (message: string, error?: unknown) => void;
}

const positive = Joi.number().integer().min(1);
const pem = Joi.alternatives(Joi.string(), Joi.binary());

const optionsSchema = Joi.object<Pop3ListenerOptions>({
    host: Joi.string().min(1),
    port: Joi.number().integer().min(0).max(65535).default(DEFAULT_POP3_PORT),
    tls: Joi.alternatives(
        Joi.string().valid('off', 'starttls', 'implicit'),
        Joi.object({ mode: Joi.string().valid('starttls', 'implicit'), key: pem.required(), cert: pem.required() })
    ).default('off'),
    maxConnections: positive.default(DEFAULT_MAX_POP3_CONNECTIONS),
    idleTimeoutMs: positive.default(DEFAULT_POP3_IDLE_TIMEOUT_MS),
    maxCommands: positive.default(DEFAULT_MAX_POP3_COMMANDS),
    authFailureDelayMs: Joi.number().integer().min(0).max(60_000).default(DEFAULT_POP3_AUTH_FAILURE_DELAY_MS),
    authLockout: Joi.object({ failures: positive, windowMs: positive, lockoutMs: positive, maxAddresses: positive }),
    name: Joi.string().min(1),
    log: Joi.function()
});

/** The options with every default filled in. */
export type ResolvedPop3Options = Required<Omit<Pop3ListenerOptions, 'authLockout' | 'name' | 'log' | 'host'>> & Pick<Pop3ListenerOptions, 'authLockout' | 'name' | 'log' | 'host'>;

/** Checks the options (joi) and the certificate pair; throws a TypeError naming what is wrong. */
export function resolvePop3Options(options: unknown): ResolvedPop3Options {
    const { error, value } = optionsSchema.validate(options ?? {}, { abortEarly: false, convert: false });
    if (error) {
        throw new TypeError(`createPop3Listener: ${error.message}`);
    }

    const resolved = value as ResolvedPop3Options;
    if (typeof resolved.tls === 'object') {
        const problem = certificatePairProblem(resolved.tls.key, resolved.tls.cert);
        if (problem) {
            throw new TypeError(`createPop3Listener: tls: ${problem}`);
        }
    }

    return resolved;
}
