/**
 * The statements a batch save runs inside its transaction: the advisory locks
 * (Postgres), one lookup, the planned deletes and multi-row inserts, the notify.
 */

import type { Knex } from 'knex';
import { sha256Hex } from '../../identity/ids';
import { blobKeysOf } from '../../blob-store/blob-key';
import type { StagedBlob } from '../../blob-store/blob-store';
import type { EmailDraft, EmailRecord, StoredAttachment } from '../../types';
import { removeUnreferencedStagedBlobsSql } from './blob-references';
import type { SaveResult } from '../record-store';
import { toInsertRow, toRecord, type EmailRow } from './rows';
import { indexSearchDocuments } from './search-index';
import { planSave, prepareDeliveries, type PlannedDraft, type PlannedInsert, type StoredRow } from './save-plan';
import { BLOBS_TABLE, EMAIL_BLOBS_TABLE, EMAIL_COLUMNS, EMAILS_TABLE } from './schema';

/**
 * Values per `IN (...)` list, so a sweep batch of any size stays under SQLite's
 * bound-parameter limit (999 before 3.32) and keeps Postgres statements small.
 */
export const IN_LIST_CHUNK = 500;
/**
 * Drafts per lookup statement of a batch (four values each): under SQLite's
 * expression depth (1,000 by default) and bound-parameter limits.
 */
const LOOKUP_CHUNK = 100;
/**
 * Rows per multi-row INSERT into emails (19 values each): under every bound-parameter
 * limit, and under the 500 terms SQLite allows a compound SELECT (knex writes a
 * multi-row insert on SQLite as SELECT ... UNION ALL SELECT ...).
 */
const INSERT_CHUNK = 64;
/** Rows per multi-row INSERT into email_blobs: SQLite's compound SELECT limit, 500 terms. */
const BLOB_ROWS_CHUNK = 500;

/** Rows per multi-row upsert into blobs (5 values each): under SQLite's 999 bound parameters. */
const STAGED_BLOBS_CHUNK = 100;

interface LookupRow extends EmailRow {
    message_id_hash: string;
    source_id_hash: string;
}

/**
 * Stores deliveries in order, each exactly as if it ran alone after the one before
 * (`sqliteSearchIndex`: the SQLite database has the search index, which the inserts join),
 * with a handful of statements for the whole batch: one lookup, the plan worked out
 * in memory from it (save-plan.ts), then multi-row deletes and inserts. Nothing is
 * written until the plan is complete, so the few lookups made while planning see
 * the table as the first one did.
 */
export async function storeDeliveries(trx: Knex.Transaction, deliveries: EmailDraft[][], sqliteSearchIndex = false): Promise<SaveResult[]> {
    const planned = prepareDeliveries(deliveries);
    const rows: StoredRow[] = (await lookupRows(trx, planned.flat())).map((row) => ({
        seq: row.seq,
        record: toRecord(row),
        messageHash: row.message_id_hash,
        sourceHash: row.source_id_hash
    }));

    // Planning asks for an id it cannot tell held or free only when a derived id is
    // taken (adversarial mail): it is looked up and the plan worked out again.
    const checked = new Map<string, boolean>();
    for (;;) {
        const outcome = planSave(planned, rows, checked);
        if ('lookUp' in outcome) {
            const holder = await trx(EMAILS_TABLE).select('seq').where('message_id_hash', outcome.lookUp).first() as unknown;
            checked.set(outcome.lookUp, holder !== undefined);
            continue;
        }

        const { plan } = outcome;
        for (let i = 0; i < plan.removed.length; i += IN_LIST_CHUNK) {
            await removeRows(trx, plan.removed.slice(i, i + IN_LIST_CHUNK));
        }

        await insertRecords(trx, plan.inserts);
        if (sqliteSearchIndex) {
            await indexSearchDocuments(trx, plan.inserts.map((i) => i.messageHash));
        }

        return plan.results;
    }
}

/**
 * Deletes the emails with `seqs` and their email_blobs rows; resolves to the emails
 * deleted. Explicit rather than left to ON DELETE CASCADE: a caller's own SQLite knex
 * may not have foreign_keys on, and a stale email_blobs row would keep a blob forever.
 */
export async function removeRows(trx: Knex.Transaction, seqs: (number | string)[]): Promise<number> {
    await trx(EMAIL_BLOBS_TABLE).whereIn('email_seq', seqs).delete();
    return trx(EMAILS_TABLE).whereIn('seq', seqs).delete();
}

/** Each result with the keys of its replaced copies' blobs that `removed` holds (when it has any). */
export function withRemovedBlobKeys(results: SaveResult[], removed: ReadonlySet<string>): SaveResult[] {
    if (removed.size === 0) {
        return results;
    }

    return results.map((result) => {
        const removedBlobKeys = blobKeysOf(result.replaced).filter((key) => removed.has(key));
        return removedBlobKeys.length > 0 ? { ...result, removedBlobKeys } : result;
    });
}

/**
 * Deletes the small blobs of replaced copies kept in this database's blobs table
 * (SQLite) that no record references any more, in the transaction that replaces
 * them, so no kill can orphan them. Answers the keys it found (and deleted).
 */
export async function removeStagedBlobsOf(trx: Knex.Transaction, replaced: EmailRecord[]): Promise<Set<string>> {
    const keys = [...new Set(blobKeysOf(replaced))];
    const removed = new Set<string>();
    for (let i = 0; i < keys.length; i += IN_LIST_CHUNK) {
        const chunk = keys.slice(i, i + IN_LIST_CHUNK);
        // Raw: Knex's delete() answers a count on SQLite, whatever returning() asks for.
        const rows: { key: string }[] = await trx.raw(removeUnreferencedStagedBlobsSql(`(${chunk.map(() => '?').join(', ')})`), chunk);
        rows.forEach(({ key }) => removed.add(key));
    }

    return removed;
}

