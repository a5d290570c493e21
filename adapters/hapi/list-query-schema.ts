import type { Request, ResponseToolkit } from '@hapi/hapi';
import Joi from 'joi';
import { decodeCursor } from '../../lib/cursor/email-cursor';
import { MAX_MESSAGE_ID_BYTES } from '../../lib/identity/ids';
import { INBOX_PATTERN, MAX_INBOX_LENGTH } from '../../lib/identity/recipients';
import { parseInstant } from '../../lib/util/instant';
import { parseSearchQuery } from '../../lib/search/parse-query';
import { MAX_QUERY_CHARS } from '../../lib/search/search-query';
import type { SearchTerm } from '../../lib/types';
import type { CursorPosition, ListQuery } from '../../lib/types';
import { validationWords } from '../error-detail/validation-words';
import { apiError } from './error-mapping';

/** docs/design.md: page size 1..100, default 50. */
export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 50;
/** docs/design.md: long-poll timeout 1..28 seconds, default 28. */
export const MAX_TIMEOUT_SECONDS = 28;
/**
 * Longest `sender`/`subject` filter, characters: longer than any address or subject
 * worth searching for, short enough to keep the substring match cheap.
 */
export const MAX_FILTER_LENGTH = 256;
/**
 * Longest cursor, characters: `<ms>#` (at most 17) and a stored message id, which is
 * at most MAX_MESSAGE_ID_BYTES (so at most as many characters).
 */
export const MAX_CURSOR_LENGTH = 17 + MAX_MESSAGE_ID_BYTES;
/** Longest `receivedAfter`/`receivedBefore`, characters: an ISO date-time with nanoseconds and offset is 35. */
export const MAX_TIME_LENGTH = 40;
/**
 * Unix ms of a `receivedAfter`/`receivedBefore` value (docs/design.md: a number is Unix
 * milliseconds, an ISO 8601 date or date-time is accepted), or null for anything else.
 */
export const parseTimeFilter = parseInstant;

const timeFilter = (description: string) => Joi.string()
    .max(MAX_TIME_LENGTH)
    .custom((value: string, helpers) => {
        const ms = parseTimeFilter(value);
        return ms === null ? helpers.error('any.invalid') : ms;
    })
    .description(description)
    .example('2024-05-01T12:00:00Z');

/** The `inbox` parameter of the list and bulk-delete endpoints. */
export const inboxSchema = Joi.string()
    .max(MAX_INBOX_LENGTH)
    .pattern(INBOX_PATTERN)
    .required()
    .description('Inbox name: the local part of the recipient address, lowercase; characters a-z 0-9 . _ -, at most 64.')
    .example('signup-test');

/** `q`: the search language (docs/api.md, "Search"), parsed into its terms; a malformed one is VALIDATION_ERROR. */
export const searchSchema = Joi.string()
    // A first bound before parsing: the parser's own is 1,024 characters (code points, so up to 2,048 UTF-16 units).
    .max(2 * MAX_QUERY_CHARS)
    // What the parser throws (its reason and position) is joi's `any.custom` finding, put in words at the edge.
    .custom((value: string) => parseSearchQuery(value))
    .description('A search (docs/api.md, "Search"): terms separated by spaces, all of which must match; `"..."` quotes, `-` negates; `from:` (the sender\'s address or display name) `to:` `subject:` `body:` `filename:` (substrings, case-insensitive), `tag:`, `has:attachment|link|code`, `before:` `after:` (Unix ms or ISO 8601), `larger:` `smaller:` (bytes, K, M); a term without a field is a substring of the subject, the body, or the sender\'s address or display name. At most 1,024 characters and 20 terms.')
    .example('from:shop "order 4242" -tag:done');

