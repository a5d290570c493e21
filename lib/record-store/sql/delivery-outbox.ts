/**
 * The delivery outbox of a Knex record store (docs/api.md, "Webhooks" and "Auto-relay"):
 * the rows a save writes with its emails, of every kind, and the claims and outcomes of
 * the dispatchers.
 */

import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { DELIVERIES_TABLE } from './schema';
import type { DeliveryKind, DeliveryTarget, OutboxDelivery, RecordStore, SaveResult } from '../record-store';
import { toNumber } from './rows';
import { IN_LIST_CHUNK } from './save-statements';

/** Rows per multi-row INSERT into the outbox (7 values each): under SQLite's 999 bound parameters. */
const INSERT_CHUNK = 150;
/** Longest error text kept with a failed attempt, characters (for an operator reading the table). */
const MAX_ERROR_CHARS = 500;

/** A row of the outbox as a save writes it. */
export interface DeliveryRow {
    id: string;
    kind: DeliveryKind;
    message_id: string;
    url: string;
    attempts: number;
    created_at: number;
    next_attempt_at: number;
}

interface ClaimedRow {
    id: string;
    kind: DeliveryKind;
    message_id: string;
    url: string;
    attempts: number | string;
    created_at: number | string;
}

/**
 * The outbox rows of saved emails: for each stored email, one per target its draft
 * asked for (`targets[i][j]` for the j-th draft of save i), due at once.
 */
export function deliveryRows(results: SaveResult[], targets: (DeliveryTarget[][] | undefined)[], now: number): DeliveryRow[] {
    const rows: DeliveryRow[] = [];
    results.forEach((result, i) => {
        result.saved.forEach((record, j) => {
            for (const { kind, target } of targets[i]?.[j] ?? []) {
                rows.push({ id: randomUUID(), kind, message_id: record.messageId, url: target, attempts: 0, created_at: now, next_attempt_at: now });
            }
        });
    });
    return rows;
}

/** Inserts outbox rows in the caller's transaction (the one that stores their emails). */
export async function insertDeliveries(trx: Knex.Transaction, rows: DeliveryRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        await trx(DELIVERIES_TABLE).insert(rows.slice(i, i + INSERT_CHUNK));
    }
}

/** What the outbox methods run on. */
export interface DeliveryOutboxOptions {
    knex: Knex;
    pg: boolean;
    /** One write transaction, retried on transient conflicts, in this file's writer line (SQLite). */
    write<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
}

type OutboxMethods = Required<Pick<RecordStore, 'claimDeliveries' | 'retryDelivery' | 'dropDeliveriesBefore'>>;

/** The RecordStore's outbox methods on Knex. */
export function deliveryOutbox(options: DeliveryOutboxOptions): OutboxMethods {
    const { knex, pg, write } = options;
    const table = DELIVERIES_TABLE;

    return {
        async claimDeliveries(kind, targets, limit, leaseMs, done = []) {
            const wanted = targets.length > 0 && limit >= 1;
            if (done.length === 0) {
                // A read first: an idle poll never takes SQLite's write lock.
                const due = wanted ? await knex(table).select('id').where('next_attempt_at', '<=', Date.now()).where('kind', kind).whereIn('url', targets).limit(1) as unknown[] : [];
                if (due.length === 0) {
                    return [];
                }
            }

            const now = Date.now();
            const claim = randomUUID();
            return write(async (trx) => {
                for (let i = 0; i < done.length; i += IN_LIST_CHUNK) {
                    const chunk = done.slice(i, i + IN_LIST_CHUNK);
                    // A delivery claimed again since (its lease ran out) is deleted too: it was sent.
                    await trx(table).whereIn('id', chunk.map((d) => d.id)).whereIn('claim', [...new Set(chunk.map((d) => d.claim))]).delete();
                }

                if (!wanted) {
                    return [];
                }

                // Postgres: rows another process is claiming right now are skipped, never sent twice.
                // SQLite: the write transaction is the claim (one writer at a time).
                const select = trx(table).select('id').where('next_attempt_at', '<=', now).where('kind', kind).whereIn('url', targets).orderBy('next_attempt_at').limit(limit);
                const ids = (await (pg ? select.forUpdate().skipLocked() : select) as { id: string }[]).map((r) => r.id);
                if (ids.length === 0) {
                    return [];
                }

                const rows = await trx(table).whereIn('id', ids)
                    .update({ next_attempt_at: now + leaseMs, claim })
                    .returning(['id', 'kind', 'message_id', 'url', 'attempts', 'created_at']) as ClaimedRow[];
                return rows.map((row) => ({
                    id: row.id,
                    kind: row.kind,
                    messageId: row.message_id,
                    target: row.url,
                    attempts: toNumber(row.attempts),
                    createdAt: toNumber(row.created_at),
                    claim
                } satisfies OutboxDelivery));
            });
        },

        async retryDelivery(delivery, nextAttemptAt, error) {
            await write((trx) => trx(table).where({ id: delivery.id, claim: delivery.claim }).update({
                attempts: delivery.attempts + 1,
                next_attempt_at: nextAttemptAt,
                last_error: error.slice(0, MAX_ERROR_CHARS)
            }));
        },

        async dropDeliveriesBefore(kind, createdBefore) {
            const stale = await knex(table).select('id').where('created_at', '<', createdBefore).where('kind', kind).limit(1) as unknown[];
            return stale.length === 0 ? 0 : write((trx) => trx(table).where('created_at', '<', createdBefore).where('kind', kind).delete());
        }
    };
}
