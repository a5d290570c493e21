import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import * as Sqlite3 from 'sqlite3';
import { isInboxCaptureError } from '../../../lib/errors';
import { deriveMessageId, sha256Hex } from '../../../lib/identity/ids';
import { createKnexRecordStore } from '../../../lib/record-store/knex-record-store';
import { openPostgresKnex } from '../../../lib/record-store/postgres/postgres-knex';
import type { RecordStore, SaveResult } from '../../../lib/record-store/record-store';
import { openSqliteKnex } from '../../../lib/sqlite/knex';
import type { EmailDraft, EmailRecord } from '../../../lib/types';
import { concurrently } from '../../helpers/concurrently';
import { draft } from '../../helpers/email-draft';
import { startPostgres, type PostgresServer } from '../../helpers/postgres';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** A store on its own Knex, counting the transactions it commits and the statements that fail. */
interface CountedStore {
    knex: Knex;
    store: RecordStore;
    /** COMMITs sent since the store was opened (or since the last reset). */
    commits(): number;
    resetCommits(): void;
    /** Every statement that failed, with the driver's code. */
    queryErrors: { code: string | undefined; message: string }[];
}

async function counted(knex: Knex): Promise<CountedStore> {
    let commits = 0;
    const queryErrors: CountedStore['queryErrors'] = [];
    // Saves on a SQLite file run on the store's own prepared connection, not through Knex.
    const store = createKnexRecordStore({
        knex,
        destroyKnexOnClose: true,
        observeBatchWriter: {
            commit: () => void commits++,
            error: (err) => void queryErrors.push({ code: (err as { code?: string }).code, message: (err as Error).message })
        }
    });
    await store.migrate();
    knex.on('query', (q: { sql: string }) => {
        if (/^COMMIT\b/i.test(q.sql)) {
            commits++;
        }
    });
    knex.on('query-error', (err: { code?: string; message: string }) => {
        queryErrors.push({ code: err.code, message: err.message });
    });
    return { knex, store, commits: () => commits, resetCommits: () => void (commits = 0), queryErrors };
}

/**
 * The advisory lock key the store takes for a name: 64 bits of its SHA-256, as a
 * signed bigint. Every instance, of every version, must derive the same one.
 */
function advisoryKey(name: string): string {
    return BigInt.asIntN(64, BigInt(`0x${sha256Hex(name).slice(0, 16)}`)).toString();
}

/** A tag no other run shares, so source ids and inboxes are fresh. */
function tag(): string {
    return randomBytes(4).toString('hex');
}

/** Settles every promise; values and errors in call order. */
function settleAll<T>(promises: Promise<T>[]): Promise<PromiseSettledResult<T>[]> {
    return Promise.allSettled(promises);
}

function valueOf<T>(result: PromiseSettledResult<T> | undefined): T {
    if (result?.status !== 'fulfilled') {
        throw new Error(`expected a fulfilled result, got ${result?.status}: ${String((result as PromiseRejectedResult | undefined)?.reason)}`);
    }

    return result.value;
}

function reasonOf(result: PromiseSettledResult<unknown> | undefined): Error {
    if (result?.status !== 'rejected') {
        throw new Error(`expected a rejected result, got ${result?.status}`);
    }

    return result.reason as Error;
}

/** Every record of these inboxes, newest first, inbox by inbox. */
async function contents(store: RecordStore, inboxes: string[]): Promise<EmailRecord[]> {
    const all: EmailRecord[] = [];
    for (const inbox of inboxes) {
        all.push(...(await store.listEmails({ inbox, limit: 1000 })).records);
    }

    return all;
}

