/** The bytes and headers of one webhook POST (docs/api.md, "Webhooks"). */

import { createHmac } from 'node:crypto';

/** The one event there is. */
export const EMAIL_RECEIVED_EVENT = 'email.received';

/** `sha256=<hex HMAC-SHA256 of body with secret>`, the X-Inbox-Capture-Signature value. */
export function signWebhookBody(secret: string, body: Buffer): string {
    return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** A POST's body and headers: `{ "event": "email.received", "email": <email> }`, signed when there is a secret. */
export function webhookRequest(deliveryId: string, email: unknown, secret: string | undefined): { body: Buffer; headers: Record<string, string> } {
    const body = Buffer.from(JSON.stringify({ event: EMAIL_RECEIVED_EVENT, email }), 'utf8');
    const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-inbox-capture-event': EMAIL_RECEIVED_EVENT,
        'x-inbox-capture-delivery': deliveryId
    };
    if (secret !== undefined) {
        headers['x-inbox-capture-signature'] = signWebhookBody(secret, body);
    }

    return { body, headers };
}
