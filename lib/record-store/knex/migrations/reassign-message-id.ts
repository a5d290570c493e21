import type { Knex } from 'knex';
import { deriveMessageId, sha256Hex } from '../../../ingest/ids';
import { MAX_ID_DERIVATIONS } from '../save-plan';

/** A stored email a migration gives a new message id. */
export interface ReassignedRow {
    seq: number | string;
    message_id: string;
    inbox: string;
}

/**
 * Moves a stored email to `candidate`, derived again (`<id>~<inbox>`) while another
 * email holds it, as ingest does (save-plan.ts), at most MAX_ID_DERIVATIONS times.
 */
export async function reassignMessageId(knex: Knex, row: ReassignedRow, candidate: string): Promise<void> {
    for (let derivations = 0; await isHeld(knex, candidate); derivations++) {
        if (derivations >= MAX_ID_DERIVATIONS) {
            throw new Error(`No free message id for the email ${row.message_id} in ${row.inbox}`);
        }

        candidate = deriveMessageId(candidate, row.inbox);
    }

    await knex('emails').where('seq', row.seq).update({ message_id: candidate, message_id_hash: sha256Hex(candidate) });
}

async function isHeld(knex: Knex, messageId: string): Promise<boolean> {
    const row = await knex('emails').first('seq').where('message_id_hash', sha256Hex(messageId)) as unknown;
    return row !== undefined;
}
