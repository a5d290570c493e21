import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { isInboxCaptureError } from '../../../lib/errors';
import type { InboxScope } from '../../../lib/identity/key-scope';
import { composeEmail, sendEmailBodySchema, splitAddresses, type SendEmailBody } from '../../compose/compose-email';
import { metricsOf, rejectReasonOf, secondsSince } from '../../metrics/service-metrics';
import { toJsonSchema } from '../../mcp/json-schema';
import { validationWords } from '../../error-detail/validation-words';
import { errorResponses, SERVER_ERRORS } from '../api-schemas';
import type { SentEmailsView } from '../api-types';
import { AUTH_STRATEGY } from '../auth-scheme';
import { apiError } from '../error-mapping';
import { keyScopeOf, routeAccess } from '../route-access';
import { API_TAG, BEARER_SECURITY, GROUP_EMAILS, type RouteContext } from '../route-context';

/** The media type of a raw message. */
export const RAW_MEDIA_TYPE = 'message/rfc822';

/** Bytes of JSON around the base64 of a message at the size cap: field names, quotes, the other fields. */
const JSON_OVERHEAD_BYTES = 64 * 1024;

/**
 * The request body of `sendEmail` in the OpenAPI document: hapi-swagger sees no body on a
 * route that reads its own, so it is said here, from the same joi schema the route applies.
 */
export function sendRequestBody(): Record<string, unknown> {
    return {
        required: true,
        content: {
            'application/json': { schema: withoutPropertyNames(toJsonSchema(sendEmailBodySchema)) },
            [RAW_MEDIA_TYPE]: { schema: { type: 'string', format: 'binary', description: 'The raw message (RFC 5322).' } }
        }
    };
}

// OpenAPI 3.0 knows no `propertyNames`: the header names' rule stays the route's to apply.
function withoutPropertyNames(schema: unknown): unknown {
    if (Array.isArray(schema)) {
        return schema.map(withoutPropertyNames);
    }

    if (typeof schema !== 'object' || schema === null) {
        return schema;
    }

    return Object.fromEntries(Object.entries(schema).filter(([key]) => key !== 'propertyNames').map(([key, value]) => [key, withoutPropertyNames(value)]));
}

const sentSchema = Joi.object({
    emails: Joi.array().items(Joi.object({ messageId: Joi.string().required(), inbox: Joi.string().required() }).label('SentEmail')).required()
}).label('SentEmails');

const sendQuerySchema = Joi.object({
    to: Joi.string().max(10_000).description('Raw form only: the envelope recipients, comma-separated (default: the message\'s `To` and `Cc`).')
}).label('SendEmailQuery');

const isRaw = (request: Request) => String(request.headers['content-type'] ?? '').toLowerCase().startsWith(RAW_MEDIA_TYPE);

// The body of each request, checked: the raw message, or the JSON form parsed and validated.
const bodies = new WeakMap<Request, Buffer | SendEmailBody>();

// hapi reads the body unparsed (it has no parser for message/rfc822, and validates only what
// it parses): the JSON form is parsed and checked here, on the route's onPostAuth, before the
// plugin's onPreHandler, so that a bad body is 400 before a key's 403 as on every route.
function checkBody(request: Request, h: ResponseToolkit) {
    const raw = Buffer.isBuffer(request.payload) ? request.payload : Buffer.alloc(0);
    if (isRaw(request)) {
        if (raw.length === 0) {
            throw apiError(400, 'VALIDATION_ERROR', 'body: an empty message');
        }

        bodies.set(request, raw);
        return h.continue;
    }

    let parsed: unknown;
    try {
        parsed = JSON.parse(raw.toString('utf8'));
    }
    catch {
        throw apiError(400, 'VALIDATION_ERROR', 'body: not valid JSON');
    }

    const { error, value } = sendEmailBodySchema.validate(parsed, { abortEarly: true });
    if (error) {
        throw apiError(400, 'VALIDATION_ERROR', validationWords(error.details, 'payload', sendEmailBodySchema));
    }

    bodies.set(request, value as SendEmailBody);
    return h.continue;
}

/**
 * Stores a sent message through the service's ingest, as the send route and MCP's
 * send_email do, counted in the metrics (transport `http`) while they are on.
 */
