/** Replacing an email's tags in a Knex record store (docs/api.md, "Tags"). */

import type { Knex } from 'knex';
import { InboxCaptureError } from '../../errors';
import { sha256Hex } from '../../identity/ids';
import { isValidTag, MAX_TAG_CHARS, MAX_TAGS } from '../../identity/tags';
import type { RecordStore } from '../record-store';
import { cleanText } from './clean-text';
import { toRecord, type EmailRow } from './rows';
import { EMAIL_COLUMNS, EMAILS_TABLE } from './schema';

/** The store's setTags(); `write` runs one write transaction as the store's other writes do. */
export function tagWriter({ write }: { write: <T>(work: (trx: Knex.Transaction) => Promise<T>) => Promise<T> }): Pick<RecordStore, 'setTags'> {
    return {
        async setTags(messageId, tags, options = {}) {
            const hash = sha256Hex(cleanText(messageId));
            const kept = [...new Set(tags)];
            if (kept.length > MAX_TAGS || !kept.every(isValidTag)) {
                throw new InboxCaptureError('INVALID_INPUT', `tags are at most ${MAX_TAGS} strings of a-z 0-9 . _ - of at most ${MAX_TAG_CHARS} characters`);
            }

            // An update of the tags alone: the email keeps its seq, so its place and inboxVersion() stay.
            const { inboxPrefix } = options;
            return write(async (trx) => {
                // Checked in the transaction that writes: with a prefix, the email of another inbox is left as it was.
                if (inboxPrefix) {
                    const found = await trx(EMAILS_TABLE).select('inbox').where('message_id_hash', hash).first() as { inbox: string } | undefined;
                    if (!found?.inbox.startsWith(inboxPrefix)) {
                        return null;
                    }
                }

                const updated = await trx(EMAILS_TABLE).where('message_id_hash', hash).update({ tags: JSON.stringify(kept) });
                if (updated === 0) {
                    return null;
                }

                const row = await trx(EMAILS_TABLE).select(EMAIL_COLUMNS).where('message_id_hash', hash).first() as EmailRow | undefined;
                return row ? toRecord(row) : null;
            });
        }
    };
}
