import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Sqlite3 from 'sqlite3';
import { createSqliteBlobStore } from '../../../lib/blob-store/sqlite-blob-store';
import { isInboxCaptureError } from '../../../lib/errors';
import { createKnexRecordStore } from '../../../lib/record-store/knex-record-store';
import { BUSY_TIMEOUT_MS } from '../../../lib/sqlite/connection';
import { openSqliteKnex } from '../../../lib/sqlite/knex';
import { openSqliteReader } from '../../../lib/sqlite/reader';
import { draft } from '../../helpers/email-draft';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** A short wait for tests that only need "locked": far below the default's seconds. */
const SHORT_MS = 50;

/**
 * Longest a write against a held lock may take with SHORT_MS, ms: the record store tries
 * a write 8 times, so about half a second; with the default wait it takes 8 x 5 s.
 */
const FAR_BOUND_MS = 4_000;

/** Another process' connection to `filename` holding the write lock until release(). */
async function holdWriteLock(filename: string): Promise<{ release(): Promise<void> }> {
    const db = await new Promise<Sqlite3.Database>((resolve, reject) => {
        const opened: Sqlite3.Database = new Sqlite3.Database(filename, (err) => (err ? reject(err) : resolve(opened)));
    });
    const exec = (sql: string) => new Promise<void>((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
    await exec('BEGIN IMMEDIATE');
    return {
        release: async () => {
            await exec('ROLLBACK');
            await new Promise<void>((resolve) => db.close(() => resolve()));
        }
    };
}

describe('SQLite busy timeout (busyTimeoutMs)', () => {

    let dir: string;

    before(async () => {
        dir = await tempDir('busy-timeout');
    });

    after(async () => {
        await Fs.rm(dir, { recursive: true, force: true });
    });

    it('is BUSY_TIMEOUT_MS on the connections of openSqliteKnex() and openSqliteReader() by default, and the given value when set', async () => {
        expect(BUSY_TIMEOUT_MS).to.equal(5000);
        const filename = Path.join(dir, 'pragma.sqlite');
        const knexes = [openSqliteKnex(filename), openSqliteKnex(filename, { busyTimeoutMs: SHORT_MS })];
        const readers = [openSqliteReader(filename), openSqliteReader(filename, { busyTimeoutMs: SHORT_MS })];
        try {
            const fromKnex = await Promise.all(knexes.map(async (knex) => (await knex.raw('PRAGMA busy_timeout') as Array<{ timeout: number }>)[0]!.timeout));
            expect(fromKnex).to.equal([BUSY_TIMEOUT_MS, SHORT_MS]);
            const fromReader = await Promise.all(readers.map(async (reader) => (await reader.all<{ timeout: number }>('PRAGMA busy_timeout', []))[0]!.timeout));
            expect(fromReader).to.equal([BUSY_TIMEOUT_MS, SHORT_MS]);
        }
        finally {
            await Promise.all(readers.map((reader) => reader.close()));
            await Promise.all(knexes.map((knex) => knex.destroy()));
        }
    });

    it('refuses a value that is not a positive integer, naming the option', () => {
        for (const busyTimeoutMs of [0, -1, 1.5, Number.NaN, Infinity, '100' as unknown as number]) {
            expect(() => openSqliteKnex(Path.join(dir, 'refused.sqlite'), { busyTimeoutMs }), String(busyTimeoutMs)).to.throw(TypeError, `openSqliteKnex: busyTimeoutMs must be a positive integer, not ${String(busyTimeoutMs)}`);
            expect(() => openSqliteReader(Path.join(dir, 'refused.sqlite'), { busyTimeoutMs }), String(busyTimeoutMs)).to.throw(TypeError, /^openSqliteReader: busyTimeoutMs must be a positive integer/);
            expect(() => createSqliteBlobStore({ filename: Path.join(dir, 'refused.sqlite'), busyTimeoutMs }), String(busyTimeoutMs)).to.throw(TypeError, /^createSqliteBlobStore: busyTimeoutMs must be a positive integer/);
        }
    });

    it('is what the record store\'s save thread waits for a lock: a save against a held lock fails in well under a second a try', async () => {
        const filename = Path.join(dir, 'records.sqlite');
        const store = createKnexRecordStore({ knex: openSqliteKnex(filename, { busyTimeoutMs: SHORT_MS }), destroyKnexOnClose: true });
        await store.migrate();
        // The save thread started (it takes seconds to compile under the test runner) before the clock does.
        expect((await store.saveEmails([draft('busy', 1)])).saved).to.have.length(1);
        const lock = await holdWriteLock(filename);
        let error: unknown;
        const started = Date.now();
        try {
            await store.saveEmails([draft('busy', 2)]).catch((err: unknown) => {
                error = err;
            });
        }
        finally {
            await lock.release();
        }

        const took = Date.now() - started;
        expect(isInboxCaptureError(error, 'RECORD_STORE_UNAVAILABLE'), String(error)).to.be.true();
        expect(took).to.be.below(FAR_BOUND_MS);
        // Released, the same store saves again.
        expect((await store.saveEmails([draft('busy', 3)])).saved).to.have.length(1);
        await store.close();
    });

    it('is what the SQLite blob store\'s writer waits for a lock', async () => {
        const filename = Path.join(dir, 'blobs.sqlite');
        const store = createSqliteBlobStore({ filename, busyTimeoutMs: SHORT_MS });
        await store.put('seed', Buffer.from('seed'), 'text/plain');
        const lock = await holdWriteLock(filename);
        const started = Date.now();
        let outcome: PromiseSettledResult<unknown>[];
        try {
            outcome = await Promise.allSettled([store.put('a', Buffer.from('a'), 'text/plain')]);
        }
        finally {
            await lock.release();
        }

        const took = Date.now() - started;
        expect(outcome.map((o) => o.status)).to.equal(['rejected']);
        // One try of the default wait alone is BUSY_TIMEOUT_MS.
        expect(took).to.be.below(BUSY_TIMEOUT_MS / 2);
        expect(await store.get('a')).to.be.null();
        await store.close();
    });
});
