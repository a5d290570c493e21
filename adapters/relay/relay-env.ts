/** The standalone service's relay variables (docs/api.md, "Environment variables"). */

import { parseRelayAllowList } from '../../lib/relay/allow-list';
import { MAX_AUTO_MATCH_LENGTH, type RelayOptions } from './relay-options';
import { parseRelayUrl } from './smtp-relay';

/**
 * Reads INBOX_CAPTURE_RELAY_URL (`smtp://[user:pass@]host:port` or `smtps://...`),
 * INBOX_CAPTURE_RELAY_ALLOW (comma-separated `*@example.com`, `alice@example.org`;
 * required with a URL) and INBOX_CAPTURE_RELAY_AUTO_MATCH (a search query). Answers
 * undefined when no URL is set; `fail(message)` throws the caller's ConfigError, whose
 * message never holds the URL's password.
 */
export function readRelayEnv(read: (name: string) => string | undefined, fail: (message: string) => never): RelayOptions | undefined {
    const url = read('INBOX_CAPTURE_RELAY_URL');
    const allow = read('INBOX_CAPTURE_RELAY_ALLOW');
    const autoMatch = read('INBOX_CAPTURE_RELAY_AUTO_MATCH');
    if (url === undefined) {
        if (allow !== undefined || autoMatch !== undefined) {
            fail('INBOX_CAPTURE_RELAY_ALLOW and INBOX_CAPTURE_RELAY_AUTO_MATCH need INBOX_CAPTURE_RELAY_URL');
        }

        return undefined;
    }

    try {
        parseRelayUrl(url);
    }
    catch (err) {
        fail(`INBOX_CAPTURE_RELAY_URL: ${(err as Error).message}`);
    }

    if (allow === undefined) {
        fail('INBOX_CAPTURE_RELAY_ALLOW is required with INBOX_CAPTURE_RELAY_URL: the addresses (alice@example.org) and domains (*@example.com) the relay may send to');
    }

    const patterns = allow.split(',').map((p) => p.trim()).filter((p) => p !== '');
    try {
        parseRelayAllowList(patterns);
    }
    catch (err) {
        fail(`INBOX_CAPTURE_RELAY_ALLOW: ${(err as Error).message}`);
    }

    if (autoMatch !== undefined && autoMatch.length > MAX_AUTO_MATCH_LENGTH) {
        fail(`INBOX_CAPTURE_RELAY_AUTO_MATCH is longer than ${MAX_AUTO_MATCH_LENGTH} characters`);
    }

    return { url, allow: patterns, ...(autoMatch !== undefined ? { autoMatch } : {}) };
}

/**
 * The relay for the start lines: where it sends, to whom, and what auto-relay sends. Never
 * the login: the password is secret, and some providers use the same token as user name.
 */
export function describeRelay(relay: RelayOptions): string {
    const { secure, host, port, auth } = parseRelayUrl(relay.url);
    const target = `${secure ? 'smtps' : 'smtp'}://${host.includes(':') ? `[${host}]` : host}:${port}${auth ? ' (with a login)' : ''}`;
    const auto = relay.autoMatch === undefined ? 'auto-relay off' : `auto-relay of mail matching ${JSON.stringify(relay.autoMatch)}`;
    return `relay: to ${target}, only to ${relay.allow.join(', ')}; ${auto}`;
}
