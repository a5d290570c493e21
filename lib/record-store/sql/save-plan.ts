/**
 * What a batch of deliveries writes, worked out in memory: each draft's message id
 * and the stored copies it replaces. Pure: the store looks up the rows the drafts
 * can meet and passes them in, and is asked for any further id it must check.
 */

import { contentDerivedId, deriveMessageId, firstChoiceId as firstChoice, sha256Hex } from '../../identity/ids';
import type { EmailDraft, EmailRecord } from '../../types';
import type { SaveResult } from '../record-store';

/**
 * Times an id is re-derived when the derived id is held by an unrelated record;
 * each step needs yet another message whose Message-ID mimics a derived id, so
 * this only bounds a loop that adversarial input could otherwise drive.
 */
export const MAX_ID_DERIVATIONS = 8;

/** One draft of a batch, with the digests its lookups use. */
export interface PlannedDraft {
    draft: EmailDraft;
    sourceHash: string;
    /** Digest of the id the draft takes when nothing holds it. */
    candidateHash: string;
}

/** A stored row a batch's drafts can meet. */
export interface StoredRow {
    seq: number | string;
    record: EmailRecord;
    messageHash: string;
    sourceHash: string;
}

/** A record the batch inserts, with the digests and the searched text its row stores. */
export interface PlannedInsert {
    /** The draft the record was made of. */
    draft: EmailDraft;
    record: EmailRecord;
    /** The draft's searchText: stored beside the record, never part of it. */
    searchText: string;
    sourceHash: string;
    messageHash: string;
}

/** The writes of a batch: rows to remove, rows to insert, and each delivery's result, in order. */
export interface SavePlan {
    results: SaveResult[];
    removed: (number | string)[];
    inserts: PlannedInsert[];
}

/** Either the plan, or a message id digest whose holder the store must look up before planning again. */
export type PlanOutcome = { plan: SavePlan } | { lookUp: string };

/** The drafts of each delivery with their digests: what the store looks up before planning. */
export function prepareDeliveries(deliveries: EmailDraft[][]): PlannedDraft[][] {
    return deliveries.map((drafts) => drafts.map((draft) => ({
        draft,
        sourceHash: sha256Hex(draft.sourceId),
        candidateHash: sha256Hex(firstChoiceId(draft, drafts.length === 1))
    })));
}

/**
 * Plans deliveries in order, each exactly as if it ran alone after the one before
 * (docs/design.md: message ids, replacement of the same message in the same inbox).
 * `rows` must hold every stored row whose message id digest is a draft's
 * candidateHash or whose (inbox, source digest) is a draft's; `checked` holds the
 * answers to earlier `lookUp`s (digest → some row holds it).
 */
export function planSave(deliveries: PlannedDraft[][], rows: readonly StoredRow[], checked: ReadonlyMap<string, boolean>): PlanOutcome {
    // Whether a record holds a message id (by digest), the stored copy of each
    // (inbox, source, raw bytes), and the (inbox, source) pairs some copy holds, as they
    // stand after the deliveries planned so far.
    const held = new Map<string, boolean>();
    const copies = new Map<string, StoredCopy>();
    const sources = new Set<string>();
    for (const { candidateHash } of deliveries.flat()) {
        held.set(candidateHash, false);
    }

    for (const [hash, isHeld] of checked) {
        held.set(hash, isHeld);
    }

    for (const row of rows) {
        held.set(row.messageHash, true);
        copies.set(copyKey(row.record.inbox, row.sourceHash, row.record.rawSha256), { record: row.record, seq: row.seq });
        sources.add(sourceKey(row.record.inbox, row.sourceHash));
    }

    const results: SaveResult[] = [];
    const inserts: PendingInsert[] = [];
    const removed: (number | string)[] = [];
    for (const drafts of deliveries) {
        const saved: EmailRecord[] = [];
        const replaced: EmailRecord[] = [];
        for (const { draft, sourceHash } of drafts) {
            // Only the same bytes replace a copy (docs/design.md, "Identity and inboxes").
            const key = copyKey(draft.inbox, sourceHash, draft.rawSha256);
            const earlier = copies.get(key);
            let messageId: string;
            if (earlier) {
                // The replacement is a new row, not an update: it takes a new seq,
                // so inboxVersion() grows on a replacement too. A copy planned
                // earlier in this batch is simply never written.
                replaced.push(copyRecord(earlier.record));
                if (earlier.insert) {
                    earlier.insert.superseded = true;
                }
                else {
                    removed.push(earlier.seq!);
                }

                messageId = earlier.record.messageId;
            }
            else {
                // The same Message-ID in this inbox with other bytes: another email, under an id of its own.
                const otherContent = sources.has(sourceKey(draft.inbox, sourceHash));
                const chosen = chooseId(draft, drafts.length === 1, held, otherContent);
                if ('lookUp' in chosen) {
                    return chosen;
                }

                messageId = chosen.messageId;
            }

            const { record, searchText } = recordOfDraft(draft, messageId);
            const insert: PendingInsert = { draft, record, searchText, sourceHash, messageHash: sha256Hex(messageId), superseded: false };
            inserts.push(insert);
            copies.set(key, { record, insert });
            sources.add(sourceKey(draft.inbox, sourceHash));
            held.set(insert.messageHash, true);
            saved.push(record);
        }

        results.push({ saved, replaced });
    }

    return {
        plan: {
            results,
            removed,
            inserts: inserts.filter((i) => !i.superseded).map(({ draft, record, searchText, sourceHash, messageHash }) => ({ draft, record, searchText, sourceHash, messageHash }))
        }
    };
}

