import type { Knex } from 'knex';
import { sha256Hex } from '../lib/identity/ids';
import { linksAndCodesOf } from '../lib/extract/links-and-codes';
import type { RecordStore } from '../lib/record-store/record-store';
import { toInsertRow } from '../lib/record-store/sql/rows';
import { hasSqliteSearchIndex, SEARCH_INDEX_TABLE, SQLITE_DOCUMENT_SQL } from '../lib/record-store/sql/search-index';
import { htmlTextOrNothing } from '../lib/extract/html-text';
import { searchTextOf } from '../lib/extract/search-text';
import type { EmailRecord } from '../lib/types';

/**
 * Bulk seeding for the listing benchmark. saveEmails() stores one delivery per
 * transaction (an fsync each: days for a million rows), so this writes the very
 * rows saveEmails() would write — same tables, same columns, same derived values
 * (hashes, folded text, has_attachments, the email_blobs rows) — in batched
 * multi-row INSERTs on the record store's own Knex, after the store's own
 * migrate(). verifySeed() then reads records back through the store, so a schema
 * change that this file misses fails the benchmark instead of skewing it.
 */

/** Inbox holding a tenth of all rows (the issue: 100,000 of 1,000,000). */
export const BIG_INBOX = 'big';
/** Inboxes sharing the other rows. */
export const OTHER_INBOXES = 1000;
/** First receivedAt, Unix ms (fixed, so runs are comparable). */
export const SEED_EPOCH_MS = Date.UTC(2024, 0, 1);
/**
 * Rows per INSERT statement. Knex writes a multi-row SQLite insert as a compound
 * SELECT, which SQLite caps at 500 terms; Postgres takes 1,000 rows × 20 columns
 * well under its 65,535 bound parameters.
 */
const ROWS_PER_INSERT = { sqlite: 400, pg: 1000 };
/** Statements per transaction: few commits (fsyncs), transactions still short enough to report progress. */
const INSERTS_PER_TRANSACTION = 20;

/**
 * How the seeded rows look, so the listing benchmark knows what its filters match.
 * Every tenth row goes to the big inbox; the other properties follow j = floor(i / 10),
 * so that inside the big inbox (and in every other) each filter matches the stated share.
 */
export const SEED_SHAPE = {
    /** Sender of row i: `user<j % 50>@sender<j % 7>.example`: one in 50 rows per sender. */
    senders: 50,
    /** A word in the subject of one row in 20. */
    rareSubjectWord: 'invoice',
    /** One row in 5 has an attachment. */
    attachmentEvery: 5,
    /** Three rows share each receivedAt second (ties are sorted by messageId). */
    rowsPerSecond: 3
};

/** Name of seeded inbox k of a spread over `inboxes` (bench/inboxes.ts): `inbox-00000` ... */
export function spreadInbox(k: number): string {
    return `inbox-${String(k).padStart(5, '0')}`;
}

/**
 * Row i of the seed (i from 0): its inbox and its record. With `inboxes`, row i goes to
 * inbox i % inboxes (spreadInbox()) instead of the big inbox and its thousand neighbours.
 */
export function seedRecord(i: number, inboxes?: number): EmailRecord {
    const inbox = inboxes !== undefined ? spreadInbox(i % inboxes) : i % 10 === 0 ? BIG_INBOX : `inbox-${String(i % OTHER_INBOXES).padStart(3, '0')}`;
    const j = Math.floor(i / 10);
    const messageId = `seed-${i}@bench.test`;
    const prefix = i.toString(16).padStart(24, '0');
    const hasAttachment = j % SEED_SHAPE.attachmentEvery === 0;
    const word = j % 20 === 0 ? SEED_SHAPE.rareSubjectWord : 'update';
    const subject = `Your ${word} number ${i} from Bench Corp`;
    const body = `Hello,\n\nthis is seeded message ${i}. Nothing to see here, only rows to page through.\n\nBench Corp\n`;
    const htmlBody = j % 2 === 0 ? `<p>Hello,</p><p>this is seeded message ${i}.</p>` : '';
    return {
        messageId,
        sourceId: messageId,
        inbox,
        sender: `user${j % SEED_SHAPE.senders}@sender${j % 7}.example`,
        senderName: '',
        recipient: `${inbox}@bench.test`,
        subject,
        body,
        htmlBody,
        receivedAt: SEED_EPOCH_MS + Math.floor(i / SEED_SHAPE.rowsPerSecond) * 1000,
        rawKey: `${prefix}/raw.eml`,
        rawSize: 1500,
        rawSha256: 'a'.repeat(64),
        attachments: hasAttachment ? [{ filename: '0-report.pdf', contentType: 'application/pdf', size: 52_000, blobKey: `${prefix}/att/0` }] : [],
        ...linksAndCodesOf({ subject, body, htmlBody }),
        tags: [],
        // Last, where the store puts it: verifySeed compares the JSON text.
        seen: false
    };
}

