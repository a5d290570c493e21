/** The email list query: keyset pages, newest first, optionally cut at a byte budget. */

import type { Knex } from 'knex';
import type { ListQuery } from '../../types';
import { cleanText, containsPattern } from './clean-text';
import { EMAILS_TABLE, ORDER_PREFIX_CHARS } from './schema';

/**
 * UTF-8 bytes of a row's unbounded text, read without reading the text: SQLite (3.43+)
 * and Postgres both answer octet_length() from the value's header. `links` is NULL on
 * rows not yet back-filled.
 */
export const STORED_TEXT_BYTES_SQL = 'octet_length(body) + octet_length(html_body) + octet_length(subject) + octet_length(attachments) + coalesce(octet_length(links), 0)';

/** A row of the sizing query: which email, and how many bytes of text it holds. */
export interface SizedRow {
    seq: number | string;
    size: number | string;
}

/**
 * The emails of one page plus one row (which says whether another page exists), in the
 * list's order: receivedAt desc, then messageId desc. The caller picks the columns.
 */
export function emailPageQuery(knex: Knex, query: ListQuery, pg: boolean): Knex.QueryBuilder {
    const q = knex(EMAILS_TABLE).where('inbox', cleanText(query.inbox));
    if (query.after) {
        const { receivedAt } = query.after;
        const messageId = cleanText(query.after.messageId);
        if (pg) {
            // The index bound (the prefix never sorts after the whole id), then
            // the exact position; rows whose prefix ties are filtered, not sought.
            q.whereRaw(`(received_at, left(message_id, ${ORDER_PREFIX_CHARS})) <= (?, left(?, ${ORDER_PREFIX_CHARS}))`, [receivedAt, messageId]);
        }

        q.whereRaw('(received_at, message_id) < (?, ?)', [receivedAt, messageId]);
    }

    if (query.sender !== undefined) {
        q.whereRaw(`sender_folded LIKE ? ESCAPE '\\'`, [containsPattern(query.sender)]);
    }

    if (query.subject !== undefined) {
        q.whereRaw(`subject_folded LIKE ? ESCAPE '\\'`, [containsPattern(query.subject)]);
    }

    if (query.receivedAfter !== undefined) {
        q.where('received_at', '>=', query.receivedAfter);
    }

    if (query.receivedBefore !== undefined) {
        q.where('received_at', '<', query.receivedBefore);
    }

    if (query.hasAttachments !== undefined) {
        q.where('has_attachments', query.hasAttachments);
    }

    return q.orderByRaw(pg ?
        `received_at DESC, left(message_id, ${ORDER_PREFIX_CHARS}) DESC, message_id DESC` :
        'received_at DESC, message_id DESC')
        .limit(query.limit + 1);
}

/**
 * How many of the leading sizes fit in `maxBytes` together: at least one (an email larger
 * than the budget is a page of its own), at most `limit`.
 */
export function countWithinBudget(sizes: number[], limit: number, maxBytes: number): number {
    let total = 0;
    let count = 0;
    for (const size of sizes.slice(0, limit)) {
        total += size;
        if (count > 0 && total > maxBytes) {
            break;
        }

        count++;
    }

    return count;
}
