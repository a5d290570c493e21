/** The inbox list query on the `inboxes` summary: keyset pages served by its indexes. */

import type { Knex } from 'knex';
import type { InboxPage, InboxQuery } from '../../types';
import { INBOXES_TABLE } from './schema';
import { toNumber } from './rows';

/** A row of `inboxes`. */
export interface InboxRow {
    name: string;
    email_count: number | string;
    last_received_at: number | string;
}

/**
 * One page of inboxes plus one row (which says whether another page exists), newest first
 * then by name. Without a prefix the order index is read in order and stops after the page;
 * with one the primary key yields just the names that start with it, then those are sorted.
 */
export function inboxPageQuery(knex: Knex, query: InboxQuery): Knex.QueryBuilder {
    const q = knex(INBOXES_TABLE).select('name', 'email_count', 'last_received_at');
    if (query.prefix) {
        // Names that start with the prefix are exactly those in [prefix, prefix with its last character + 1).
        q.where('name', '>=', query.prefix).andWhere('name', '<', prefixEnd(query.prefix));
    }

    if (query.after) {
        const { lastReceivedAt, name } = query.after;
        // The first condition bounds the index range; the second drops the rows at or before the position.
        q.where('last_received_at', '<=', lastReceivedAt)
            .andWhere((w) => void w.where('last_received_at', '<', lastReceivedAt).orWhere('name', '>', name));
    }

    return q.orderBy([{ column: 'last_received_at', order: 'desc' }, { column: 'name', order: 'asc' }]).limit(query.limit + 1);
}

/** The page the rows of inboxPageQuery() make. */
export function toInboxPage(rows: InboxRow[], limit: number): InboxPage {
    return {
        inboxes: rows.slice(0, limit).map((row) => ({
            name: row.name,
            count: toNumber(row.email_count),
            lastReceivedAt: toNumber(row.last_received_at)
        })),
        hasMore: rows.length > limit
    };
}

// The smallest string after every string that starts with `prefix` (byte order; not empty).
function prefixEnd(prefix: string): string {
    return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
