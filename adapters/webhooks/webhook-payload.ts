/** The bytes and headers of one webhook POST (docs/api.md, "Webhooks"). */

import { createHmac } from 'node:crypto';

/** The one event there is. */
export const EMAIL_RECEIVED_EVENT = 'email.received';

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
export function webhookRequest(deliveryId: string, email: unknown, key: Buffer | undefined, nowMs = Date.now()): { body: Buffer; headers: Record<string, string> } {
    const body = Buffer.from(JSON.stringify({ event: EMAIL_RECEIVED_EVENT, email }), 'utf8');
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
