/** The authentication check's answer kept with its email (docs/api.md, "Authentication check"). */

import type { Knex } from 'knex';
import { sha256Hex } from '../../identity/ids';
import type { RecordStore } from '../record-store';
import { cleanText } from './clean-text';
import { EMAILS_TABLE } from './schema';

/** The store's keptAuthCheck() and keepAuthCheck(); `write` runs one write transaction as the store's other writes do. */
export function authCheckKeeper({ knex, write }: { knex: Knex; write: <T>(work: (trx: Knex.Transaction) => Promise<T>) => Promise<T> }): Required<Pick<RecordStore, 'keptAuthCheck' | 'keepAuthCheck'>> {
    const keptOf = async (on: Knex, hash: string): Promise<string | null> => {
        const row = await on(EMAILS_TABLE).select('auth_check').where('message_id_hash', hash).first() as { auth_check: string | null } | undefined;
        return row?.auth_check ?? null;
    };

    return {
        keptAuthCheck(messageId) {
            return keptOf(knex, sha256Hex(cleanText(messageId)));
        },

        keepAuthCheck(messageId, json) {
            const hash = sha256Hex(cleanText(messageId));
            // The first answer stays: two first requests at once both answer what the first to write kept.
            return write(async (trx) => {
                await trx(EMAILS_TABLE).where('message_id_hash', hash).whereNull('auth_check').update({ auth_check: json });
                return keptOf(trx, hash);
            });
        }
    };
}
