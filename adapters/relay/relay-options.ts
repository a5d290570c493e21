/** The relay's options (docs/api.md, "Release"): the plugin's `relay`, and the environment's INBOX_CAPTURE_RELAY_*. */

import Joi from 'joi';
import type { DeliveryTimingOptions } from '../../lib/outbox/outbox-dispatcher';
import { parseRelayAllowList } from '../../lib/relay/allow-list';
import type { Relay } from '../../lib/relay/relay';
import { createSmtpRelay, parseRelayUrl, type RelayPool, type SmtpRelayOptions } from './smtp-relay';

/** Longest auto-relay query, characters: the search language's own bound. */
export const MAX_AUTO_MATCH_LENGTH = 1024;

/** Where released mail goes, where it may go, and which captured mail goes there by itself. */
export interface RelayOptions extends SmtpRelayOptions {
    /** Addresses (`alice@example.org`) and domains (`*@example.com`) the relay may send to; required. */
    allow: string[];
    /** Relay every captured email that matches this query (the search language) and whose recipient is allowed (default: none). */
    autoMatch?: string;
    /** How auto-relay deliveries are retried (each has the webhooks' default). */
    delivery?: Omit<DeliveryTimingOptions, 'timeoutMs'>;
}

/** The joi schema of the `relay` option: the URL and the allow-list checked as they will be used. */
export const relayOptionsSchema = Joi.object({
    url: Joi.string().max(2048).required().custom((value: string, helpers) => {
        try {
            parseRelayUrl(value);
            return value;
        }
        catch (err) {
            return helpers.message({ custom: `"relay.url": ${(err as Error).message}` });
        }
    }),
    allow: Joi.array().items(Joi.string().max(254)).min(1).required().custom((value: string[], helpers) => {
        try {
            parseRelayAllowList(value);
            return value;
        }
        catch (err) {
            return helpers.message({ custom: `"relay.allow": ${(err as Error).message}` });
        }
    }),
    autoMatch: Joi.string().min(1).max(MAX_AUTO_MATCH_LENGTH),
    tls: Joi.object({
        ca: Joi.alternatives(Joi.string(), Joi.binary()),
        rejectUnauthorized: Joi.boolean()
    }),
    timeoutMs: Joi.number().integer().min(1).max(600_000),
    delivery: Joi.object({
        firstRetryMs: Joi.number().integer().min(1).max(10_000),
        maxRetryMs: Joi.number().integer().min(1),
        giveUpAfterMs: Joi.number().integer().min(1),
        pollIntervalMs: Joi.number().integer().min(10),
        concurrency: Joi.number().integer().min(1).max(1000)
    })
});

/** The relay a validated `relay` option describes, its SMTP client ready (pooled with `pool`). */
export function createRelay(options: RelayOptions, pool?: RelayPool): Relay {
    return { transport: createSmtpRelay(options, pool), allow: parseRelayAllowList(options.allow) };
}
