/** The bytes and headers of one webhook POST (docs/api.md, "Webhooks"). */

import { createHmac } from 'node:crypto';

/** The one event there is. */
export const EMAIL_RECEIVED_EVENT = 'email.received';

/**
 * Largest body a POST carries with the email whole, bytes: 1 MiB. A larger one is sent
 * with `body` and `htmlBody` as `""` and `"truncated": true` beside `"event"`, and the
 * receiver reads the rest with `GET /v1/emails/{messageId}`: a receiver that refuses
 * large bodies (413) and is retried for a day is sent megabytes, not gigabytes.
 */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/** What a POST needs of the email object: its two bodies, which truncation empties. */
export interface WebhookEmail {
    body: string;
    htmlBody: string;
}

/**
 * The `webhook-signature` value of the Standard Webhooks specification:
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`. The id and the time are signed
 * with the body, so a captured POST replayed under another id or later does not verify.
 */
export function signWebhook(key: Buffer, id: string, timestampSeconds: number, body: Buffer): string {
    const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.`, 'utf8').update(body).digest('base64');
    return `v1,${mac}`;
}

/**
 * A POST's body and headers: `{ "event": "email.received", "email": <email> }` with the
 * Standard Webhooks headers (`webhook-id` the delivery id, `webhook-timestamp` this
 * attempt's Unix seconds), signed when there is a key.
 */
export function webhookRequest(deliveryId: string, email: WebhookEmail, key: Buffer | undefined, nowMs = Date.now()): { body: Buffer; headers: Record<string, string> } {
    const body = webhookBody(email);
    const timestamp = Math.floor(nowMs / 1000);
    const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-inbox-capture-event': EMAIL_RECEIVED_EVENT,
        'webhook-id': deliveryId,
        'webhook-timestamp': String(timestamp)
    };
    if (key !== undefined) {
        headers['webhook-signature'] = signWebhook(key, deliveryId, timestamp, body);
    }

    return { body, headers };
}

/**
 * `{ "event": "email.received", "email": <email> }`, or, when that would pass
 * MAX_WEBHOOK_BODY_BYTES, `{ "event": …, "truncated": true, "email": <email without its
 * bodies> }`. Bodies whose UTF-8 alone passes the limit are never serialised.
 */
export function webhookBody(email: WebhookEmail): Buffer {
    if (Buffer.byteLength(email.body) + Buffer.byteLength(email.htmlBody) <= MAX_WEBHOOK_BODY_BYTES) {
        const whole = Buffer.from(JSON.stringify({ event: EMAIL_RECEIVED_EVENT, email }), 'utf8');
        if (whole.length <= MAX_WEBHOOK_BODY_BYTES) {
            return whole;
        }
    }

    return Buffer.from(JSON.stringify({ event: EMAIL_RECEIVED_EVENT, truncated: true, email: { ...email, body: '', htmlBody: '' } }), 'utf8');
}
