import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { WaitCanceller } from '../../../lib/long-poll/wait-canceller';
import type { HeaderField } from '../../../lib/mime/header-fields';
import type { SearchTerm } from '../../../lib/types';
import type { RecordPage } from '../../../lib/types';
import { deletedEmailSchema, deletedInboxSchema, emailPageSchema, emailSchema, errorResponses, headersSchema, seenBodySchema, SERVER_ERRORS, tagsBodySchema } from '../api-schemas';
import type { DeletedEmailView, DeletedInboxView, HeadersView, SeenBodyView, TagsBodyView } from '../api-types';
import { AUTH_STRATEGY } from '../auth-scheme';
import { quoted } from '../../error-detail/detail-line';
import { validationWords } from '../../error-detail/validation-words';
import { apiError } from '../error-mapping';
import { serialisedJson } from '../json-response';
import { serialiseEmailPage } from '../list-page-body';
import { deleteInboxQuerySchema, listQuerySchema, queryFailAction, toListQuery, type ListQueryValues } from '../list-query-schema';
import { keyScopeOf, routeAccess } from '../route-access';
import { API_TAG, BEARER_SECURITY, GROUP_EMAILS, type RouteContext } from '../route-context';

/** Path parameter of the single-email routes; hapi has already percent-decoded it. */
export const messageIdParams = Joi.object({
    messageId: Joi.string().required()
        .description('The email\'s `messageId`, percent-encoded as one path segment (`/` as `%2F`, `#` as `%23`, `?` as `%3F`, `%` as `%25`).')
        .example('abc@example.com')
}).label('MessageIdParams');

/** The 404 of an email that is not there, or not the key's to see: the same words for both. */
export function noSuchEmail(messageId: unknown): Error {
    return apiError(404, 'NOT_FOUND', `messageId: no email ${quoted(messageId)}`);
}

/** Any params failure means no such email: the API has no 400 for these routes (docs/design.md). */
export function paramsFailAction(request: Request): never {
    throw noSuchEmail(request.params?.messageId ?? '');
}

// PUT .../tags and .../seen: a params failure is still no such email; a body that is not the one asked is VALIDATION_ERROR.
function bodyFailAction(schema: Joi.ObjectSchema) {
    return (request: Request, _h: ResponseToolkit, err?: Error): never => {
        const source = (err as { output?: { payload?: { validation?: { source?: string } } } } | undefined)?.output?.payload?.validation?.source;
        if (source === 'params') {
            paramsFailAction(request);
        }

        throw apiError(400, 'VALIDATION_ERROR', validationWords((err as Joi.ValidationError | undefined)?.details ?? [], 'payload', schema));
    };
}

