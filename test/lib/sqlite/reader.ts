import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import { createKnexRecordStore } from '../../../lib/record-store/knex-record-store';
import { openSqliteKnex } from '../../../lib/sqlite/knex';
import { MAX_CACHED_SQL_TEXTS, openSqliteReader, type SqliteReader } from '../../../lib/sqlite/reader';
import * as Sqlite3 from 'sqlite3';
import { draft } from '../../helpers/email-draft';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

interface Row {
    id: number;
    v: string;
}

const SELECT_ONE = 'select id, v from t where id = ? limit 1';

describe('sqlite/reader', () => {

    describe('openSqliteReader()', () => {

        let dir: string;
        let filename: string;
        let writer: Knex;
        let reader: SqliteReader;

        before(async () => {
            dir = await tempDir('sqlite-reader');
            filename = Path.join(dir, 'db.sqlite');
            // Made before the file exists: it opens on first use.
            reader = openSqliteReader(filename);
            writer = openSqliteKnex(filename);
            await writer.schema.createTable('t', (table) => {
                table.integer('id').primary();
                table.text('v').notNullable();
            });
            await writer('t').insert(Array.from({ length: 100 }, (_, i) => ({ id: i, v: `v${i}` })));
        });

        after(async () => {
            await reader?.close();
            await writer?.destroy();
            await Fs.rm(dir, { recursive: true, force: true });
        });

        it('reads what the writer committed, and a later write as soon as it has resolved', async () => {
            expect(await reader.all<Row>(SELECT_ONE, [1])).to.equal([{ id: 1, v: 'v1' }]);
            await writer('t').update({ v: 'changed' }).where('id', 1);
            expect(await reader.all<Row>(SELECT_ONE, [1])).to.equal([{ id: 1, v: 'changed' }]);
            expect(await reader.all<Row>(SELECT_ONE, [1000])).to.equal([]);
        });

        it('reads the committed state while the writer holds a write transaction open', async () => {
            const trx = await writer.transaction();
            try {
                await trx('t').update({ v: 'uncommitted' }).where('id', 2);
                expect(await reader.all<Row>(SELECT_ONE, [2])).to.equal([{ id: 2, v: 'v2' }]);
                await trx.commit();
            }
            catch (err) {
                await trx.rollback();
                throw err;
            }

            expect(await reader.all<Row>(SELECT_ONE, [2])).to.equal([{ id: 2, v: 'uncommitted' }]);
        });

        it('serves many reads at once, each its own answer', async () => {
            const ids = Array.from({ length: 60 }, (_, i) => 10 + (i % 50));
            const rows = await Promise.all(ids.map((id) => reader.all<Row>(SELECT_ONE, [id])));
            expect(rows.map((r) => r[0].v)).to.equal(ids.map((id) => `v${id}`));
        });

        it('never writes, whatever SQL it is given', async () => {
            await expect(reader.all('insert into t (id, v) values (?, ?)', [5000, 'nope'])).to.reject(/readonly|read-only/i);
            await expect(reader.all('delete from t', [])).to.reject(/readonly|read-only/i);
            expect(await writer('t').count({ n: '*' })).to.equal([{ n: 100 }]);
        });

        it('rejects a statement that does not prepare, and keeps serving', async () => {
            await expect(reader.all('select nope from nowhere', [])).to.reject(/no such table/);
            expect(await reader.all<Row>(SELECT_ONE, [3])).to.equal([{ id: 3, v: 'v3' }]);
        });

        it('holds no snapshot between reads, so a checkpoint can empty the write-ahead log', async () => {
            await reader.all<Row>(SELECT_ONE, [4]);
            await Promise.all([5, 6, 7].map((id) => reader.all<Row>(SELECT_ONE, [id])));
            // New frames after the reads: an idle reader still pinned at its snapshot would keep them.
            await writer('t').update({ v: 'after' }).where('id', 4);
            const [result] = await writer.raw('PRAGMA wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number }>;
            expect(result).to.include({ busy: 0, log: 0 });
        });

        it('refuses a file path it cannot share with a writer', () => {
            expect(() => openSqliteReader(':memory:')).to.throw(/database file/);
        });

        it('keeps the statements of at most MAX_CACHED_SQL_TEXTS SQL texts, the least recently used dropped first', async () => {
            const own = openSqliteReader(filename);
            // Counted on the real statements: what the reader finalizes is what it stops keeping.
            const prototype = Sqlite3.Statement.prototype as unknown as { finalize: (...args: unknown[]) => unknown };
            const finalize = prototype.finalize;
            let finalized = 0;
            prototype.finalize = function (this: unknown, ...args: unknown[]) {
                finalized++;
                return finalize.apply(this, args);
            };
            try {
                // Each text its own statement: a comment makes the SQL differ.
                const text = (n: number) => `${SELECT_ONE} -- ${n}`;
                for (let n = 0; n < MAX_CACHED_SQL_TEXTS; n++) {
                    await own.all<Row>(text(n), [1]);
                }

                expect(finalized).to.equal(0);
                // Text 0 used again is the most recent: text 1 goes first.
                await own.all<Row>(text(0), [1]);
                for (let n = MAX_CACHED_SQL_TEXTS; n < MAX_CACHED_SQL_TEXTS + 10; n++) {
                    await own.all<Row>(text(n), [1]);
                }

                expect(finalized).to.equal(10);
                const before = finalized;
                await own.all<Row>(text(0), [1]);
                expect(finalized).to.equal(before);
            }
            finally {
                prototype.finalize = finalize;
                await own.close();
            }
        });

        it('lets the reads in flight finish on close(), then refuses new ones', async () => {
            const own = openSqliteReader(filename);
            expect(await own.all<Row>(SELECT_ONE, [8])).to.have.length(1);
            const inFlight = [9, 10, 11].map((id) => own.all<Row>(SELECT_ONE, [id]));
            await own.close();
            expect((await Promise.all(inFlight)).map((r) => r[0].id)).to.equal([9, 10, 11]);
            await expect(own.all(SELECT_ONE, [1])).to.reject(/closed/);
            // Closing one that never opened is fine.
            await openSqliteReader(filename).close();
        });
    });

    describe('a record store with a reader', () => {

        it('answers getEmail(), listEmails() and inboxVersion() through the reader while its one Knex connection is held by a transaction', async () => {
            const dir = await tempDir('sqlite-reader-store');
            const filename = Path.join(dir, 'db.sqlite');
            const knex = openSqliteKnex(filename);
            const store = createKnexRecordStore({ knex, reader: openSqliteReader(filename), destroyKnexOnClose: true });
            try {
                await store.migrate();
                const saved = draft('reader', 1);
                await store.saveEmails([saved]);
                const record = (await store.listEmails({ inbox: 'reader', limit: 1 })).records[0];

                // Knex's pool has one SQLite connection: a query through Knex would wait for this transaction.
                const trx = await knex.transaction();
                try {
                    const read = store.getEmail(record.messageId);
                    const first = await Promise.race([read, new Promise((resolve) => setTimeout(resolve, 2000, 'waited'))]);
                    expect(first).to.not.equal('waited');
                    expect((first as typeof record).messageId).to.equal(record.messageId);
                    expect(await store.getEmail('nobody@example.test')).to.be.null();
                    // So do a woken long-poll's page query and the version probe.
                    expect((await store.listEmails({ inbox: 'reader', limit: 10 })).records.map((r) => r.messageId)).to.equal([record.messageId]);
                    expect((await store.listEmails({ inbox: 'reader', limit: 10, subject: 'nothing like it' })).records).to.equal([]);
                    expect(await store.inboxVersion('reader')).to.be.above(0);
                    expect(await store.inboxVersion('empty')).to.equal(0);
                }
                finally {
                    await trx.rollback();
                }
            }
            finally {
                await store.close();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });

        it('getEmail() through the reader returns the very record Knex reads, call after call, and null for an unknown id', async () => {
            const dir = await tempDir('sqlite-reader-get');
            const filename = Path.join(dir, 'db.sqlite');
            const knex = openSqliteKnex(filename);
            const plain = createKnexRecordStore({ knex });
            const reader = openSqliteReader(filename);
            const withReader = createKnexRecordStore({ knex, reader });
            try {
                await plain.migrate();
                await plain.saveEmails([draft('reader-get', 1), draft('reader-get', 2), draft('reader-get', 3)]);
                const ids = (await plain.listEmails({ inbox: 'reader-get', limit: 10 })).records.map((r) => r.messageId);
                expect(ids).to.have.length(3);
                // Twice over: the second round reuses the SQL compiled on the first call.
                for (const messageId of [...ids, ...ids]) {
                    const expected = await plain.getEmail(messageId);
                    expect(expected).to.not.be.null();
                    expect(await withReader.getEmail(messageId)).to.equal(expected);
                }

                expect(await withReader.getEmail('nobody@example.test')).to.be.null();
                expect(await withReader.getEmail(` ${ids[0]} `)).to.equal(await plain.getEmail(` ${ids[0]} `));
            }
            finally {
                await withReader.close();
                await plain.close();
                await reader.close();
                await knex.destroy();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });
    });
});
