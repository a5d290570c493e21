import type { NewInbox } from './types';

/**
 * The domain of a new inbox's address when none is configured (INBOX_CAPTURE_MAIL_DOMAIN):
 * `.test` is reserved (RFC 2606), so a mail that escapes the capture goes nowhere real.
 * The MCP server's new_inbox and the Playwright fixture both use it.
 */
export const DEFAULT_MAIL_DOMAIN = 'inbox-capture.test';

/** Random characters after the prefix: 36^10 ≈ 3.7e15 names, so parallel tests never meet. */
export const RANDOM_CHARS = 10;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** Bytes at or above this would favour the first letters (256 % 36 = 4): drawn again. */
const UNBIASED_LIMIT = 256 - (256 % ALPHABET.length);
/** An inbox name is at most 64 characters: the prefix leaves room for the random part. */
const MAX_PREFIX = 64 - RANDOM_CHARS;
const PREFIX = /^[a-z0-9._-]*$/;

/** `count` characters of `a-z 0-9` from Web Crypto (Node ≥ 20 and browsers alike). */
export function randomInboxChars(count: number): string {
    let out = '';
    const bytes = new Uint8Array(count * 2);
    while (out.length < count) {
        globalThis.crypto.getRandomValues(bytes);
        for (const byte of bytes) {
            if (byte < UNBIASED_LIMIT && out.length < count) {
                out += ALPHABET[byte % ALPHABET.length];
            }
        }
    }

    return out;
}

/** A fresh inbox for one test: the prefix, then random characters; and its address at `domain`. */
export function newInbox(options: { prefix?: string; domain: string }): NewInbox {
    const prefix = options?.prefix ?? '';
    const domain = options?.domain;
    if (prefix.length > MAX_PREFIX || !PREFIX.test(prefix)) {
        throw new TypeError(`newInbox: prefix must be at most ${MAX_PREFIX} characters of a-z 0-9 . _ -`);
    }

    if (typeof domain !== 'string' || domain === '' || /[@\s]/.test(domain)) {
        throw new TypeError('newInbox: domain must be a domain name such as example.test');
    }

    const inbox = prefix + randomInboxChars(RANDOM_CHARS);
    return { inbox, address: `${inbox}@${domain}` };
}
