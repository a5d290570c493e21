/** Retention (docs/operations.md, "Retention"): which emails a pass deletes, and in what order. */

import type { RecordStore } from '../record-store/record-store';
import type { EmailRecord } from '../types';

/** What one retention pass deletes; at least one rule is set. */
export interface RetentionPolicy {
    /** Emails received more than this many ms before the pass are deleted. */
    maxAgeMs?: number;
    /** Of each inbox, only the newest this many emails (in the list's order) are kept. */
    maxPerInbox?: number;
}

/** Retention as a service option: the rules, and how often a pass runs. */
export interface RetentionOptions extends RetentionPolicy {
    /** Pause between the end of one pass and the start of the next, ms (default 60 s). */
    intervalMs?: number;
}

/** Shortest maximum age and interval the adapters accept, ms: `1s` (docs/operations.md, "Retention"); shorter would sweep in a loop. */
export const MIN_RETENTION_DURATION_MS = 1000;
/** Longest maximum age and interval, ms: 100 years, so the cutoff arithmetic stays well inside safe integers. */
export const MAX_RETENTION_DURATION_MS = 36_500 * 86_400_000;
/** Largest maxPerInbox, emails: far beyond any inbox, and a bound on what a typo can ask. */
export const MAX_PER_INBOX_LIMIT = 1_000_000_000;

/** Inbox names read from the summary per query of a pass. */
const INBOX_PAGE = 500;

/**
 * Deletes batches of records the way the delete endpoints do (each batch's records, then
 * their blobs, a failing batch retried) until `take(batchSize)` answers none, or `signal`
 * aborts between two batches; resolves to how many were deleted.
 */
export type DeleteInBatches = (take: (batchSize: number) => Promise<EmailRecord[]>, signal?: AbortSignal) => Promise<number>;

/** What a pass runs on. */
export interface RetentionContext {
    recordStore: RecordStore;
    deleteInBatches: DeleteInBatches;
    /** The instant ages are measured from, Unix ms. */
    now: number;
    /** Ends the pass after the batch under way (the service is closing); what went is counted. */
    signal?: AbortSignal;
}

/**
 * One retention pass: the emails older than the maximum age, then those beyond the newest
 * N of each inbox over N (found in the inbox summary). Resolves to how many it deleted;
 * with several processes at once, each deleted email is counted by one of them.
 */
export async function runRetentionPass(policy: RetentionPolicy, context: RetentionContext): Promise<number> {
    const { recordStore, deleteInBatches, signal } = context;
    let deleted = 0;
    if (policy.maxAgeMs !== undefined) {
        const receivedBefore = context.now - policy.maxAgeMs;
        deleted += await deleteInBatches((batchSize) => recordStore.deleteReceivedBeforeBatch(receivedBefore, batchSize), signal);
    }

    const keep = policy.maxPerInbox;
    if (keep !== undefined) {
        let after: string | undefined;
        for (;;) {
            const names = await recordStore.inboxesOver(keep, { after, limit: INBOX_PAGE });
            for (const inbox of names) {
                deleted += await deleteInBatches((batchSize) => recordStore.deleteBeyondNewestBatch(inbox, keep, batchSize), signal);
            }

            if (names.length < INBOX_PAGE || signal?.aborted) {
                return deleted;
            }

            after = names[names.length - 1];
        }
    }

    return deleted;
}
