/**
 * The batch deletes of the record store: an inbox emptied in batches (DELETE /v1/inboxes)
 * and the retention sweep's two rules, maximum age and newest N per inbox.
 */

import type { Knex } from 'knex';
import type { EmailRecord } from '../../types';
import { emailPageQuery } from './email-page';
import { toNumber, toRecord, type EmailRow } from './rows';
import { removeRows } from './save-statements';
import { EMAIL_COLUMNS, EMAILS_TABLE, EXPIRY_KEY_SQL, INBOXES_TABLE } from './schema';

/**
 * Deletes the rows `select` picks and returns them. On Postgres the rows are locked first
 * and rows another transaction holds are skipped: several processes deleting at once
 * share the work, and each row is returned to exactly one of them.
 */
export async function deleteSelected(trx: Knex.Transaction, select: Knex.QueryBuilder, pg: boolean): Promise<EmailRecord[]> {
    const rows = await (pg ? select.forUpdate().skipLocked() : select) as EmailRow[];
    if (rows.length > 0) {
        await removeRows(trx, rows.map((r) => r.seq));
    }

    return rows.map(toRecord);
}

/**
 * Up to `limit` emails received before `receivedBefore` (ms), oldest first: through
 * emails_received_at on SQLite, emails_expiry (`received_at + 0`) on Postgres.
 */
export function receivedBeforeQuery(knex: Knex, receivedBefore: number, limit: number, pg: boolean): Knex.QueryBuilder {
    const q = knex(EMAILS_TABLE).select(EMAIL_COLUMNS);
    if (pg) {
        return q.whereRaw(`${EXPIRY_KEY_SQL} < ?`, [receivedBefore]).orderByRaw(`${EXPIRY_KEY_SQL} ASC`).limit(limit);
    }

    return q.where('received_at', '<', receivedBefore).orderBy('received_at', 'asc').limit(limit);
}

/** The position (received_at, message_id) of the keep-th newest email of `inbox`, read down the inbox order index. */
export function lastKeptQuery(knex: Knex, inbox: string, keep: number, pg: boolean): Knex.QueryBuilder {
    return emailPageQuery(knex, { inbox, limit: 1 }, pg).select('received_at', 'message_id').offset(keep - 1).limit(1);
}

/**
 * The query of up to `limit` emails of `inbox` beyond its newest `keep` in the list's order
 * (receivedAt, then messageId, descending), or null when the inbox holds no more than `keep`. Two index
 * reads: the keep-th newest email, then the emails after it, exactly as a list page after
 * that email's cursor finds them.
 */
export async function beyondNewestQuery(knex: Knex, inbox: string, keep: number, limit: number, pg: boolean): Promise<{ select: Knex.QueryBuilder } | null> {
    const [last] = await lastKeptQuery(knex, inbox, keep, pg) as Pick<EmailRow, 'received_at' | 'message_id'>[];
    if (!last) {
        return null;
    }

    const after = { receivedAt: toNumber(last.received_at), messageId: last.message_id };
    // Wrapped: a builder resolved from an async function would run as a plain SELECT.
    return { select: emailPageQuery(knex, { inbox, limit, after }, pg).select(EMAIL_COLUMNS).limit(limit) };
}

/**
 * Up to `limit` names of inboxes holding more than `maxCount` emails, by name after
 * `after`: read from the `inboxes` summary (its primary key), never by counting emails.
 */
export function inboxesOverQuery(knex: Knex, maxCount: number, after: string | undefined, limit: number): Knex.QueryBuilder {
    const q = knex(INBOXES_TABLE).select('name').where('email_count', '>', maxCount);
    if (after !== undefined) {
        q.andWhere('name', '>', after);
    }

    return q.orderBy('name', 'asc').limit(limit);
}
