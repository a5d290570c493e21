/**
 * One group-commit transaction for a batch of deliveries, run in its turn. Each
 * delivery keeps its own outcome: when the batch fails for a reason of one of its
 * deliveries (bad data, a trigger), it runs again with a savepoint per delivery, so
 * that one fails alone and the rest commit; savepoints cost statements, so only a
 * failed batch takes them. A failure of the transaction itself (BEGIN, COMMIT, the
 * connection) fails every delivery: none was acknowledged. Transient conflicts retry
 * the whole batch.
 */

import type { Knex } from 'knex';
import type { StagedBlob } from '../blob-store/blob-store';
import type { Outcome } from '../util/group-commit';
import type { EmailDraft } from '../types';
import { isOwnFailure } from './sql/db-errors';
import type { DeliveryTarget, SaveResult } from './record-store';
import { lockDeliveries, notifyInboxes, removeStagedBlobsOf, storeDeliveries, withRemovedBlobKeys, writeStagedBlobs } from './sql/save-statements';
import type { SqliteBatchWriter } from './sqlite/sqlite-batch-writer';
import { deliveryRows, insertDeliveries } from './sql/delivery-outbox';

/** One delivery of a batch: its drafts, the blobs staged to commit with them, the outbox targets of each draft. */
export interface Delivery {
    drafts: EmailDraft[];
    blobs: StagedBlob[];
    deliveries?: DeliveryTarget[][];
}

/** What a batch save runs on. */
export interface SaveBatchOptions {
    knex: Knex;
    pg: boolean;
    /** Postgres NOTIFY channel. */
    channel: string;
    /** SQLite on a file: the prepared save transaction (a batch that fails is isolated through Knex). */
    batchWriter?: SqliteBatchWriter;
    /** Runs an attempt again on transient conflicts. */
    retryTransient<T>(attempt: () => Promise<T>): Promise<T>;
    /** SQLite: whether the database has the search index (asked on the save's transaction). */
    sqliteSearchIndex(trx: Knex.Transaction): Promise<boolean>;
}

/** The function that stores one batch and answers one outcome per delivery, in order. */
export function createSaveBatch(options: SaveBatchOptions): (batch: Delivery[]) => Promise<Outcome<SaveResult>[]> {
    const { knex, pg, channel, batchWriter, retryTransient, sqliteSearchIndex } = options;
    return async (batch) => {
        const deliveries = batch.map((d) => d.drafts);
        let isolate = false;
        for (;;) {
            try {
                if (batchWriter && !isolate) {
                    const values = await retryTransient(() => batchWriter.save(deliveries, batch.flatMap((d) => d.blobs), batch.map((d) => d.deliveries)));
                    return values.map((value) => ({ ok: true, value }));
                }

                return await retryTransient(() => knex.transaction(async (trx) => storeInTransaction(trx, batch, isolate, pg, channel, !pg && await sqliteSearchIndex(trx))));
            }
            catch (err) {
                // A lone delivery's own failure is simply its outcome.
                if (isolate || deliveries.length === 1 || !isOwnFailure(err)) {
                    throw err;
                }

                isolate = true;
            }
        }
    };
}

// The batch on a Knex transaction: all together, or (isolate) each in a savepoint of its own.
async function storeInTransaction(trx: Knex.Transaction, batch: Delivery[], isolate: boolean, pg: boolean, channel: string, searchIndex: boolean): Promise<Outcome<SaveResult>[]> {
    if (pg) {
        await lockDeliveries(trx, batch.flatMap((d) => d.drafts));
    }

    const outcomes: Outcome<SaveResult>[] = [];
    if (isolate) {
        for (const { drafts, blobs, deliveries } of batch) {
            try {
                const [value] = await trx.transaction(async (savepoint) => {
                    const values = await storeDeliveries(savepoint, [drafts], searchIndex);
                    await insertDeliveries(savepoint, deliveryRows(values, [deliveries], Date.now()));
                    await writeStagedBlobs(savepoint, blobs);
                    return pg ? values : withRemovedBlobKeys(values, await removeStagedBlobsOf(savepoint, values.flatMap((v) => v.replaced)));
                });
                outcomes.push({ ok: true, value: value! });
            }
            catch (err) {
                if (!isOwnFailure(err)) {
                    throw err;
                }

                outcomes.push({ ok: false, error: err });
            }
        }
    }
    else {
        let values = await storeDeliveries(trx, batch.map((d) => d.drafts), searchIndex);
        await insertDeliveries(trx, deliveryRows(values, batch.map((d) => d.deliveries), Date.now()));
        await writeStagedBlobs(trx, batch.flatMap((d) => d.blobs));
        if (!pg) {
            // The replaced copies' small blobs go in the same commit (SQLite keeps them in this database).
            values = withRemovedBlobKeys(values, await removeStagedBlobsOf(trx, values.flatMap((v) => v.replaced)));
        }

        for (const value of values) {
            outcomes.push({ ok: true, value });
        }
    }

    if (pg) {
        const inboxes = new Set<string>();
        for (const outcome of outcomes) {
            for (const record of outcome.ok ? outcome.value.saved : []) {
                inboxes.add(record.inbox);
            }
        }

        await notifyInboxes(trx, channel, inboxes);
    }

    return outcomes;
}
