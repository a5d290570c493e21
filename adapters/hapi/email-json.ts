/**
 * The JSON of the emails the plugin answers with (a GET, a list page, a long-poll's
 * answer), built within the service's memory budget and shared by concurrent answers
 * (docs/guarantees.md, "Large emails in answers"): four requests for one email of 40 MB of
 * JSON hold its bytes once, reserved from the budget that SMTP sessions and ingests
 * share, until the last of them is sent. An answer the budget cannot hold fails with
 * `BUSY` (503 and Retry-After) instead of growing the process.
 */

import { budgetSpent, type MessageBudget, type MessageReservation } from '../../lib/util/message-budget';
import type { EmailRecord } from '../../lib/types';
import type { EmailView } from './api-types';
import { toEmailView } from './email-view';
import { toJsonChunks } from './json-chunks';

/** One email's answer: its view (what `server.inject()` shows) and its JSON. */
export interface EmailJson {
    view: EmailView;
    chunks: Buffer[];
    bytes: number;
}

/** An email's JSON held for one answer: `release()` once the answer is sent (safe to repeat). */
export interface HeldEmailJson {
    json: EmailJson;
    release(): void;
}

/** Where answers get the JSON of the emails they carry. */
export interface EmailJsonSource {
    /** The JSON of `record`'s view under the plugin's prefix; throws `BUSY` when the budget cannot hold it. */
    acquire(record: EmailRecord): Promise<HeldEmailJson>;
}

interface Entry {
    json: Promise<EmailJson>;
    holders: number;
    reservation: MessageReservation;
}

/**
 * The emails' JSON for one plugin registration: an email whose answer is being built or
 * sent is serialised once whoever else asks meanwhile, and its bytes are reserved from
 * `budget` until no answer holds it. Keyed by the stored copy (its id and raw blob, new
 * for every ingest) and its tags, so a replaced or retagged copy is never answered from the
 * JSON of the one before.
 */
export function createEmailJsonSource(budget: MessageBudget, prefix: string): EmailJsonSource {
    const entries = new Map<string, Entry>();

    const build = async (record: EmailRecord, reservation: MessageReservation): Promise<EmailJson> => {
        const view = toEmailView(record, prefix);
        let bytes = 0;
        const chunks = await toJsonChunks(view, (size) => {
            if (!reservation.grow(size)) {
                throw budgetSpent();
            }

            bytes += size;
        });
        return { view, chunks, bytes };
    };

    return {
        async acquire(record) {
            // Tags are the one part of a stored copy that changes (PUT .../tags): an answer after the change has the new ones.
            const key = `${record.messageId}\n${record.rawKey}\n${record.receivedAt}\n${record.tags.join(',')}`;
            let entry = entries.get(key);
            if (!entry) {
                const reservation = budget.reserve(0);
                if (!reservation) {
                    throw budgetSpent();
                }

                const created: Entry = { json: build(record, reservation), holders: 0, reservation };
                entries.set(key, created);
                // A failed build is forgotten at once: the next request tries again.
                created.json.catch(() => {
                    if (entries.get(key) === created) {
                        entries.delete(key);
                    }

                    reservation.release();
                });
                entry = created;
            }

            const held = entry;
            held.holders++;
            let released = false;
            const release = () => {
                if (released) {
                    return;
                }

                released = true;
                held.holders--;
                if (held.holders === 0) {
                    if (entries.get(key) === held) {
                        entries.delete(key);
                    }

                    held.reservation.release();
                }
            };

            try {
                return { json: await held.json, release };
            }
            catch (err) {
                release();
                throw err;
            }
        }
    };
}
