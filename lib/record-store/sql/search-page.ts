/**
 * A page of a search in two reads (docs/design.md, "Search"): the newest SEARCH_WINDOW
 * emails of the inbox (from the cursor on) are checked one by one; only when they do not
 * fill the page does the trigram index name the candidates among the older ones. A term
 * in much of the inbox's mail then costs a short walk and no index read (its candidates
 * would be most of the inbox); a rare one costs the window and an index read of the few
 * emails that hold its trigrams.
 */

import type { Knex } from 'knex';
import type { CursorPosition, ListQuery } from '../../types';
import { emailPageQuery } from './email-page';
import { toNumber } from './rows';
import { indexPlan } from './search-sql';

/**
 * Emails a search checks directly before it asks the index: reading a row's folded body
 * is most of a search's cost (about 20 µs for 10 KB on SQLite: 1,000 took 20 ms), and a
 * term in one email in four of the inbox still fills a page of 50 from these alone, where
 * the index would name a quarter of the inbox.
 * Tuned by measurement: bench/README.md, "Search".
 */
export const SEARCH_WINDOW = 200;

/** Runs a query builder and answers its rows (the store's reader, or Knex). */
export type ReadRows = <T>(q: Knex.QueryBuilder) => Promise<T[]>;

/**
 * The rows of a page plus one (as emailPageQuery() answers them), each with the columns
 * `select` picks: through the window and the index when the query searches and the store
 * has an index, else in one query.
 */
export async function pageRows<T>(knex: Knex, query: ListQuery, pg: boolean, indexed: boolean, select: (q: Knex.QueryBuilder) => Knex.QueryBuilder, read: ReadRows): Promise<T[]> {
    const plan = indexed && query.q ? indexPlan(query.inbox, query.q, pg) : null;
    if (!plan) {
        return read<T>(select(emailPageQuery(knex, query, pg)));
    }

    // The oldest email of the window: an index-only read of SEARCH_WINDOW entries.
    const [last] = await read<{ received_at: number | string; message_id: string }>(
        emailPageQuery(knex, { inbox: query.inbox, limit: 1, after: query.after }, pg).select('received_at', 'message_id').offset(SEARCH_WINDOW - 1).limit(1));
    if (!last) {
        // The window holds the rest of the inbox: no index read can be cheaper than reading it.
        return read<T>(select(emailPageQuery(knex, query, pg)));
    }

    const boundary: CursorPosition = { receivedAt: toNumber(last.received_at), messageId: last.message_id };
    const recent = await read<T>(select(emailPageQuery(knex, query, pg, { from: boundary })));
    if (recent.length > query.limit) {
        return recent;
    }

    const older = await read<T>(select(emailPageQuery(knex, { ...query, after: boundary, limit: query.limit - recent.length }, pg, { candidates: plan.candidates, indexed: true })));
    return [...recent, ...older];
}
