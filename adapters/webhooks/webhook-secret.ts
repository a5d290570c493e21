/**
 * Webhook secrets as the Standard Webhooks specification gives them (docs/api.md,
 * "Webhooks"): `whsec_<base64>` is a key of the decoded bytes; any other text is a key of
 * its UTF-8 bytes.
 */

import { randomBytes } from 'node:crypto';

/** The prefix of a base64 secret. */
export const WHSEC_PREFIX = 'whsec_';

/** Bytes of a secret `inbox-capture webhook-secret` makes: the HMAC-SHA256 block's worth is more than enough. */
const NEW_SECRET_BYTES = 32;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The HMAC key a secret stands for, or a sentence saying why it is none: a `whsec_`
 * secret must be canonical base64 of at least one byte, any other secret non-empty.
 */
export function webhookKey(secret: string): Buffer | string {
    if (!secret.startsWith(WHSEC_PREFIX)) {
        return secret.length > 0 ? Buffer.from(secret, 'utf8') : 'a webhook secret must not be empty';
    }

    const encoded = secret.slice(WHSEC_PREFIX.length);
    if (encoded.length === 0 || !BASE64.test(encoded)) {
        return `a secret starting with ${WHSEC_PREFIX} must be base64 after it (as \`inbox-capture webhook-secret\` prints)`;
    }

    return Buffer.from(encoded, 'base64');
}

/** A new random secret, `whsec_` and the base64 of 32 bytes. */
export function newWebhookSecret(): string {
    return `${WHSEC_PREFIX}${randomBytes(NEW_SECRET_BYTES).toString('base64')}`;
}
