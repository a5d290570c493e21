/** The standalone service's webhook variables (docs/api.md, "Environment variables"). */

import type { WebhookDeliveryOptions } from './webhook-dispatcher';
import { webhookKey } from './webhook-secret';
import type { WebhookTarget } from './webhook-target';

/** What the webhook variables configure; absent fields take the plugin's defaults. */
export interface WebhookEnv {
    webhooks: WebhookTarget[];
    webhookDelivery: WebhookDeliveryOptions;
}

/** Longest webhook URL, characters (as the plugin option allows). */
const MAX_URL_LENGTH = 2048;
/** Upper bound of the timing variables, ms: the rule's 10 s. */
const MAX_TIMING_MS = 10_000;
/** Least poll interval, ms: the plugin option's own floor. */
const MIN_POLL_MS = 10;

/**
 * Reads INBOX_CAPTURE_WEBHOOK_URL (one http(s) URL, or several separated by commas),
 * INBOX_CAPTURE_WEBHOOK_SECRET (signs for every URL: `whsec_<base64>` or plain text), and the timings
 * INBOX_CAPTURE_WEBHOOK_TIMEOUT_MS and INBOX_CAPTURE_WEBHOOK_FIRST_RETRY_MS (1..10000) and
 * INBOX_CAPTURE_WEBHOOK_POLL_MS (10..10000).
 * Answers undefined when no URL is set; `fail(message)` throws the caller's ConfigError.
 */
export function readWebhookEnv(read: (name: string) => string | undefined, fail: (message: string) => never): WebhookEnv | undefined {
    const list = read('INBOX_CAPTURE_WEBHOOK_URL');
    const secret = read('INBOX_CAPTURE_WEBHOOK_SECRET');
    if (list === undefined) {
        if (secret !== undefined) {
            fail('INBOX_CAPTURE_WEBHOOK_SECRET is set but INBOX_CAPTURE_WEBHOOK_URL is not');
        }

        return undefined;
    }

    const urls = [...new Set(list.split(',').map((u) => u.trim()).filter((u) => u !== ''))];
    for (const url of urls) {
        if (!isHttpUrl(url)) {
            fail(`INBOX_CAPTURE_WEBHOOK_URL must hold http:// or https:// URLs separated by commas, got "${url.slice(0, 100)}"`);
        }
    }

    if (urls.length === 0) {
        fail('INBOX_CAPTURE_WEBHOOK_URL holds no URL');
    }

    const malformed = secret === undefined ? undefined : webhookKey(secret);
    if (typeof malformed === 'string') {
        fail(`INBOX_CAPTURE_WEBHOOK_SECRET: ${malformed}`);
    }

    const webhookDelivery: WebhookDeliveryOptions = {};
    const timeout = readMs(read, fail, 'INBOX_CAPTURE_WEBHOOK_TIMEOUT_MS');
    const firstRetry = readMs(read, fail, 'INBOX_CAPTURE_WEBHOOK_FIRST_RETRY_MS');
    const poll = readMs(read, fail, 'INBOX_CAPTURE_WEBHOOK_POLL_MS', MIN_POLL_MS);
    if (timeout !== undefined) {
        webhookDelivery.timeoutMs = timeout;
    }

    if (firstRetry !== undefined) {
        webhookDelivery.firstRetryMs = firstRetry;
    }

    if (poll !== undefined) {
        webhookDelivery.pollIntervalMs = poll;
    }

    return { webhooks: urls.map((url) => (secret === undefined ? { url } : { url, secret })), webhookDelivery };
}

function isHttpUrl(value: string): boolean {
    if (value.length > MAX_URL_LENGTH || /\s/.test(value)) {
        return false;
    }

    try {
        const url = new URL(value);
        return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    }
    catch {
        return false;
    }
}

function readMs(read: (name: string) => string | undefined, fail: (message: string) => never, name: string, min = 1): number | undefined {
    const value = read(name);
    if (value === undefined) {
        return undefined;
    }

    if (!/^\d{1,5}$/.test(value) || Number(value) < min || Number(value) > MAX_TIMING_MS) {
        fail(`${name} must be a whole number of milliseconds ${min}..${MAX_TIMING_MS}, got "${value.slice(0, 100)}"`);
    }

    return Number(value);
}
