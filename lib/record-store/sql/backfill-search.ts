/**
 * Fills the searched texts (`recipient_folded`, `filenames_folded`, `body_folded`) of
 * emails stored before they existed, and (SQLite) adds their documents to the search
 * index. The HTML's text is worked out here, in JS, as ingest works it out for new mail.
 * Batches in transactions of their own, found through a partial index, as
 * backfill-links-codes.ts does: an interruption loses at most the batch in flight.
 */

import type { Knex } from 'knex';
import { htmlTextOrNothing } from '../../extract/html-text';
import { searchTextOf } from '../../extract/search-text';
import { BACKFILL_BATCH_ROWS } from './backfill-links-codes';
import { parseAttachments, searchColumns } from './rows';
import { EMAILS_TABLE } from './schema';
import { indexSearchDocumentsBySeq } from './search-index';

/** How the back-fill runs. */
export interface SearchBackfillOptions {
    /** Rows per transaction (default BACKFILL_BATCH_ROWS). */
    batchRows?: number;
    /** Runs one batch's transaction (the store passes its own). */
    transaction?: <T>(work: (trx: Knex.Transaction) => Promise<T>) => Promise<T>;
    /** SQLite: the database has the search index, which the filled rows join. */
    sqliteSearchIndex?: boolean;
    /** Told after each committed batch, with the rows filled so far. */
    onBatch?: (filled: number) => void | Promise<void>;
}

interface PendingRow {
    seq: number | string;
    recipient: string;
    attachments: string;
    body: string;
    html_body: string;
}

/** Fills every row whose `body_folded` is NULL; resolves to the number of rows filled. */
export async function backfillSearch(knex: Knex, options: SearchBackfillOptions = {}): Promise<number> {
    const batchRows = options.batchRows ?? BACKFILL_BATCH_ROWS;
    const transaction = options.transaction ?? (<T>(work: (trx: Knex.Transaction) => Promise<T>) => knex.transaction(work));
    let filled = 0;
    for (;;) {
        const count = await transaction(async (trx) => {
            const seqs = (await trx(EMAILS_TABLE).select('seq').whereNull('body_folded').orderBy('seq').limit(batchRows) as { seq: number | string }[])
                .map((r) => r.seq);
            // One row's texts in memory at a time, as the links back-fill.
            for (const seq of seqs) {
                const row = await trx(EMAILS_TABLE).select('seq', 'recipient', 'attachments', 'body', 'html_body').where('seq', seq).first() as PendingRow | undefined;
                if (!row) {
                    continue;
                }

                const columns = searchColumns({ recipient: row.recipient, attachments: parseAttachments(row.attachments) }, searchTextOf(row.body, htmlTextOrNothing(row.html_body)));
                const updated = await trx(EMAILS_TABLE).where('seq', seq).whereNull('body_folded').update(columns);
                if (updated > 0 && options.sqliteSearchIndex) {
                    await indexSearchDocumentsBySeq(trx, [seq]);
                }
            }

            return seqs.length;
        });
        if (count === 0) {
            return filled;
        }

        filled += count;
        await options.onBatch?.(filled);
    }
}
