/** Marking an email read or unread in a Knex record store (docs/api.md, "Read and unread"). */

import type { Knex } from 'knex';
import { sha256Hex } from '../../identity/ids';
import type { RecordStore } from '../record-store';
import { cleanText } from './clean-text';
import { toRecord, type EmailRow } from './rows';
import { EMAIL_COLUMNS, EMAILS_TABLE } from './schema';

/** The store's setSeen(); `write` runs one write transaction as the store's other writes do. */
export function seenWriter({ write }: { write: <T>(work: (trx: Knex.Transaction) => Promise<T>) => Promise<T> }): Pick<RecordStore, 'setSeen'> {
    return {
        setSeen(messageId, seen, options = {}) {
            const hash = sha256Hex(cleanText(messageId));
            const { inboxPrefix } = options;
            // An update of the flag alone: the email keeps its seq, so its place and inboxVersion() stay.
            return write(async (trx) => {
                // Checked in the transaction that writes: with a prefix, the email of another inbox is left as it was.
                if (inboxPrefix) {
                    const found = await trx(EMAILS_TABLE).select('inbox').where('message_id_hash', hash).first() as { inbox: string } | undefined;
                    if (!found?.inbox.startsWith(inboxPrefix)) {
                        return null;
                    }
                }

                const updated = await trx(EMAILS_TABLE).where('message_id_hash', hash).update({ seen });
                if (updated === 0) {
                    return null;
                }

                const row = await trx(EMAILS_TABLE).select(EMAIL_COLUMNS).where('message_id_hash', hash).first() as EmailRow | undefined;
                return row ? toRecord(row) : null;
            });
        }
    };
}
