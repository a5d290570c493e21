/**
 * What the two migrations that give stored emails new ids (20261124120000_addressable_ids,
 * 20261126000000_short_message_ids) run: the id rules of lib/ingest/ids.ts and save-plan.ts
 * as they stood when the later of the two was written (the earlier one has run them since),
 * copied, not imported, so the migrations keep doing what they do whatever ingest's rules
 * become (docs/design.md, "Migrations are history"). Never edited: a later migration that
 * needs other rules copies its own.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

/** Longest id kept as it is, UTF-8 bytes; a longer one becomes `<sha256 hex>@inbox-capture`. */
export const MAX_MESSAGE_ID_BYTES = 256;

/** Times an id is derived again while the derived id is held. */
export const MAX_ID_DERIVATIONS = 8;

/** SHA-256 hex of a string: the digest `message_id_hash` holds. */
export function sha256Hex(value: string): string {
    return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** `id` itself when it is at most MAX_MESSAGE_ID_BYTES, otherwise `<SHA-256 hex of it>@inbox-capture`. */
export function shortId(id: string): string {
    return id.length * 3 <= MAX_MESSAGE_ID_BYTES || Buffer.byteLength(id, 'utf8') <= MAX_MESSAGE_ID_BYTES ?
        id :
        `${sha256Hex(id)}@inbox-capture`;
}

/** `<id>~<inbox>`, each part shortened by shortId() first and the whole once more. */
export function deriveMessageId(sourceId: string, inbox: string): string {
    return shortId(`${shortId(sourceId)}~${inbox}`);
}

/** A stored email a migration gives a new message id. */
export interface ReassignedRow {
    seq: number | string;
    message_id: string;
    inbox: string;
}

/**
 * Moves a stored email to `candidate`, derived again (`<id>~<inbox>`) while another
 * email holds it, as ingest did, at most MAX_ID_DERIVATIONS times.
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
