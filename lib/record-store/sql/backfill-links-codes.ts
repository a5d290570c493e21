/**
 * Fills `links` and `codes` of emails stored before those columns existed, from their
 * stored subject and bodies, with the extractor ingest uses. Not a migration: migrations
 * are frozen history and import no runtime code, while this must find what ingest finds;
 * migrate() runs it right after them, under the same lock (migrate.ts). Batches of
 * BACKFILL_BATCH_ROWS rows, each in a transaction of its own: an interruption loses at
 * most the batch in flight, and a rerun goes on with the rows still NULL (found through
 * a partial index, so a store with nothing left to fill answers at once).
 */

import type { Knex } from 'knex';
import { linksAndCodesOf } from '../../extract/links-and-codes';
import { EMAILS_TABLE } from './schema';

/** Rows per back-fill transaction: short enough that writers waiting for their turn barely notice. */
export const BACKFILL_BATCH_ROWS = 100;

/** How the back-fill runs. */
export interface BackfillOptions {
    /** Rows per transaction (default BACKFILL_BATCH_ROWS). */
    batchRows?: number;
    /** Runs one batch's transaction; the store passes its own, which takes turns with its writers and retries conflicts. */
    transaction?: <T>(work: (trx: Knex.Transaction) => Promise<T>) => Promise<T>;
    /**
     * Told after each committed batch, with the rows filled so far and the rows there were to
     * fill when it started (counted only for a caller that listens); a throw stops the back-fill.
     */
    onBatch?: (filled: number, pending: number) => void | Promise<void>;
}

interface PendingRow {
    seq: number | string;
    subject: string;
    body: string;
    html_body: string;
}

/**
 * Fills every row whose `links` is NULL; resolves to the number of rows this call filled.
 * A row another process fills first is left to it: its update is skipped, not repeated.
 */
export async function backfillLinksAndCodes(knex: Knex, options: BackfillOptions = {}): Promise<number> {
    const batchRows = options.batchRows ?? BACKFILL_BATCH_ROWS;
    const transaction = options.transaction ?? (<T>(work: (trx: Knex.Transaction) => Promise<T>) => knex.transaction(work));
    let filled = 0;
    // Through the partial index: cheap, and nothing to count where nobody listens.
    const pending = options.onBatch ? Number((await knex(EMAILS_TABLE).whereNull('links').count({ n: '*' }).first() as { n: number | string } | undefined)?.n ?? 0) : 0;
    for (;;) {
        const batch = await transaction(async (trx) => {
            const seqs = (await trx(EMAILS_TABLE).select('seq').whereNull('links').orderBy('seq').limit(batchRows) as { seq: number | string }[])
                .map((r) => r.seq);
            let updated = 0;
            // One row's bodies in memory at a time: a batch of 25 MiB messages must not hold them all.
            for (const seq of seqs) {
                const row = await trx(EMAILS_TABLE).select('seq', 'subject', 'body', 'html_body').where('seq', seq).first() as PendingRow | undefined;
                if (row) {
                    const { links, codes } = linksAndCodesOf({ subject: row.subject, body: row.body, htmlBody: row.html_body });
                    updated += await trx(EMAILS_TABLE).where('seq', seq).whereNull('links').update({ links: JSON.stringify(links), codes: JSON.stringify(codes) });
                }
            }

            return { found: seqs.length, updated };
        });
        if (batch.found === 0) {
            return filled;
        }

        filled += batch.updated;
        await options.onBatch?.(filled, pending);
    }
}
