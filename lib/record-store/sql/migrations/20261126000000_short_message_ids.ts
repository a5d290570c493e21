import type { Knex } from 'knex';
import { MAX_MESSAGE_ID_BYTES, reassignMessageId, shortId, type ReassignedRow } from './reassign-message-id';

/** Rows read per query: bounds memory on a large store (ids are at most a few KiB each). */
const BATCH_ROWS = 500;

/**
 * Emails stored before the id length limit under an id over MAX_MESSAGE_ID_BYTES take
 * `<SHA-256 hex of that id>@inbox-capture` (shortId(), derived again while held), so
 * their cursors and URLs fit every request limit. Rows are read in seq order, in
 * batches, and only those with more than MAX_MESSAGE_ID_BYTES / 4 characters (fewer
 * cannot pass the limit in UTF-8), so the scan reads little beyond short ids.
 */
export async function up(knex: Knex): Promise<void> {
    let after: number | string = -1;
    for (;;) {
        const rows = await knex('emails')
            .select('seq', 'message_id', 'inbox')
            .where('seq', '>', after)
            .andWhereRaw('length(message_id) > ?', [MAX_MESSAGE_ID_BYTES / 4])
            .orderBy('seq')
            .limit(BATCH_ROWS) as ReassignedRow[];
        for (const row of rows) {
            const short = shortId(row.message_id);
            if (short !== row.message_id) {
                await reassignMessageId(knex, row, short);
            }
        }

        if (rows.length < BATCH_ROWS) {
            return;
        }

        after = rows[rows.length - 1]!.seq;
    }
}

/** Nothing to undo: the long ids could not be paged past, and the Message-ID is still in source_id. */
export async function down(): Promise<void> {
    // Intentionally empty.
}
