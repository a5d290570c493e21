/** Retention settings as text (docs/operations.md, "Retention"): the environment variables and `prune`'s flags. */

import { MAX_PER_INBOX_LIMIT, MAX_RETENTION_DURATION_MS, MIN_RETENTION_DURATION_MS, type RetentionOptions } from '../../lib/service/retention';

/** Milliseconds per unit of a duration: `90s`, `30m`, `12h`, `7d`. */
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** What a duration may look like, for messages. */
export const DURATION_SYNTAX = 'a duration such as 90s, 30m, 12h, 7d, or a number of milliseconds, from 1s to 36500d';

/** Retention's environment variables, by role. */
export const RETENTION_ENV = {
    maxAge: 'INBOX_CAPTURE_RETENTION_MAX_AGE',
    maxPerInbox: 'INBOX_CAPTURE_RETENTION_MAX_PER_INBOX',
    interval: 'INBOX_CAPTURE_RETENTION_INTERVAL'
} as const;

/** `90s` / `30m` / `12h` / `7d` / milliseconds → ms, or null when it is none of those or out of range (1s..36500d). */
export function parseDuration(text: string): number | null {
    const match = /^(\d{1,16})([smhd]?)$/.exec(text);
    if (!match) {
        return null;
    }

    const ms = Number(match[1]) * (match[2] ? UNIT_MS[match[2]]! : 1);
    return ms >= MIN_RETENTION_DURATION_MS && ms <= MAX_RETENTION_DURATION_MS ? ms : null;
}

/** A whole number of emails from 1 to MAX_PER_INBOX_LIMIT, or null. */
export function parseMaxPerInbox(text: string): number | null {
    if (!/^\d{1,10}$/.test(text)) {
        return null;
    }

    const n = Number(text);
    return n >= 1 && n <= MAX_PER_INBOX_LIMIT ? n : null;
}

/**
 * The retention the environment asks for, or undefined when neither rule is set (off).
 * `invalid(name, value, expected)` makes the error thrown for a bad variable; setting the
 * interval alone is one too, since it would silently do nothing.
 */
export function readRetentionEnv(read: (name: string) => string | undefined, invalid: (message: string) => Error): RetentionOptions | undefined {
    const parsed = <T>(name: string, parse: (text: string) => T | null, expected: string): T | undefined => {
        const text = read(name);
        if (text === undefined) {
            return undefined;
        }

        const value = parse(text);
        if (value === null) {
            throw invalid(`${name} must be ${expected}, got "${text}"`);
        }

        return value;
    };

    const maxAgeMs = parsed(RETENTION_ENV.maxAge, parseDuration, DURATION_SYNTAX);
    const maxPerInbox = parsed(RETENTION_ENV.maxPerInbox, parseMaxPerInbox, `a whole number of emails from 1 to ${MAX_PER_INBOX_LIMIT}`);
    const intervalMs = parsed(RETENTION_ENV.interval, parseDuration, DURATION_SYNTAX);
    if (maxAgeMs === undefined && maxPerInbox === undefined) {
        if (intervalMs !== undefined) {
            throw invalid(`${RETENTION_ENV.interval} is set, but neither ${RETENTION_ENV.maxAge} nor ${RETENTION_ENV.maxPerInbox}: set one of them to turn retention on, or unset it`);
        }

        return undefined;
    }

    return { maxAgeMs, maxPerInbox, intervalMs };
}