/** The row saveEmails() would write for a record (its searched text as ingest folds it). */
export function emailRow(seq: number, r: EmailRecord): Record<string, unknown> {
    const searchText = searchTextOf(r.body, htmlTextOrNothing(r.htmlBody));
    return { seq, ...toInsertRow({ record: r, searchText, sourceHash: sha256Hex(r.sourceId), messageHash: sha256Hex(r.messageId) }) };
}

/** Rows of another shape than seedRecord()'s (bench/search.ts: long bodies). */
export interface SeedShape {
    /** Row i's record (seq i + 1). */
    recordOf(i: number): EmailRecord;
    /** Rows per INSERT statement (long rows: fewer, to keep a statement a few MB). */
    rowsPerInsert?: number;
}

/**
 * Writes rows 0..count-1 (seq = i + 1) into a migrated, empty store's database (the
 * inboxes summary follows through its triggers, SQLite's search index through the
 * statement the save path runs). `progress` hears how many rows are in; `inboxes`
 * spreads the rows as seedRecord() says; `shape` gives rows of its own.
 */
export async function seedRecords(store: RecordStore, knex: Knex, count: number, progress?: (rows: number) => void, inboxes?: number, shape?: SeedShape): Promise<void> {
    await store.migrate();
    const existing = await knex('emails').count({ n: '*' }).first() as { n: number | string };
    if (Number(existing.n) !== 0) {
        throw new Error('seedRecords needs an empty emails table');
    }

    const pg = knex.client.config.client === 'pg';
    const indexed = !pg && await hasSqliteSearchIndex(knex);
    for (let start = 0; start < count;) {
        await knex.transaction(async (trx) => {
            for (let s = 0; s < INSERTS_PER_TRANSACTION && start < count; s++) {
                const end = Math.min(count, start + (shape?.rowsPerInsert ?? (pg ? ROWS_PER_INSERT.pg : ROWS_PER_INSERT.sqlite)));
                const emails: Record<string, unknown>[] = [];
                const blobs: Record<string, unknown>[] = [];
                for (let i = start; i < end; i++) {
                    const record = shape ? shape.recordOf(i) : seedRecord(i, inboxes);
                    emails.push(emailRow(i + 1, record));
                    for (const key of [record.rawKey, ...record.attachments.map((a) => a.blobKey)]) {
                        blobs.push({ email_seq: i + 1, blob_key: key });
                    }
                }

                await trx('emails').insert(emails);
                await trx('email_blobs').insert(blobs);
                if (indexed) {
                    // What the save path adds to SQLite's search index for the rows it writes.
                    await trx.raw(`INSERT INTO ${SEARCH_INDEX_TABLE} (rowid, document) SELECT seq, ${SQLITE_DOCUMENT_SQL} FROM emails WHERE seq > ? AND seq <= ?`, [start, end]);
                }

                start = end;
            }
        });
        progress?.(start);
    }

    if (pg) {
        // Explicit seq values bypass the sequence: move it past them, as saveEmails() would have.
        await knex.raw(`SELECT setval(pg_get_serial_sequence('emails', 'seq'), (SELECT max(seq) FROM emails))`);
        // Autovacuum would vacuum and analyze the new rows within minutes (statistics,
        // visibility map, hint bits); do it now so the measurements neither race it nor
        // pay for the first reads of a million fresh rows.
        await knex.raw('VACUUM ANALYZE emails');
        await knex.raw('VACUUM ANALYZE email_blobs');
        await knex.raw('VACUUM ANALYZE inboxes');
    }
}

/** Reads seeded rows back through the store; throws when they do not read as the records written. */
export async function verifySeed(store: RecordStore, count: number): Promise<void> {
    for (const i of [0, 1, Math.floor(count / 2), count - 1]) {
        const expected = seedRecord(i);
        const got = await store.getEmail(expected.messageId);
        if (JSON.stringify(got) !== JSON.stringify(expected)) {
            throw new Error(`seeded row ${i} reads back as ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
        }
    }

    const page = await store.listEmails({ inbox: BIG_INBOX, limit: 2 });
    const newestBig = Math.floor((count - 1) / 10) * 10;
    if (page.records[0]?.messageId !== seedRecord(newestBig).messageId) {
        throw new Error(`the newest record of ${BIG_INBOX} lists as ${page.records[0]?.messageId}, expected ${seedRecord(newestBig).messageId}`);
    }
}
