import type { Knex } from 'knex';
import { deriveMessageId, sha256Hex } from '../../ids';
import { MAX_ID_DERIVATIONS } from '../save-plan';

/** The ids no HTTP client can put in a path (docs/design.md, "Every stored messageId is addressable"). */
const DOT_SEGMENTS = ['.', '..'];

/**
 * Emails stored before the addressable-id rule under the id `.` or `..` take the id
 * ingest now gives them, `<id>~<inbox>` (derived again while that is held, as at
 * ingest). At most two rows can match (ids are unique), found through the id digest
 * index, so this costs two lookups on any store. Overlong ids are left alone: they
 * were accepted before and answer as long as the request fits the server's limit.
 */
export async function up(knex: Knex): Promise<void> {
    const rows = await knex('emails')
        .select('seq', 'message_id', 'inbox')
        .whereIn('message_id_hash', DOT_SEGMENTS.map(sha256Hex)) as { seq: number | string; message_id: string; inbox: string }[];
    for (const row of rows) {
        let candidate = deriveMessageId(row.message_id, row.inbox);
        for (let derivations = 0; await isHeld(knex, candidate); derivations++) {
            if (derivations >= MAX_ID_DERIVATIONS) {
                throw new Error(`No free message id for the email ${row.message_id} in ${row.inbox}`);
            }

            candidate = deriveMessageId(candidate, row.inbox);
        }

        await knex('emails').where('seq', row.seq).update({ message_id: candidate, message_id_hash: sha256Hex(candidate) });
    }
}

/** Nothing to undo: the old ids were unreachable, and the Message-ID is still in source_id. */
export async function down(): Promise<void> {
    // Intentionally empty.
}

async function isHeld(knex: Knex, messageId: string): Promise<boolean> {
    const row = await knex('emails').first('seq').where('message_id_hash', sha256Hex(messageId)) as unknown;
    return row !== undefined;
}
