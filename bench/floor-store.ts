/**
 * The floor of a durable, indexed save with our libraries: what the least a small message
 * needs on this machine, for the benchmarks to set ours beside. One thread: mailparser's
 * simpleParser on the caller's thread, then node-sqlite3 (WAL, synchronous=FULL) with group
 * commit: whatever arrived while the last batch committed is written in one transaction of
 * one multi-row INSERT per table (the email rows, their raw bytes, the body's contentless
 * trigram FTS5 rows), and every caller of the batch returns after its COMMIT. No links,
 * codes, tags, blobs outside SQLite, worker threads or Knex: those are what ours adds.
 */
import * as sqlite3 from 'sqlite3';
import { simpleParser, type ParsedMail } from 'mailparser';

/** Rows per transaction at most: 9 parameters a row stays far under SQLite's 32,766. */
const MAX_BATCH = 256;

/** The floor's store, opened on one SQLite file. */
export interface FloorStore {
    /** Parses `raw` and resolves once it is committed and fsync'd. */
    save(raw: Buffer, recipient: string): Promise<void>;
    /** save() of a message parsed already: the store's share alone. */
    saveParsed(raw: Buffer, parsed: ParsedMail, recipient: string): Promise<void>;
    /** Emails committed so far. */
    readonly count: number;
    /** Transactions committed so far (emails ÷ commits = the mean batch). */
    readonly commits: number;
    close(): Promise<void>;
}

interface Pending {
    row: unknown[];
    body: string;
    raw: Buffer;
    resolve: () => void;
    reject: (err: unknown) => void;
}

function run(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<void> {
    return new Promise((resolve, reject) => db.run(sql, params, (err) => (err ? reject(err) : resolve())));
}

function exec(db: sqlite3.Database, sql: string): Promise<void> {
    return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

/** `(?, ?, …), (…)`: `rows` groups of `columns` placeholders. */
function placeholders(rows: number, columns: number): string {
    const one = `(${new Array<string>(columns).fill('?').join(', ')})`;
    return new Array<string>(rows).fill(one).join(', ');
}

/** Opens (creating) the floor's SQLite file; `index: false` leaves the FTS5 table out. */
export async function openFloorStore(filename: string, options: { index?: boolean } = {}): Promise<FloorStore> {
    const index = options.index !== false;
    const db = await new Promise<sqlite3.Database>((resolve, reject) => {
        const opened = new sqlite3.Database(filename, (err) => (err ? reject(err) : resolve(opened)));
    });
    await exec(db, `PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
        CREATE TABLE emails (seq INTEGER PRIMARY KEY, message_id TEXT NOT NULL, inbox TEXT NOT NULL, recipient TEXT NOT NULL,
            sender TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL, html TEXT, received_at INTEGER NOT NULL);
        CREATE INDEX emails_inbox ON emails (inbox, seq);
        CREATE TABLE raws (seq INTEGER PRIMARY KEY, bytes BLOB NOT NULL);
        ${index ? 'CREATE VIRTUAL TABLE bodies USING fts5(document, tokenize = \'trigram case_sensitive 1\', content = \'\', contentless_delete = 1, detail = none);' : ''}`);

    let queue: Pending[] = [];
    let writing = false;
    let seq = 0;
    let count = 0;
    let commits = 0;

    const writeBatch = async (batch: Pending[]): Promise<void> => {
        const first = seq + 1;
        seq += batch.length;
        await run(db, 'BEGIN');
        try {
            await run(db, `INSERT INTO emails VALUES ${placeholders(batch.length, 9)}`, batch.flatMap((p, i) => [first + i, ...p.row]));
            await run(db, `INSERT INTO raws VALUES ${placeholders(batch.length, 2)}`, batch.flatMap((p, i) => [first + i, p.raw]));
            if (index) {
                await run(db, `INSERT INTO bodies (rowid, document) VALUES ${placeholders(batch.length, 2)}`, batch.flatMap((p, i) => [first + i, p.body]));
            }

            await run(db, 'COMMIT');
        }
        catch (err) {
            await run(db, 'ROLLBACK').catch(() => undefined);
            throw err;
        }
    };

    const drain = async (): Promise<void> => {
        writing = true;
        while (queue.length > 0) {
            const batch = queue.slice(0, MAX_BATCH);
            queue = queue.slice(batch.length);
            try {
                await writeBatch(batch);
                count += batch.length;
                commits++;
                batch.forEach((p) => p.resolve());
            }
            catch (err) {
                batch.forEach((p) => p.reject(err));
            }
        }

        writing = false;
    };

    const saveParsed = async (raw: Buffer, parsed: ParsedMail, recipient: string): Promise<void> => {
        const from = parsed.from?.value[0]?.address ?? '';
        const inbox = recipient.slice(0, recipient.indexOf('@')).toLowerCase();
        const body = parsed.text ?? '';
        const row = [parsed.messageId ?? '', inbox, recipient, from, parsed.subject ?? '', body, parsed.html || null, Date.now()];
        await new Promise<void>((resolve, reject) => {
            queue.push({ row, body: body.toLowerCase(), raw, resolve, reject });
            if (!writing) {
                void drain();
            }
        });
    };

    return {
        save: async (raw, recipient) => saveParsed(raw, await simpleParser(raw), recipient),
        saveParsed,
        get count() {
            return count;
        },
        get commits() {
            return commits;
        },
        close: () => new Promise<void>((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())))
    };
}