export async function ingestSent(capture: RouteContext['capture'], raw: Buffer, options: { recipients?: string[]; scope: InboxScope }): Promise<Array<{ messageId: string; inbox: string }>> {
    const metrics = metricsOf(capture);
    const start = process.hrtime.bigint();
    try {
        const records = await capture.ingestRawEmail(raw, { ...(options.recipients ? { recipients: options.recipients } : {}), scope: options.scope });
        metrics?.messageStored('http', secondsSince(start));
        return records.map((r) => ({ messageId: r.messageId, inbox: r.inbox }));
    }
    catch (err) {
        metrics?.messageRejected(rejectReasonOf(err));
        throw err;
    }
}

/**
 * POST /v1/emails (docs/api.md, "Send an email"): a raw message or the JSON form, stored
 * through the same ingest as SMTP mail (identity, links, codes, tags, webhooks, auto-relay),
 * without the SMTP fault rules. A key stores only into inboxes of its prefix.
 */
export function sendRoutes(context: RouteContext): ServerRoute[] {
    const { capture } = context;

    const send = async (request: Request, h: ResponseToolkit) => {
        const payload = bodies.get(request)!;
        const raw = Buffer.isBuffer(payload) ? payload : await composeEmail(payload);
        const to = (request.query as { to?: string }).to;
        const recipients = isRaw(request) && to !== undefined ? splitAddresses(to) : undefined;
        try {
            const view: SentEmailsView = { emails: await ingestSent(capture, raw, { ...(recipients ? { recipients } : {}), scope: keyScopeOf(request) }) };
            return h.response(view).code(201);
        }
        catch (err) {
            if (isInboxCaptureError(err, 'TOO_LARGE')) {
                throw apiError(413, 'TOO_LARGE', `body: the message is larger than ${capture.maxMessageBytes} bytes`);
            }

            if (isInboxCaptureError(err, 'OUT_OF_SCOPE')) {
                throw apiError(403, 'FORBIDDEN', `key scope: a recipient's inbox is outside the prefix "${keyScopeOf(request).inboxPrefix}"`);
            }

            if (isInboxCaptureError(err, 'NO_RECIPIENT') || isInboxCaptureError(err, 'TOO_MANY_RECIPIENTS')) {
                throw apiError(400, 'VALIDATION_ERROR', isInboxCaptureError(err, 'NO_RECIPIENT') ? 'to: no recipient maps to an inbox' : 'to: the recipients map to more than 100 inboxes');
            }

            throw err;
        }
    };

    return [{
        method: 'POST',
        path: '/v1/emails',
        options: {
            auth: { strategy: AUTH_STRATEGY, mode: 'required' },
            tags: [API_TAG, GROUP_EMAILS],
            description: 'Store an email, as if it came over SMTP',
            notes: 'Send `Content-Type: message/rfc822` with the raw message (the envelope in `to`, default the message\'s `To` and `Cc`), or `application/json` with `{ from, to, cc?, subject, text?, html?, headers?, attachments? }`, built into a message. Stored as SMTP mail is (inboxes from the recipients, links, codes, tags, webhooks, auto-relay), without the SMTP fault rules. A message over the size cap is 413 TOO_LARGE; a read-only key, or a recipient outside the key\'s prefix, is 403.',
            payload: {
                parse: false,
                output: 'data',
                allow: ['application/json', RAW_MEDIA_TYPE],
                maxBytes: Math.ceil(capture.maxMessageBytes * 4 / 3) + JSON_OVERHEAD_BYTES,
                failAction: (_request, _h, err) => {
                    // Past even the JSON form's bound: too large, as the ingest would say.
                    if ((err as { output?: { statusCode?: number } } | undefined)?.output?.statusCode === 413) {
                        throw apiError(413, 'TOO_LARGE', `body: the message is larger than ${capture.maxMessageBytes} bytes`);
                    }

                    throw err ?? new Error('payload');
                }
            },
            ext: { onPostAuth: { method: checkBody } },
            validate: { query: sendQuerySchema, failAction: (_request, _h, err) => {
                throw apiError(400, 'VALIDATION_ERROR', validationWords((err as Joi.ValidationError | undefined)?.details ?? [], 'query', sendQuerySchema));
            } },
            plugins: {
                ...routeAccess({ access: 'change' }),
                'hapi-swagger': {
                    id: 'sendEmail',
                    security: BEARER_SECURITY,
                    responses: {
                        201: { description: 'Stored: one copy per inbox', schema: sentSchema },
                        ...errorResponses({ 400: ['VALIDATION_ERROR'], 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 413: ['TOO_LARGE'], 415: ['UNSUPPORTED_MEDIA_TYPE'], ...SERVER_ERRORS })
                    }
                }
            }
        },
        handler: send
    }];
}