describe('knex record store group commit', () => {

    describe('saveEmails() on SQLite', () => {
        let dir: string;

        before(async () => {
            dir = await tempDir('group-commit');
        });

        after(async () => {
            await rm(dir, { recursive: true, force: true });
        });

        const open = async (name: string) => counted(openSqliteKnex(join(dir, `${name}.sqlite`)));

        it('stores every concurrent delivery with fewer commits than deliveries', async () => {
            const { store, commits, queryErrors } = await open('many');
            try {
                const run = tag();
                const inboxes = Array.from({ length: 5 }, (_, i) => `many-${run}-${i}`);
                // 40 senders, 5 deliveries each, one after another: like SMTP sessions.
                const drafts = Array.from({ length: 200 }, (_, i) => draft(inboxes[i % inboxes.length]!, i));
                const results = await concurrently(drafts.length, 40, (i) => store.saveEmails([drafts[i]!]));

                expect(results.map((r) => r.saved[0]!.messageId)).to.equal(drafts.map((d) => d.sourceId));
                expect(results.every((r) => r.replaced.length === 0)).to.be.true();
                const stored = await contents(store, inboxes);
                expect(stored.map((r) => r.messageId).sort()).to.equal(drafts.map((d) => d.sourceId).sort());
                expect(await store.getEmail(drafts[123]!.sourceId)).to.equal(results[123]!.saved[0]!);
                const referenced = await store.referencedBlobKeys(drafts.map((d) => d.rawKey));
                expect(referenced.size).to.equal(200);

                // One transaction each would be 200 commits; waiting senders share them.
                expect(commits()).to.be.below(100);
                expect(queryErrors).to.equal([]);
            }
            finally {
                await store.close();
            }
        });

        it('puts at most 64 records in one transaction and gives a larger delivery one of its own', async () => {
            const { store, commits, resetCommits } = await open('cap');
            try {
                const run = tag();
                const singles = Array.from({ length: 200 }, (_, i) => draft(`cap-${run}`, i));
                resetCommits();
                // Called in one tick: they all wait for the first batch's turn together.
                await Promise.all(singles.map((d) => store.saveEmails([d])));
                // 64 + 64 + 64 + 8.
                expect(commits()).to.equal(4);

                const source = `wide-${run}@example.test`;
                // More copies than one lookup or one INSERT statement takes.
                const wide = Array.from({ length: 150 }, (_, i) => draft(`wide-${run}-${i}`, i, { sourceId: source }));
                const after = Array.from({ length: 10 }, (_, i) => draft(`cap-${run}`, 1000 + i));
                resetCommits();
                const [wideResult] = await Promise.all([store.saveEmails(wide), ...after.map((d) => store.saveEmails([d]))]);
                expect(commits()).to.equal(2);
                expect(wideResult.saved.map((r) => r.messageId)).to.equal(wide.map((d) => deriveMessageId(source, d.inbox)));
                expect((await store.listEmails({ inbox: `cap-${run}`, limit: 1000 })).records).to.have.length(210);
            }
            finally {
                await store.close();
            }
        });

        it('stores a record with more blob keys than one INSERT takes', async () => {
            const { store } = await open('many-blobs');
            try {
                // SQLite takes at most 500 rows in one multi-row INSERT (a compound SELECT).
                const attachments = Array.from({ length: 600 }, (_, i) => ({ filename: `${i}.txt`, contentType: 'text/plain', size: i, blobKey: `att-${tag()}-${i}` }));
                const d = draft(`blobs-${tag()}`, 1, { attachments });
                const [saved] = (await store.saveEmails([d])).saved;
                expect(await store.getEmail(saved!.messageId)).to.equal(saved!);
                const keys = [d.rawKey, ...attachments.map((a) => a.blobKey)];
                expect((await store.referencedBlobKeys(keys)).size).to.equal(601);
            }
            finally {
                await store.close();
            }
        });

        it('fails a poisoned delivery alone while the rest of its batch commits', async () => {
            const { knex, store, commits, resetCommits } = await open('poison');
            try {
                await knex.raw(`CREATE TRIGGER poison BEFORE INSERT ON emails WHEN NEW.subject = 'poison' BEGIN SELECT RAISE(ABORT, 'poison'); END`);
                const run = tag();
                const inbox = `poison-${run}`;
                const source = `multi-${run}@example.test`;
                const deliveries: EmailDraft[][] = [
                    [draft(inbox, 1)],
                    [draft(inbox, 2)],
                    [draft(inbox, 3, { subject: 'poison' })],
                    [draft(inbox, 4)],
                    // A delivery's copies stay together: the healthy copy goes with the poisoned one.
                    [draft(`${inbox}-a`, 5, { sourceId: source }), draft(`${inbox}-b`, 6, { sourceId: source, subject: 'poison' })],
                    [draft(inbox, 7)]
                ];

                resetCommits();
                const results = await settleAll(deliveries.map((d) => store.saveEmails(d)));
                // One transaction held them all.
                expect(commits()).to.equal(1);

                for (const i of [2, 4]) {
                    const err = reasonOf(results[i]);
                    expect(err.message).to.contain('poison');
                    expect(isInboxCaptureError(err)).to.be.false();
                }

                const good = [0, 1, 3, 5];
                for (const i of good) {
                    const saved = valueOf(results[i]).saved[0]!;
                    expect(saved.messageId).to.equal(deliveries[i]![0]!.sourceId);
                    expect(await store.getEmail(saved.messageId)).to.equal(saved);
                }

                expect((await store.listEmails({ inbox, limit: 100 })).records.map((r) => r.subject).sort())
                    .to.equal(good.map((i) => deliveries[i]![0]!.subject).sort());
                expect((await store.listEmails({ inbox: `${inbox}-a`, limit: 100 })).records).to.equal([]);
                expect(await store.inboxVersion(`${inbox}-a`)).to.equal(0);
                const poisonedKeys = [deliveries[2]![0]!.rawKey, ...deliveries[4]!.map((d) => d.rawKey)];
                expect([...await store.referencedBlobKeys(poisonedKeys)]).to.equal([]);
                const goodKeys = good.map((i) => deliveries[i]![0]!.rawKey);
                expect([...await store.referencedBlobKeys(goodKeys)].sort()).to.equal(goodKeys.sort());
            }
            finally {
                await store.close();
            }
        });

        it('applies the deliveries of one batch in arrival order, exactly as one after another', async () => {
            const batched = await open('order-batched');
            const oneByOne = await open('order-one-by-one');
            try {
                const run = tag();
                const [a, b, c] = ['a', 'b', 'c'].map((x) => `order-${run}-${x}`) as [string, string, string];
                const [s1, s2, s3, s4] = [1, 2, 3, 4].map((n) => `s${n}-${run}@example.test`) as [string, string, string, string];
                const stored: EmailDraft[][] = [
                    [draft(a, 1, { sourceId: s1, subject: 'stored s1' })],
                    // Holds the id s4's copy in b would derive.
                    [draft(c, 2, { sourceId: deriveMessageId(s4, b), subject: 'squatter' })]
                ];
                const deliveries: EmailDraft[][] = [
                    [draft(a, 10, { sourceId: s1, subject: 'D0 replaces the stored s1' })],
                    [draft(a, 11, { sourceId: s1, subject: 'D1 replaces D0' })],
                    [draft(a, 12, { sourceId: s2, subject: 'D2 new, bare id' })],
                    [draft(b, 13, { sourceId: s2, subject: 'D3 bare id held by D2' })],
                    [draft(a, 14, { sourceId: s3, subject: 'D4 copy a' }), draft(b, 15, { sourceId: s3, subject: 'D4 copy b' })],
                    [draft(a, 16, { sourceId: s4, subject: 'D5 copy a' }), draft(b, 17, { sourceId: s4, subject: 'D5 copy b, derived id held' })],
                    [draft(a, 18, { sourceId: s3, subject: 'D6 replaces D4 copy a' })],
                    [draft(c, 19, { sourceId: deriveMessageId(s2, b), subject: 'D7 bare id is D3\'s derived id' })],
                    [draft(b, 20, { sourceId: s2, subject: 'D8 replaces D3' })]
                ];

                const storedResults: SaveResult[][] = [[], []];
                for (const [i, { store }] of [batched, oneByOne].entries()) {
                    for (const d of stored) {
                        storedResults[i]!.push(await store.saveEmails(d));
                    }
                }

                const versionBefore = await batched.store.inboxVersion(a);
                batched.resetCommits();
                const together = await Promise.all(deliveries.map((d) => batched.store.saveEmails(d)));
                expect(batched.commits()).to.equal(1);
                // Planned right the first time: no statement failed and had to be redone one by one.
                expect(batched.queryErrors).to.equal([]);
                const apart: SaveResult[] = [];
                for (const d of deliveries) {
                    apart.push(await oneByOne.store.saveEmails(d));
                }

                expect(together).to.equal(apart);

                const [storedS1] = storedResults[0]![0]!.saved;
                const ids = together.map((r) => r.saved.map((s) => s.messageId));
                expect(ids).to.equal([
                    [s1],
                    [s1],
                    [s2],
                    [deriveMessageId(s2, b)],
                    [deriveMessageId(s3, a), deriveMessageId(s3, b)],
                    [deriveMessageId(s4, a), deriveMessageId(deriveMessageId(s4, b), b)],
                    [deriveMessageId(s3, a)],
                    [deriveMessageId(deriveMessageId(s2, b), c)],
                    [deriveMessageId(s2, b)]
                ]);
                expect(together[0]!.replaced).to.equal([storedS1!]);
                expect(together[1]!.replaced).to.equal(together[0]!.saved);
                expect(together[6]!.replaced).to.equal([together[4]!.saved[0]!]);
                expect(together[8]!.replaced).to.equal(together[3]!.saved);
                expect(together.flatMap((r) => r.replaced)).to.have.length(4);
                // A replacement is a new row: the inbox's version grows.
                expect(await batched.store.inboxVersion(a)).to.be.above(versionBefore);

                const inboxes = [a, b, c];
                const final = await contents(batched.store, inboxes);
                expect(final).to.equal(await contents(oneByOne.store, inboxes));
                expect(final.map((r) => r.subject).sort()).to.equal([
                    'D1 replaces D0', 'D2 new, bare id', 'D4 copy b', 'D5 copy a', 'D5 copy b, derived id held',
                    'D6 replaces D4 copy a', 'D7 bare id is D3\'s derived id', 'D8 replaces D3', 'squatter'
                ]);

                // Only the survivors' blobs are referenced, in both.
                const allKeys = [...stored, ...deliveries].flat().map((d) => d.rawKey);
                const survivors = final.map((r) => r.rawKey).sort();
                expect([...await batched.store.referencedBlobKeys(allKeys)].sort()).to.equal(survivors);
                expect([...await oneByOne.store.referencedBlobKeys(allKeys)].sort()).to.equal(survivors);
            }
            finally {
                await batched.store.close();
                await oneByOne.store.close();
            }
        });

        it('keeps saves and other writes in the order they were called', async () => {
            const { store } = await open('writes');
            try {
                const run = tag();
                const inbox = `writes-${run}`;
                const old = draft(inbox, 1, { subject: 'old' });
                const [storedOld] = (await store.saveEmails([old])).saved;

                // One tick: a save queues a batch, a delete follows, then a save that must
                // not join the batch queued before the delete.
                const first = draft(inbox, 2);
                const fresh = draft(inbox, 3, { sourceId: old.sourceId, subject: 'fresh' });
                const gone = draft(inbox, 4);
                const [savedFirst, deleted, savedFresh, savedGone, deletedGone] = await Promise.all([
                    store.saveEmails([first]),
                    store.deleteEmail(old.sourceId),
                    store.saveEmails([fresh]),
                    store.saveEmails([gone]),
                    store.deleteEmail(gone.sourceId)
                ]);

                expect(savedFirst.saved[0]!.messageId).to.equal(first.sourceId);
                expect(deleted).to.equal(storedOld!);
                expect(savedFresh.replaced).to.equal([]);
                expect(deletedGone).to.equal(savedGone.saved[0]!);
                expect((await store.listEmails({ inbox, limit: 10 })).records.map((r) => r.subject).sort())
                    .to.equal([first.subject, 'fresh'].sort());
            }
            finally {
                await store.close();
            }
        });

        it('answers RECORD_STORE_UNAVAILABLE to every delivery of a batch that cannot commit, and stores none', async () => {
            const filename = join(dir, 'locked.sqlite');
            // Only "locked" matters here: a short wait for the lock, not the default's seconds a try.
            const { store } = await counted(openSqliteKnex(filename, { busyTimeoutMs: 50 }));
            const other = await new Promise<Sqlite3.Database>((resolve, reject) => {
                const db: Sqlite3.Database = new Sqlite3.Database(filename, (err) => (err ? reject(err) : resolve(db)));
            });
            const exec = (sql: string) => new Promise<void>((resolve, reject) => other.exec(sql, (err) => (err ? reject(err) : resolve())));
            try {
                const inbox = `locked-${tag()}`;
                const drafts = Array.from({ length: 5 }, (_, i) => draft(inbox, i));
                // Another process' write transaction, held past every retry.
                await exec('BEGIN IMMEDIATE');
                let results: PromiseSettledResult<SaveResult>[];
                try {
                    results = await settleAll(drafts.map((d) => store.saveEmails([d])));
                }
                finally {
                    await exec('ROLLBACK');
                }

                for (const result of results) {
                    expect(isInboxCaptureError(reasonOf(result), 'RECORD_STORE_UNAVAILABLE')).to.be.true();
                }

                expect((await store.listEmails({ inbox, limit: 10 })).records).to.equal([]);
                expect((await store.saveEmails([drafts[0]!])).saved[0]!.messageId).to.equal(drafts[0]!.sourceId);
            }
            finally {
                await new Promise<void>((resolve) => other.close(() => resolve()));
                await store.close();
            }
        });
    });

    describe('saveEmails() on Postgres', () => {
        let server: PostgresServer;

        before(async () => {
            server = await startPostgres();
        });

        after(async () => {
            await server.stop();
        });

        it('runs batches of two instances on one database side by side without deadlocks and keeps ids right', async () => {
            const url = await server.createDatabase();
            const instances = [await counted(openPostgresKnex(url)), await counted(openPostgresKnex(url))];
            try {
                const run = tag();
                const inboxes = Array.from({ length: 4 }, (_, i) => `pg-${run}-${i}`);
                const sources = Array.from({ length: 12 }, (_, i) => `pg${i}-${run}@example.test`);
                // A fixed pseudo-random sequence: the same overlap of inboxes and messages every run.
                let seed = 12345;
                const next = (n: number) => {
                    seed = (seed * 1103515245 + 12345) % 2 ** 31;
                    return seed % n;
                };

                const plans = instances.map(() => Array.from({ length: 120 }, (_, i) => {
                    const source = sources[next(sources.length)]!;
                    const first = inboxes[next(inboxes.length)]!;
                    const second = inboxes[(inboxes.indexOf(first) + 1 + next(inboxes.length - 1)) % inboxes.length]!;
                    // One in four goes to two inboxes at once.
                    const targets = next(4) === 0 ? [first, second] : [first];
                    return targets.map((inbox, j) => draft(inbox, i * 2 + j, { sourceId: source }));
                }));

                const results = await Promise.all(instances.map(({ store }, k) =>
                    concurrently(plans[k]!.length, 16, (i) => store.saveEmails(plans[k]![i]!))));

                for (const { queryErrors, commits } of instances) {
                    // No deadlock (40P01) or unique race (23505) was even retried.
                    expect(queryErrors).to.equal([]);
                    expect(commits()).to.be.below(120);
                }

                // Every save of one (inbox, message) got the id the stored copy has:
                // replacements keep the id, and nothing was deleted.
                const final = await contents(instances[0]!.store, inboxes);
                const idOf = new Map(final.map((r) => [`${r.inbox} ${r.sourceId}`, r.messageId]));
                const saved = results.flat().flatMap((r) => r.saved);
                for (const record of saved) {
                    expect(record.messageId).to.equal(idOf.get(`${record.inbox} ${record.sourceId}`) ?? 'none');
                    expect([record.sourceId, deriveMessageId(record.sourceId, record.inbox)]).to.include(record.messageId);
                }

                expect(final).to.have.length(idOf.size);
                expect(new Set(saved.map((r) => `${r.inbox} ${r.sourceId}`)).size).to.equal(final.length);
                // Every save but the first of each (inbox, message) replaced exactly one copy.
                expect(results.flat().flatMap((r) => r.replaced)).to.have.length(saved.length - final.length);
                const rawKeys = plans.flat(2).map((d) => d.rawKey);
                expect([...await instances[0]!.store.referencedBlobKeys(rawKeys)].sort()).to.equal(final.map((r) => r.rawKey).sort());
            }
            finally {
                await Promise.all(instances.map(({ store }) => store.close()));
            }
        });

        it('takes the locks of a whole batch in one global order, so crossing batches of two instances cannot deadlock', async () => {
            const url = await server.createDatabase();
            const [one, two] = [await counted(openPostgresKnex(url)), await counted(openPostgresKnex(url))];
            const admin = openPostgresKnex(url);
            const lock = await admin.client.acquireConnection() as { query(sql: string, values?: unknown[]): Promise<unknown> };
            try {
                const run = tag();
                const [x, y] = [`cross-${run}-x`, `cross-${run}-y`];
                const waiting = async () => Number((await admin.raw(`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rows[0].n);
                const until = async (n: number) => {
                    for (let tries = 0; await waiting() !== n; tries++) {
                        expect(tries, `${n} batches never waited on the lock`).to.be.below(500);
                        await new Promise((resolve) => setTimeout(resolve, 10));
                    }
                };

                // Inbox x is busy (the key the store derives for it), so both batches wait there.
                await lock.query('SELECT pg_advisory_lock($1::bigint)', [advisoryKey(`inbox\n${x}`)]);
                // Listed x first, then y...
                const second = Promise.all([two.store.saveEmails([draft(x, 1)]), two.store.saveEmails([draft(y, 2)])]);
                await until(1);
                // ... and y first, then x: taken in the order listed, this one would hold y
                // while the other, once it has x, waited for y.
                const first = Promise.all([one.store.saveEmails([draft(y, 3)]), one.store.saveEmails([draft(x, 4)])]);
                await until(2);
                await lock.query('SELECT pg_advisory_unlock($1::bigint)', [advisoryKey(`inbox\n${x}`)]);

                await Promise.all([first, second]);
                expect(one.queryErrors).to.equal([]);
                expect(two.queryErrors).to.equal([]);
                expect(one.commits()).to.equal(1);
                expect(two.commits()).to.equal(1);
                expect((await one.store.listEmails({ inbox: x, limit: 10 })).records).to.have.length(2);
                expect((await one.store.listEmails({ inbox: y, limit: 10 })).records).to.have.length(2);
            }
            finally {
                admin.client.releaseConnection(lock);
                await admin.destroy();
                await one.store.close();
                await two.store.close();
            }
        });

        it('fails a poisoned delivery alone and notifies only the inboxes that received mail', async () => {
            const url = await server.createDatabase();
            const { knex, store, commits, resetCommits } = await counted(openPostgresKnex(url));
            const heard: string[] = [];
            let unwatch: (() => Promise<void>) | undefined;
            try {
                await knex.raw(`
                    CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF NEW.subject = 'poison' THEN RAISE EXCEPTION 'poison'; END IF;
                        RETURN NEW;
                    END $$`);
                await knex.raw('CREATE TRIGGER poison BEFORE INSERT ON emails FOR EACH ROW EXECUTE FUNCTION poison()');
                let markerHeard: () => void = () => undefined;
                const marker = new Promise<void>((resolve) => {
                    markerHeard = resolve;
                });
                unwatch = await store.watchInboxes!((inbox) => {
                    heard.push(inbox);
                    if (inbox === 'pg-marker') {
                        markerHeard();
                    }
                });

                const deliveries = [
                    [draft('pg-ok-1', 1)],
                    [draft('pg-poison', 2, { subject: 'poison' })],
                    [draft('pg-ok-2', 3)],
                    [draft('pg-ok-1', 4)]
                ];
                resetCommits();
                const results = await settleAll(deliveries.map((d) => store.saveEmails(d)));
                expect(commits()).to.equal(1);
                expect(reasonOf(results[1]).message).to.contain('poison');
                for (const i of [0, 2, 3]) {
                    const saved = valueOf(results[i]).saved[0]!;
                    expect(await store.getEmail(saved.messageId)).to.equal(saved);
                }

                expect((await store.listEmails({ inbox: 'pg-poison', limit: 10 })).records).to.equal([]);

                // NOTIFYs arrive in commit order: the marker's comes after the batch's.
                await store.saveEmails([draft('pg-marker', 5)]);
                await marker;
                expect(heard).to.equal(['pg-ok-1', 'pg-ok-2', 'pg-marker']);
            }
            finally {
                await unwatch?.();
                await store.close();
            }
        });
    });
});
