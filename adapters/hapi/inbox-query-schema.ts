import Joi from 'joi';
import { decodeInboxCursor } from '../../lib/cursor/inbox-cursor';
import { INBOX_PATTERN, MAX_INBOX_LENGTH } from '../../lib/identity/recipients';
import type { InboxPosition, InboxQuery } from '../../lib/types';
import { DEFAULT_LIMIT, MAX_LIMIT } from './list-query-schema';

/** Longest inbox cursor, characters: `<ms>#` (at most 17) and an inbox name (64). */
export const MAX_INBOX_CURSOR_LENGTH = 17 + MAX_INBOX_LENGTH;

/** Query of GET /v1/inboxes (docs/api.md, "GET /v1/inboxes"). Converts to typed values. */
export const inboxListQuerySchema = Joi.object({
    limit: Joi.number().integer().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT)
        .description('Inboxes per page, 1 to 100.'),
    cursor: Joi.string().max(MAX_INBOX_CURSOR_LENGTH)
        .custom((value: string, helpers) => decodeInboxCursor(value) ?? helpers.error('any.invalid'))
        .description('The `nextCursor` of the previous page, URL-encoded (`#` as `%23`).')
        .example('1714564800000#signup-test'),
    // Empty: every inbox starts with it, so it filters nothing.
    prefix: Joi.string().allow('').max(MAX_INBOX_LENGTH).pattern(INBOX_PATTERN)
        .description('Only inboxes whose name starts with this; characters a-z 0-9 . _ -, at most 64.')
        .example('signup-')
}).label('ListInboxesQuery');

/** `request.query` of GET /v1/inboxes after validation. */
export interface InboxListValues {
    limit: number;
    cursor?: InboxPosition;
    prefix?: string;
}

/** The record-store query of a validated request (an empty prefix matches every inbox). */
export function toInboxQuery(values: InboxListValues): InboxQuery {
    const query: InboxQuery = { limit: values.limit };
    if (values.cursor) {
        query.after = values.cursor;
    }

    if (values.prefix) {
        query.prefix = values.prefix;
    }

    return query;
}
