import type { Knex } from 'knex';
import { deriveMessageId, reassignMessageId, sha256Hex, type ReassignedRow } from './reassign-message-id';

/** The ids no HTTP client can put in a path (docs/design.md, "Every stored messageId is addressable"). */
const DOT_SEGMENTS = ['.', '..'];

/**
 * Emails stored before the addressable-id rule under the id `.` or `..` take the id
 * ingest now gives them, `<id>~<inbox>` (derived again while that is held, as at
 * ingest). At most two rows can match (ids are unique), found through the id digest
 * index, so this costs two lookups on any store. Overlong ids are the next
 * migration's (20261126000000_short_message_ids).
 */
export async function up(knex: Knex): Promise<void> {
    const rows = await knex('emails')
        .select('seq', 'message_id', 'inbox')
        .whereIn('message_id_hash', DOT_SEGMENTS.map(sha256Hex)) as ReassignedRow[];
    for (const row of rows) {
        await reassignMessageId(knex, row, deriveMessageId(row.message_id, row.inbox));
    }
}

/** Nothing to undo: the old ids were unreachable, and the Message-ID is still in source_id. */
export async function down(): Promise<void> {
    // Intentionally empty.
}