/** Query of GET /v1/emails (docs/design.md). Converts to typed values. */
export const listQuerySchema = Joi.object({
    inbox: inboxSchema,
    limit: Joi.number().integer().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT)
        .description('Results per page, 1 to 100.'),
    cursor: Joi.string().max(MAX_CURSOR_LENGTH)
        .custom((value: string, helpers) => decodeCursor(value) ?? helpers.error('any.invalid'))
        .description('The `nextCursor` of the previous page, URL-encoded (`#` as `%23`).')
        .example('1714564800000#abc@example.com'),
    wait: Joi.boolean().sensitive().default(false)
        .description('`true` waits (long-polls) until an email matches or `timeout` passes.'),
    timeout: Joi.number().integer().min(1).max(MAX_TIMEOUT_SECONDS).default(MAX_TIMEOUT_SECONDS)
        .description('Longest wait in seconds when `wait=true`, 1 to 28.'),
    sender: Joi.string().allow('').max(MAX_FILTER_LENGTH)
        .description('Case-insensitive substring of the sender address.'),
    subject: Joi.string().allow('').max(MAX_FILTER_LENGTH)
        .description('Case-insensitive substring of the subject.'),
    receivedAfter: timeFilter('Only emails received at or after this instant: Unix milliseconds or an ISO 8601 date or date-time (UTC when no offset is given).'),
    receivedBefore: timeFilter('Only emails received before this instant (exclusive): Unix milliseconds or an ISO 8601 date or date-time.'),
    hasAttachments: Joi.boolean().sensitive()
        .description('`true`: only emails with attachments; `false`: only emails without.'),
    q: searchSchema
}).label('ListEmailsQuery');

/** Query of DELETE /v1/emails: the inbox, and a search narrowing what goes. */
export const deleteInboxQuerySchema = Joi.object({ inbox: inboxSchema, q: searchSchema }).label('DeleteInboxQuery');

/** `request.query` of GET /v1/emails after validation. */
export interface ListQueryValues {
    inbox: string;
    limit: number;
    cursor?: CursorPosition;
    wait: boolean;
    timeout: number;
    sender?: string;
    subject?: string;
    receivedAfter?: number;
    receivedBefore?: number;
    hasAttachments?: boolean;
    q?: SearchTerm[];
}

/** The record-store query of a validated request (an empty filter matches everything). */
export function toListQuery(values: ListQueryValues): ListQuery {
    const query: ListQuery = { inbox: values.inbox, limit: values.limit };
    if (values.cursor) {
        query.after = values.cursor;
    }

    if (values.sender) {
        query.sender = values.sender;
    }

    if (values.subject) {
        query.subject = values.subject;
    }

    if (values.receivedAfter !== undefined) {
        query.receivedAfter = values.receivedAfter;
    }

    if (values.receivedBefore !== undefined) {
        query.receivedBefore = values.receivedBefore;
    }

    if (values.hasAttachments !== undefined) {
        query.hasAttachments = values.hasAttachments;
    }

    // No terms is no search (and the same long-poll as without one).
    if (values.q && values.q.length > 0) {
        query.q = values.q;
    }

    return query;
}

/** A failed query: its one code and the findings that code stands for. */
export interface QueryFailure {
    code: 'MISSING_INBOX' | 'INVALID_INBOX' | 'INVALID_LIMIT' | 'VALIDATION_ERROR';
    details: Joi.ValidationErrorItem[];
}

/**
 * The one code for a failed query, by the precedence of docs/design.md: MISSING_INBOX,
 * INVALID_INBOX, INVALID_LIMIT, then VALIDATION_ERROR for everything else; with the
 * findings behind that code, which its detail puts in words.
 */
export function queryFailure(details: readonly Joi.ValidationErrorItem[]): QueryFailure {
    // An unknown parameter is VALIDATION_ERROR whatever its name (`limit` on bulk delete).
    const on = (key: string) => details.filter((d) => d.path[0] === key && d.type !== 'object.unknown');
    const inbox = on('inbox');
    if (inbox.some((d) => d.type === 'any.required' || d.type === 'string.empty')) {
        return { code: 'MISSING_INBOX', details: inbox };
    }

    if (inbox.length > 0) {
        return { code: 'INVALID_INBOX', details: inbox };
    }

    const limit = on('limit');
    if (limit.length > 0) {
        return { code: 'INVALID_LIMIT', details: limit };
    }

    return { code: 'VALIDATION_ERROR', details: [...details] };
}

/** The one code for a failed query (queryFailure() without its findings). */
export function queryErrorCode(details: readonly Joi.ValidationErrorItem[]): QueryFailure['code'] {
    return queryFailure(details).code;
}

/** hapi `failAction` of the query validation: every failure becomes one code of ours, and its detail. */
export function queryFailAction(request: Request, _h: ResponseToolkit, err?: Error): never {
    const failure = queryFailure((err as Joi.ValidationError | undefined)?.details ?? []);
    const schema = request.route.settings.validate?.query as Joi.Schema | undefined;
    throw apiError(400, failure.code, validationWords(failure.details, 'query', schema));
}
