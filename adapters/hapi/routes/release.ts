import type { Request, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { InboxCaptureError, isInboxCaptureError } from '../../../lib/errors';
import { relayEmail, type Relay } from '../../../lib/relay/relay';
import { errorResponses, releasedSchema, SERVER_ERRORS } from '../api-schemas';
import type { ReleasedView } from '../api-types';
import { AUTH_STRATEGY } from '../auth-scheme';
import { apiError } from '../error-mapping';
import { keyScopeOf, routeAccess } from '../route-access';
import { API_TAG, BEARER_SECURITY, GROUP_EMAILS, type RouteContext } from '../route-context';
import { validationWords } from '../../error-detail/validation-words';
import { messageIdParams, noSuchEmail, paramsFailAction } from './emails';

/** Envelope recipients of one release, at most: smtp-server's and most relays' own bound. */
export const MAX_RELEASE_RECIPIENTS = 100;

/** The body of POST /v1/emails/{messageId}/release: optional, as is `to`. */
export const releaseRequestSchema = Joi.object({
    to: Joi.array().items(Joi.string().max(254).email({ tlds: false, ignoreLength: true })).min(1).max(MAX_RELEASE_RECIPIENTS)
        .description('Envelope recipients (default: the email\'s `recipient`); every one must be on the relay\'s allow-list.')
        .example(['alice@example.org'])
}).allow(null).label('ReleaseRequest');

// A path no email can have is NOT_FOUND, as on every single-email route; a bad body is
// VALIDATION_ERROR, an address of `to` the allow-list does not name RECIPIENT_NOT_ALLOWED.
function releaseFailAction(request: Request, _h: unknown, err?: Error): never {
    const failure = err as { output?: { payload?: { validation?: { source?: string } } }; details?: Joi.ValidationErrorItem[] } | undefined;
    if (failure?.output?.payload?.validation?.source === 'params') {
        paramsFailAction(request);
    }

    if (isInboxCaptureError(failure?.details?.[0]?.context?.error, 'RECIPIENT_NOT_ALLOWED')) {
        throw notAllowed();
    }

    throw apiError(400, 'VALIDATION_ERROR', validationWords(failure?.details ?? [], 'payload', releaseRequestSchema));
}

const notAllowed = () => apiError(400, 'RECIPIENT_NOT_ALLOWED', 'to: an address is not on the relay\'s allow-list; nothing was sent');

/** POST /v1/emails/{messageId}/release (docs/api.md, "Release"): the stored raw message to the configured relay. */
export function releaseRoutes(context: RouteContext, relayOf: () => Relay | undefined): ServerRoute[] {
    const { capture } = context;

    // The addresses the request names are checked with the body, so a refused one is a 400
    // before a read-only key's 403 and before the email is looked for (docs/api.md, "Release");
    // the email's own recipient, the default, once it is found. The relay is started with the
    // service, after the routes are registered: without one there is no allow-list yet.
    const payload = releaseRequestSchema.custom((value: { to?: string[] }) => {
        const allow = relayOf()?.allow;
        if (allow && value.to && !value.to.every((address) => allow.allows(address))) {
            throw new InboxCaptureError('RECIPIENT_NOT_ALLOWED', 'release: the allow-list does not name every address of `to`');
        }

        return value;
    });

    const release = async (request: Request): Promise<ReleasedView> => {
        const relay = relayOf();
        if (!relay) {
            throw apiError(409, 'RELAY_NOT_CONFIGURED', 'relay: this service has no relay configured');
        }

        const asked = (request.payload as { to?: string[] } | null)?.to;
        // An email of an inbox outside the key's prefix is answered as one that does not exist.
        const record = await capture.getEmail(request.params.messageId as string, keyScopeOf(request));
        if (!record) {
            throw noSuchEmail(request.params.messageId);
        }

        try {
            const to = await relayEmail(relay, capture.blobStore, record, asked);
            return { released: true, to };
        }
        catch (err) {
            if (isInboxCaptureError(err, 'RECIPIENT_NOT_ALLOWED')) {
                throw notAllowed();
            }

            if (isInboxCaptureError(err, 'RELAY_FAILED')) {
                // The relay's own words stay in the log: they may name hosts and accounts.
                request.log(['warning', 'inbox-capture'], err);
                throw apiError(502, 'RELAY_FAILED');
            }

            throw err;
        }
    };

    return [{
        method: 'POST',
        path: '/v1/emails/{messageId}/release',
        options: {
            auth: { strategy: AUTH_STRATEGY, mode: 'required' },
            tags: [API_TAG, GROUP_EMAILS],
            description: 'Release one email to the configured relay, byte for byte',
            notes: 'Sends the stored raw message to the relay (INBOX_CAPTURE_RELAY_URL) with the email\'s sender as MAIL FROM and `to` (default: its recipient) as the envelope recipients; nothing is sent unless the allow-list names every one. Errors take precedence in this order: 401, VALIDATION_ERROR, RECIPIENT_NOT_ALLOWED for the addresses of `to`, 403 for a read-only key, RELAY_NOT_CONFIGURED, NOT_FOUND (an email outside the key\'s inbox prefix too), RECIPIENT_NOT_ALLOWED for the email\'s recipient, RELAY_FAILED.',
            validate: { params: messageIdParams, payload, failAction: releaseFailAction },
            plugins: {
                ...routeAccess({ access: 'change' }),
                'hapi-swagger': {
                    id: 'releaseEmail',
                    security: BEARER_SECURITY,
                    responses: {
                        200: { description: 'Sent: the relay accepted it for these recipients', schema: releasedSchema },
                        ...errorResponses({ 400: ['VALIDATION_ERROR', 'RECIPIENT_NOT_ALLOWED'], 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 404: ['NOT_FOUND'], 409: ['RELAY_NOT_CONFIGURED'], 502: ['RELAY_FAILED'], ...SERVER_ERRORS })
                    }
                }
            }
        },
        handler: release
    }];
}
