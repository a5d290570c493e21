/** The email list query: keyset pages, newest first, optionally cut at a byte budget. */

import type { Knex } from 'knex';
import type { CursorPosition, ListQuery } from '../../types';
import { cleanText, containsPattern } from './clean-text';
import { EMAILS_TABLE, ORDER_PREFIX_CHARS } from './schema';
import { whereTerms } from './search-sql';

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

/** What else narrows a page query: the candidates of a search index, and an inclusive upper end. */
export interface PageBounds {
    /** Only emails at or after this position in the list's order (the newest end of a page range). */
    from?: CursorPosition;
    /** SQL (and bindings) of the search index's candidates (search-sql.ts). */
    candidates?: { sql: string; bindings: Knex.RawBinding[] };
    /** The search's terms as the trigram indexes serve them (Postgres; search-sql.ts). */
    indexed?: boolean;
}

/**
 * The emails of one page plus one row (which says whether another page exists), in the
 * list's order: receivedAt desc, then messageId desc. The caller picks the columns.
 */
export function emailPageQuery(knex: Knex, query: ListQuery, pg: boolean, bounds: PageBounds = {}): Knex.QueryBuilder {
    const q = knex(EMAILS_TABLE).where('inbox', cleanText(query.inbox));
    if (query.after) {
        wherePosition(q, '<', query.after, pg);
    }

    if (bounds.from) {
        wherePosition(q, '>=', bounds.from, pg);
    }

    // Before the other conditions: the candidate set is checked from the index entry, before the row is read.
    if (bounds.candidates) {
        q.whereRaw(bounds.candidates.sql, bounds.candidates.bindings);
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

    if (query.q) {
        whereTerms(q, query.q, pg, bounds.indexed);
    }

    return q.orderByRaw(pg ?
        `received_at DESC, left(message_id, ${ORDER_PREFIX_CHARS}) DESC, message_id DESC` :
        'received_at DESC, message_id DESC')
        .limit(query.limit + 1);
}

// Rows before (`<`) or at and after (`>=`) a position in the list's order.
function wherePosition(q: Knex.QueryBuilder, op: '<' | '>=', position: CursorPosition, pg: boolean): void {
    const { receivedAt } = position;
    const messageId = cleanText(position.messageId);
    if (pg) {
        // The index bound (the prefix never sorts after the whole id), then
        // the exact position; rows whose prefix ties are filtered, not sought.
        q.whereRaw(`(received_at, left(message_id, ${ORDER_PREFIX_CHARS})) ${op === '<' ? '<=' : '>='} (?, left(?, ${ORDER_PREFIX_CHARS}))`, [receivedAt, messageId]);
    }

    q.whereRaw(`(received_at, message_id) ${op} (?, ?)`, [receivedAt, messageId]);
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

/** What each row of budgetedPageQuery() holds beside the columns picked: the rows of the page before the cut. */
export interface BudgetedRow {
    page_rows: number | string;
}

/**
 * A page cut at its byte budget in one query (SQLite), for what countWithinBudget() and
 * a second read of the rows would answer: the sizes of the page plus one row are summed
 * in the list's order by a window function, and only the rows within the budget are read
 * whole. Each row carries `page_rows`, the rows of the uncut page: more than were
 * answered means another page exists. One snapshot, one trip to the connection: a woken
 * long-poll answers sooner (docs/design.md, "Long-polling").
 */
export function budgetedPageQuery(knex: Knex, query: ListQuery & { maxBytes: number }, select: (q: Knex.QueryBuilder) => Knex.QueryBuilder): Knex.QueryBuilder {
    const sized = emailPageQuery(knex, query, false).select('seq', 'received_at', 'message_id', knex.raw(`${STORED_TEXT_BYTES_SQL} AS size`));
    const ranked = knex.raw(`SELECT seq AS page_seq, ROW_NUMBER() OVER w AS page_n, SUM(size) OVER w AS page_total, COUNT(*) OVER () AS page_rows
        FROM sized WINDOW w AS (ORDER BY received_at DESC, message_id DESC ROWS UNBOUNDED PRECEDING)`);
    return select(knex.with('sized', sized).with('ranked', ranked).from('ranked').join(EMAILS_TABLE, `${EMAILS_TABLE}.seq`, 'ranked.page_seq'))
        .select('page_rows')
        .where('page_n', '<=', query.limit)
        .where((fits) => fits.where('page_n', 1).orWhere('page_total', '<=', query.maxBytes))
        .orderBy('page_n');
}
