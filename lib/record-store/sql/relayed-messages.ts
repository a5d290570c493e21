/**
 * What auto-relay sent, kept in a Knex record store (docs/api.md, "Auto-relay"): a row per
 * (message, recipient) key, taken by the delivery that sends it, so that a copy of the same
 * message coming back through a relay is recognised by every instance sharing the database.
 */

import type { Knex } from 'knex';
import type { RecordStore } from '../record-store';
import { RELAYED_MESSAGES_TABLE } from './schema';

/** The RecordStore's relay-key method on Knex; `write` is the store's write transaction (SQLite's writer line). */
export function relayedMessages(write: <T>(work: (trx: Knex.Transaction) => Promise<T>) => Promise<T>): Required<Pick<RecordStore, 'claimRelayKeys'>> {
    const table = RELAYED_MESSAGES_TABLE;
    return {
        claimRelayKeys(keys, deliveryId, now, forgetBefore) {
            return write(async (trx) => {
                await trx(table).where('created_at', '<', forgetBefore).delete();
                // A key another delivery took first stays its own: the insert leaves it alone.
                await trx(table).insert(keys.map((key) => ({ relay_key: key, delivery_id: deliveryId, created_at: now }))).onConflict('relay_key').ignore();
                const holders = await trx(table).select('delivery_id').whereIn('relay_key', [...keys]) as { delivery_id: string }[];
                return holders.length === keys.length && holders.every((h) => h.delivery_id === deliveryId);
            });
        }
    };
}
