/**
 * The floor of a durable, indexed save with our libraries: what the least a small message
 * needs on this machine, for the benchmarks to set ours beside. One thread: mailparser's
 * simpleParser on the caller's thread, then node-sqlite3 (WAL, synchronous=FULL) with group
 * commit: whatever arrived while the last batch committed is written in one transaction of
 * one multi-row INSERT per table (the email rows, their raw bytes, the body's contentless
 * trigram FTS5 rows), and every caller of the batch returns after its COMMIT. No links,
 * codes, tags, blobs outside SQLite, worker threads or Knex: those are what ours adds.
 *
 * `obligations: true` is the same floor holding what the API's routes and earlier targets
 * make a store keep for each message (bench/README.md, "The floor with our storage
 * obligations"): the Message-ID's digest, unique (GET one email, messageId unique); the
 * listing order (inbox, receivedAt, id) and receivedAt alone (retention); the inbox summary
 * (GET /v1/inboxes at 10,000 inboxes) kept by a trigger, with its recency index; seqs never
 * reused (cursors); the raw message as a blob row under a key that copies share, with its
 * link row and the link's index (deletes of shared blobs); the folded search text beside
 * the body, the HTML's text with it (search's exact check), and an index document of every
 * searched field.
 */
import { createHash, randomBytes } from 'node:crypto';
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
    /** The raw message's blob key ('' without the blob obligation). */
    key: string;
    /** The index document: the folded body, or with obligations every searched field. */
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

/** What ours keeps for each message beyond the floor (above), one name each. */
export const OBLIGATIONS = ['message-id', 'order', 'received-at', 'summary', 'autoincrement', 'blob', 'search-text'] as const;
export type Obligation = typeof OBLIGATIONS[number];

// The floor's tables; with obligations, the email row also holds the Message-ID's digest, the
// searched text and the raw blob's key (empty where that obligation is left out).
function schemaSql(kept: ReadonlySet<Obligation>, withObligations: boolean): string {
    if (!withObligations) {
        return `CREATE TABLE emails (seq INTEGER PRIMARY KEY, message_id TEXT NOT NULL, inbox TEXT NOT NULL, recipient TEXT NOT NULL,
            sender TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL, html TEXT, received_at INTEGER NOT NULL);
        CREATE INDEX emails_inbox ON emails (inbox, seq);
        CREATE TABLE raws (seq INTEGER PRIMARY KEY, bytes BLOB NOT NULL);`;
    }

    return [
        `CREATE TABLE emails (seq INTEGER PRIMARY KEY${kept.has('autoincrement') ? ' AUTOINCREMENT' : ''}, message_id TEXT NOT NULL, inbox TEXT NOT NULL,
            recipient TEXT NOT NULL, sender TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL, html TEXT, received_at INTEGER NOT NULL,
            message_id_hash TEXT NOT NULL, body_folded TEXT NOT NULL, raw_key TEXT NOT NULL)`,
        kept.has('message-id') ? 'CREATE UNIQUE INDEX emails_message_id_hash ON emails (message_id_hash)' : '',
        kept.has('order') ? 'CREATE INDEX emails_inbox_order ON emails (inbox, received_at, message_id)' : 'CREATE INDEX emails_inbox ON emails (inbox, seq)',
        kept.has('received-at') ? 'CREATE INDEX emails_received_at ON emails (received_at)' : '',
        kept.has('summary') ? `CREATE TABLE inboxes (name TEXT PRIMARY KEY, count INTEGER NOT NULL, last_received_at INTEGER NOT NULL);
        CREATE INDEX inboxes_recent ON inboxes (last_received_at DESC, name);
        CREATE TRIGGER emails_inbox_summary AFTER INSERT ON emails BEGIN
            INSERT INTO inboxes (name, count, last_received_at) VALUES (NEW.inbox, 1, NEW.received_at)
            ON CONFLICT (name) DO UPDATE SET count = count + 1, last_received_at = max(last_received_at, excluded.last_received_at);
        END` : '',
        kept.has('blob') ? `CREATE TABLE blobs (key TEXT PRIMARY KEY, content BLOB NOT NULL);
        CREATE TABLE email_blobs (email_seq INTEGER NOT NULL, blob_key TEXT NOT NULL, PRIMARY KEY (email_seq, blob_key));
        CREATE INDEX email_blobs_blob_key ON email_blobs (blob_key)` : 'CREATE TABLE raws (seq INTEGER PRIMARY KEY, bytes BLOB NOT NULL)'
    ].filter(Boolean).join(';\n') + ';';
}

/**
 * Opens (creating) the floor's SQLite file; `index: false` leaves the FTS5 table out,
 * `obligations` adds what ours must keep for each message (above): `true` all of it, or
 * the ones named (a probe of what each costs: floor-obligations.ts).
 */
export async function openFloorStore(filename: string, options: { index?: boolean; obligations?: boolean | readonly Obligation[] } = {}): Promise<FloorStore> {
    const index = options.index !== false;
    const obligations = options.obligations !== undefined && options.obligations !== false;
    const kept = new Set<Obligation>(options.obligations === true ? OBLIGATIONS : options.obligations || []);
    const db = await new Promise<sqlite3.Database>((resolve, reject) => {
        const opened = new sqlite3.Database(filename, (err) => (err ? reject(err) : resolve(opened)));
    });
    await exec(db, `PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
        ${schemaSql(kept, obligations)}
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
            await run(db, `INSERT INTO emails VALUES ${placeholders(batch.length, obligations ? 12 : 9)}`, batch.flatMap((p, i) => [first + i, ...p.row]));
            if (kept.has('blob')) {
                await run(db, `INSERT INTO blobs VALUES ${placeholders(batch.length, 2)}`, batch.flatMap((p) => [p.key, p.raw]));
                await run(db, `INSERT INTO email_blobs VALUES ${placeholders(batch.length, 2)}`, batch.flatMap((p, i) => [first + i, p.key]));
            }
            else {
                await run(db, `INSERT INTO raws VALUES ${placeholders(batch.length, 2)}`, batch.flatMap((p, i) => [first + i, p.raw]));
            }

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
        const messageId = parsed.messageId ?? '';
        const subject = parsed.subject ?? '';
        const row = [messageId, inbox, recipient, from, subject, body, parsed.html || null, Date.now()];
        const folded = body.toLowerCase();
        let key = '';
        let document = folded;
        if (obligations) {
            // As ours: the time, then 64 random bits (new keys land at the index's end).
            key = kept.has('blob') ? `${Date.now().toString(16).padStart(12, '0')}${randomBytes(8).toString('hex')}/raw` : '';
            let searched = '';
            if (kept.has('search-text')) {
                // `body:` searches the text body and the HTML's text (here its tags cut out, the least way).
                searched = parsed.html ? `${folded}\u0003${parsed.html.replace(/<[^>]*>/g, ' ').toLowerCase()}` : folded;
                // The document holds every searched field, as ours does.
                document = `\u0001${inbox}\u0002${from.toLowerCase()}\u0003${subject.toLowerCase()}\u0003${recipient.toLowerCase()}\u0003${searched}`;
            }

            row.push(kept.has('message-id') ? createHash('sha256').update(messageId).digest('hex') : '', searched, key);
        }

        await new Promise<void>((resolve, reject) => {
            queue.push({ row, key, body: document, raw, resolve, reject });
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