/** A draft saved under `messageId`: the record, and its searchText, stored beside it and never part of it. */
export function recordOfDraft(draft: EmailDraft, messageId: string): { record: EmailRecord; searchText: string } {
    const { searchText, ...fields } = draft;
    // A copy arrives unread, a copy that replaces another too: it is a new arrival (the column's default).
    return { record: { messageId, ...fields, seen: false }, searchText };
}

/** A planned insert, unless a later delivery of the batch replaces it first. */
interface PendingInsert extends PlannedInsert {
    superseded: boolean;
}

/** The copy of a message an inbox holds at this point of a batch: a stored row or one the batch inserts. */
interface StoredCopy {
    record: EmailRecord;
    seq?: number | string;
    insert?: PendingInsert;
}

// `\n` never occurs in a hex digest, and the digests have a fixed length, so the keys are unambiguous.
function sourceKey(inbox: string, sourceHash: string): string {
    return `${inbox}\n${sourceHash}`;
}

// A copy whose raw digest is unknown (stored before digests were kept) is equal to none.
let unknownDigests = 0;
function copyKey(inbox: string, sourceHash: string, rawSha256: string): string {
    return `${sourceKey(inbox, sourceHash)}\n${rawSha256 === '' ? `unknown ${unknownDigests++}` : rawSha256}`;
}

// docs/design.md: the bare Message-ID for a single-inbox delivery when it is addressable, otherwise derived.
function firstChoiceId(draft: EmailDraft, single: boolean): string {
    return firstChoice(draft.sourceId, draft.inbox, single);
}

// The first choice when free (for a message whose inbox holds its Message-ID with other
// bytes, the content-derived id); if even that is held (some other message's Message-ID
// happens to look like a derived id), derive again from it. An id not yet known to be
// held or free is handed back to the store to look up.
function chooseId(draft: EmailDraft, single: boolean, held: ReadonlyMap<string, boolean>, otherContent: boolean): { messageId: string } | { lookUp: string } {
    let candidate = otherContent ? contentDerivedId(draft.sourceId, draft.inbox, draft.rawSha256) : firstChoiceId(draft, single);
    for (let derivations = 0; ; derivations++) {
        const hash = sha256Hex(candidate);
        const known = held.get(hash);
        if (known === undefined) {
            return { lookUp: hash };
        }

        if (!known) {
            return { messageId: candidate };
        }

        if (derivations >= MAX_ID_DERIVATIONS) {
            throw new Error(`No free message id for a copy of ${draft.sourceId} in ${draft.inbox}`);
        }

        candidate = deriveMessageId(candidate, draft.inbox);
    }
}

// A replaced record goes to another caller than the one it was saved for: its own copy.
function copyRecord(record: EmailRecord): EmailRecord {
    return { ...record, attachments: record.attachments.map((a) => ({ ...a })), links: record.links.map((l) => ({ ...l })), codes: [...record.codes], tags: [...record.tags] };
}