/** The email routes: list (with long-polling), get, delete one, delete all (docs/design.md). */
export function emailRoutes(context: RouteContext): ServerRoute[] {
    const { capture, emailJson, maxPageBytes } = context;

    // The page within the byte budget, serialised here: a failure is still ours to answer.
    // The emails' JSON is shared with other answers and held, within the memory budget, until this one is sent.
    const send = async (request: Request, records: RecordPage): Promise<ResponseObject> => {
        const { page, chunks, release } = await serialiseEmailPage(records, emailJson, maxPageBytes);
        return serialisedJson(request, page, chunks, release);
    };

    const list = async (request: Request) => {
        const values = request.query as unknown as ListQueryValues;
        // The store reads no more text than the budget; the JSON is then cut exactly.
        const query = { ...toListQuery(values), maxBytes: maxPageBytes };
        if (!values.wait) {
            return send(request, await capture.listEmails(query));
        }

        // The client may give up before the timeout: its disconnect releases the wait.
        // The request's 'aborted' is what hapi's 'disconnect' rides on (listened to raw:
        // request.events would build a Podium per waiting request); it also reaches a
        // pipelined request still queued behind another. The response's 'close' (which
        // also fires on a normal end, harmlessly) backs it up.
        // A WaitCanceller, not an AbortController: a tenth of the memory per waiting request.
        const canceller = new WaitCanceller();
        const abort = canceller.abort;
        const { req, res } = request.raw;
        // on(), not once(): abort() is idempotent and removed below, and once() wraps each listener.
        req.on('aborted', abort);
        res.on('close', abort);
        if (!request.active()) {
            abort();
        }

        context.longPolls.add(canceller);
        try {
            return send(request, await capture.waitForEmails(query, { timeoutMs: values.timeout * 1000, canceller }));
        }
        finally {
            context.longPolls.delete(canceller);
            req.removeListener('aborted', abort);
            res.removeListener('close', abort);
        }
    };

    const get = async (request: Request) => {
        const record = await capture.getEmail(request.params.messageId as string, keyScopeOf(request));
        if (!record) {
            throw noSuchEmail(request.params.messageId);
        }

        // Serialised in slices, as a list page is, once for every request that wants it meanwhile,
        // within the memory budget (email-json.ts): a body of megabytes never holds the event loop in one go.
        const { json, release } = await emailJson.acquire(record);
        return serialisedJson(request, json.view, json.chunks, release);
    };

    // Readers of one message at the same time get the same fields (the service shares the
    // parse): their JSON is built once for all of them, not once each on the event loop.
    const headersJson = new WeakMap<HeaderField[], Buffer>();
    const headers = async (request: Request) => {
        const fields = await capture.getHeaders(request.params.messageId as string, keyScopeOf(request));
        if (!fields) {
            throw noSuchEmail(request.params.messageId);
        }

        const view: HeadersView = { headers: fields };
        let json = headersJson.get(fields);
        if (!json) {
            json = Buffer.from(JSON.stringify(view));
            headersJson.set(fields, json);
        }

        return serialisedJson(request, view, [json]);
    };

    const remove = async (request: Request): Promise<DeletedEmailView> => {
        const messageId = request.params.messageId as string;
        if (!(await capture.deleteEmail(messageId, keyScopeOf(request)))) {
            throw noSuchEmail(messageId);
        }

        return { deleted: true, messageId };
    };

    const removeAll = async (request: Request): Promise<DeletedInboxView> => {
        const query = request.query as unknown as { inbox: string; q?: SearchTerm[] };
        const deleted = await capture.deleteInbox(query.inbox, query.q);
        return { deleted };
    };

    const setTags = async (request: Request) => {
        const { tags } = request.payload as TagsBodyView;
        const record = await capture.setTags(request.params.messageId as string, tags, keyScopeOf(request));
        if (!record) {
            throw noSuchEmail(request.params.messageId);
        }

        const { json, release } = await emailJson.acquire(record);
        return serialisedJson(request, json.view, json.chunks, release);
    };

    const setSeen = async (request: Request) => {
        const { seen } = request.payload as SeenBodyView;
        const record = await capture.setSeen(request.params.messageId as string, seen, keyScopeOf(request));
        if (!record) {
            throw noSuchEmail(request.params.messageId);
        }

        const { json, release } = await emailJson.acquire(record);
        return serialisedJson(request, json.view, json.chunks, release);
    };

    const auth = { strategy: AUTH_STRATEGY, mode: 'required' as const };
    const params = { params: messageIdParams, failAction: paramsFailAction };

    return [
        {
            method: 'GET',
            path: '/v1/emails',
            options: {
                auth,
                tags: [API_TAG, GROUP_EMAILS],
                description: 'List emails of an inbox, newest first',
                notes: 'With `wait=true` the request waits until an email matches or `timeout` seconds pass (then `emails` is empty). A page also ends at a byte budget (8 MiB of JSON by default): it may hold fewer than `limit` emails with `hasMore` true and a `nextCursor`; an email larger than the budget is a page of its own. Errors take precedence in this order: 401, MISSING_INBOX, INVALID_INBOX, INVALID_LIMIT, VALIDATION_ERROR, then 403 for an inbox outside the key\'s prefix.',
                // A long-poll lasts up to 28 s: a host's shorter server timeout must not cut it.
                timeout: { server: false },
                validate: { query: listQuerySchema, options: { abortEarly: false }, failAction: queryFailAction },
                plugins: {
                    ...routeAccess({ access: 'read', inboxFromQuery: true }),
                    'hapi-swagger': {
                        id: 'listEmails',
                        security: BEARER_SECURITY,
                        responses: {
                            200: { description: 'One page of emails', schema: emailPageSchema },
                            ...errorResponses({ 400: ['MISSING_INBOX', 'INVALID_INBOX', 'INVALID_LIMIT', 'VALIDATION_ERROR'], 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], ...SERVER_ERRORS })
                        }
                    }
                }
            },
            handler: list
        },
        {
            method: 'DELETE',
            path: '/v1/emails',
            options: {
                auth,
                tags: [API_TAG, GROUP_EMAILS],
                description: 'Delete every email of an inbox',
                notes: 'Deletes in batches of 25 with exponential backoff; an empty inbox answers `{ "deleted": 0 }`. With `q`, only the emails that match it (docs/api.md, "Search"). A read-only key, or an inbox outside the key\'s prefix, is 403 (after 401 and 400).',
                validate: { query: deleteInboxQuerySchema, options: { abortEarly: false }, failAction: queryFailAction },
                plugins: {
                    ...routeAccess({ access: 'change', inboxFromQuery: true }),
                    'hapi-swagger': {
                        id: 'deleteInbox',
                        security: BEARER_SECURITY,
                        responses: {
                            200: { description: 'How many emails were deleted', schema: deletedInboxSchema },
                            ...errorResponses({ 400: ['MISSING_INBOX', 'INVALID_INBOX', 'VALIDATION_ERROR'], 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], ...SERVER_ERRORS })
                        }
                    }
                }
            },
            handler: removeAll
        },
        {
            method: 'GET',
            path: '/v1/emails/{messageId}',
            options: {
                auth,
                tags: [API_TAG, GROUP_EMAILS],
                description: 'Get one email',
                notes: 'The email object: its parsed fields, attachments, links and codes; the raw message and attachments are downloads of their own.',
                validate: params,
                plugins: {
                    ...routeAccess({ access: 'read' }),
                    'hapi-swagger': {
                        id: 'getEmail',
                        security: BEARER_SECURITY,
                        responses: {
                            200: { description: 'The email', schema: emailSchema },
                            ...errorResponses({ 401: ['UNAUTHORIZED'], 404: ['NOT_FOUND'], ...SERVER_ERRORS })
                        }
                    }
                }
            },
            handler: get
        },
        {
            method: 'DELETE',
            path: '/v1/emails/{messageId}',
            options: {
                auth,
                tags: [API_TAG, GROUP_EMAILS],
                description: 'Delete one email with its raw message and attachments',
                notes: 'The record goes first, then its files; a second delete of the same email answers 404. A read-only key is 403; an email of an inbox outside the key\'s prefix is 404, as one that does not exist.',
                validate: params,
                plugins: {
                    ...routeAccess({ access: 'change' }),
                    'hapi-swagger': {
                        id: 'deleteEmail',
                        security: BEARER_SECURITY,
                        responses: {
                            200: { description: 'Deleted', schema: deletedEmailSchema },
                            ...errorResponses({ 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 404: ['NOT_FOUND'], ...SERVER_ERRORS })
                        }
                    }
                }
            },
            handler: remove
        },
        {
            method: 'GET',
            path: '/v1/emails/{messageId}/headers',
            options: {
                auth,
                tags: [API_TAG, GROUP_EMAILS],
                description: 'Get the header fields of one email',
                notes: 'Every field of the top-level message in order, duplicates kept; values unfolded, RFC 2047-decoded and trimmed; `Message-ID` keeps its angle brackets.',
                validate: params,
                plugins: {
                    ...routeAccess({ access: 'read' }),
                    'hapi-swagger': {
                        id: 'getHeaders',
                        security: BEARER_SECURITY,
                        responses: {
                            200: { description: 'The header fields', schema: headersSchema },
                            ...errorResponses({ 401: ['UNAUTHORIZED'], 404: ['NOT_FOUND'], ...SERVER_ERRORS })
                        }
                    }
                }
            },
            handler: headers
        },
        {
            method: 'PUT',
            path: '/v1/emails/{messageId}/tags',
            options: {
                auth,
                tags: [API_TAG, GROUP_EMAILS],
                description: 'Replace the tags of one email',
                notes: 'Answers the email object with its new tags. Tags are lowercased and kept once each. Changing them wakes no waiting list request and sends no webhook. Errors take precedence in this order: 401, 404 for a malformed id, VALIDATION_ERROR, 403 for a read-only key, 404 for an unknown email or one of an inbox outside the key\'s prefix.',
                validate: { ...params, payload: tagsBodySchema, failAction: bodyFailAction(tagsBodySchema) },
                plugins: {
                    ...routeAccess({ access: 'change' }),
                    'hapi-swagger': {
                        id: 'setTags',
                        security: BEARER_SECURITY,
                        responses: {
                            200: { description: 'The email, with its new tags', schema: emailSchema },
                            ...errorResponses({ 400: ['VALIDATION_ERROR'], 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 404: ['NOT_FOUND'], ...SERVER_ERRORS })
                        }
                    }
                }
            },
            handler: setTags
        },
        {
            method: 'PUT',
            path: '/v1/emails/{messageId}/seen',
            options: {
                auth,
                tags: [API_TAG, GROUP_EMAILS],
                description: 'Mark one email read or unread',
                notes: 'Answers the email object with its new `seen`. The web interface marks the email it opens. A change like any other: a read-only key is 403 (docs/api.md, "Read and unread"). Changing it wakes no waiting list request and sends no webhook. Errors take precedence in this order: 401, 404 for a malformed id, VALIDATION_ERROR, 403 for a read-only key, 404 for an unknown email or one of an inbox outside the key\'s prefix.',
                validate: { ...params, payload: seenBodySchema, failAction: bodyFailAction(seenBodySchema) },
                plugins: {
                    ...routeAccess({ access: 'change' }),
                    'hapi-swagger': {
                        id: 'setSeen',
                        security: BEARER_SECURITY,
                        responses: {
                            200: { description: 'The email, with its new seen flag', schema: emailSchema },
                            ...errorResponses({ 400: ['VALIDATION_ERROR'], 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 404: ['NOT_FOUND'], ...SERVER_ERRORS })
                        }
                    }
                }
            },
            handler: setSeen
        }
    ];
}
