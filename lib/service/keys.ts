import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../identity/ids';

/** Prefix that makes our keys recognisable in config files and secret scanners. */
export const KEY_PREFIX = 'ic_';

/** A new API key: 32 random bytes as `ic_<base64url>`. Shown once, never stored. */
export function generateApiKey(): string {
    return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The stored form of a key: SHA-256 hex of the whole token. */
export function hashApiKey(token: string): string {
    return sha256Hex(token);
}