/**
 * Writes blobs a SQLite blob store staged for this database (BlobStore.stage()) in
 * the caller's transaction, so they commit with the records that reference them. A
 * key written again takes the new content, as a put would.
 */
export async function writeStagedBlobs(trx: Knex.Transaction, blobs: StagedBlob[]): Promise<void> {
    const modifiedAt = Date.now();
    for (let i = 0; i < blobs.length; i += STAGED_BLOBS_CHUNK) {
        const chunk = blobs.slice(i, i + STAGED_BLOBS_CHUNK);
        await trx.raw(
            `INSERT INTO ${BLOBS_TABLE} (key, content, size, content_type, modified_at) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?)').join(', ')}
    ON CONFLICT (key) DO UPDATE SET content = excluded.content, size = excluded.size,
    content_type = excluded.content_type, modified_at = excluded.modified_at`,
            chunk.flatMap((b) => [b.key, b.content, b.content.length, b.contentType, modifiedAt]));
    }
}

/**
 * Takes the Postgres advisory locks of a batch's deliveries, held to its commit.
 * Writers of one inbox or one Message-ID take turns (locks taken in one global
 * order, so they cannot deadlock):
 * - 50 concurrent deliveries of one message resolve to replacements instead of
 *   unique violations;
 * - within an inbox, seq values commit in increasing order, so a version probe
 *   that saw max(seq) = n cannot later miss a row with a lower seq.
 */
export async function lockDeliveries(trx: Knex.Transaction, drafts: EmailDraft[]): Promise<void> {
    const names = new Set<string>();
    for (const draft of drafts) {
        names.add(`inbox\n${draft.inbox}`);
        names.add(`source\n${draft.sourceId}`);
    }

    const keys = [...names].map(advisoryKey).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    // One statement; VALUES yields its rows in the order written, and ORDER BY keeps it so.
    await trx.raw(
        `SELECT pg_advisory_xact_lock(k) FROM (VALUES ${keys.map(() => '(?::bigint, ?::int)').join(', ')}) AS v(k, i) ORDER BY i`,
        keys.flatMap((key, i) => [key.toString(), i]));
}

/** Notifies `channel` once per inbox; Postgres delivers at commit, never for a rolled-back delivery. */
export async function notifyInboxes(trx: Knex.Transaction, channel: string, inboxes: Set<string>): Promise<void> {
    if (inboxes.size > 0) {
        await trx.raw(
            `SELECT pg_notify(?, inbox) FROM (VALUES ${[...inboxes].map(() => '(?::text)').join(', ')}) AS v(inbox)`,
            [channel, ...inboxes]);
    }
}

// The rows a batch's drafts can meet: the stored copy of each (inbox, source)
// and the holder of each draft's first-choice id. One statement per
// LOOKUP_CHUNK drafts, not two per draft.
async function lookupRows(trx: Knex.Transaction, wanted: PlannedDraft[]): Promise<LookupRow[]> {
    const rows: LookupRow[] = [];
    for (let i = 0; i < wanted.length; i += LOOKUP_CHUNK) {
        const chunk = wanted.slice(i, i + LOOKUP_CHUNK);
        const found = await trx(EMAILS_TABLE)
            .select([...EMAIL_COLUMNS, 'message_id_hash', 'source_id_hash'])
            .where((q) => {
                // A copy stored under its Message-ID holds that id (its digest is the source's);
                // any other is found by (inbox, source) in the index of such copies (docs/design.md).
                void q.whereIn('message_id_hash', [...new Set(chunk.flatMap((w) => [w.candidateHash, w.sourceHash]))]);
                for (const w of chunk) {
                    void q.orWhere((p) => void p.where('inbox', w.draft.inbox).andWhere('source_id_hash', w.sourceHash).andWhereRaw('message_id_hash <> source_id_hash'));
                }
            }) as LookupRow[];
        rows.push(...found);
    }

    return rows;
}

async function insertRecords(trx: Knex.Transaction, records: PlannedInsert[]): Promise<void> {
    const json = new Map<StoredAttachment[], string>();
    for (let i = 0; i < records.length; i += INSERT_CHUNK) {
        const chunk = records.slice(i, i + INSERT_CHUNK);
        // The id hash tells the rows apart: RETURNING promises no order.
        const inserted = await trx(EMAILS_TABLE)
            .insert(chunk.map((insert) => toInsertRow(insert, json)))
            .returning(['seq', 'message_id_hash']) as { seq: number | string; message_id_hash: string }[];

        const seqs = new Map(inserted.map((row) => [row.message_id_hash, row.seq]));
        const blobRows = chunk.flatMap(({ record, messageHash }) => {
            const seq = seqs.get(messageHash);
            if (seq === undefined) {
                throw new Error('Insert into emails returned no seq');
            }

            const keys = new Set([record.rawKey, ...record.attachments.map((a) => a.blobKey)]);
            return [...keys].map((blobKey) => ({ email_seq: seq, blob_key: blobKey }));
        });
        for (let j = 0; j < blobRows.length; j += BLOB_ROWS_CHUNK) {
            await trx(EMAIL_BLOBS_TABLE).insert(blobRows.slice(j, j + BLOB_ROWS_CHUNK));
        }
    }
}

// 64 bits of SHA-256 as the signed bigint pg_advisory_xact_lock takes.
function advisoryKey(name: string): bigint {
    return BigInt.asIntN(64, BigInt(`0x${sha256Hex(name).slice(0, 16)}`));
}
