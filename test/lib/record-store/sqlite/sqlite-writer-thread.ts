import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createKnexRecordStore } from '../../../../lib/record-store/knex-record-store';
import { openSqliteWriterThread } from '../../../../lib/record-store/sqlite/sqlite-writer-thread';
import { openSqliteKnex } from '../../../../lib/sqlite/knex';
import { draft } from '../../../helpers/email-draft';
import { tempDir } from '../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const CRASHING_WORKER = join(__dirname, '..', '..', '..', 'fixtures', 'workers', 'crashing-parse-worker.js');

/** How long the event loop is held while the writer thread is expected to commit, ms at most: far above a commit (about 1 ms). */
const HOLD_MS = 5000;

describe('sqlite-writer-thread', () => {
    let dir: string;

    before(async () => {
        dir = await tempDir('writer-thread');
    });

    after(async () => {
        await rm(dir, { recursive: true, force: true });
    });

    describe('openSqliteWriterThread() through saveEmails()', () => {

        it('commits a save while the event loop that asked for it is held: no statement of it waits for this thread', async () => {
            const file = join(dir, 'held.sqlite');
            const commits: number[] = [];
            const store = createKnexRecordStore({ knex: openSqliteKnex(file), destroyKnexOnClose: true, observeBatchWriter: { commit: (n) => commits.push(n) } });
            try {
                await store.migrate();
                // The first save starts the thread and opens its connection.
                await store.saveEmails([draft('held', 0)]);
                const wal = `${file}-wal`;
                const before = statSync(wal).size;
                const saving = store.saveEmails([draft('held', 1, { body: 'x'.repeat(64 * 1024) })]);
                // The batch is posted from microtasks; after this turn it is with the writer thread.
                await new Promise((resolve) => setImmediate(resolve));
                const held = Date.now();
                let grown = false;
                while (!grown && Date.now() - held < HOLD_MS) {
                    grown = statSync(wal).size > before;
                }

                expect(grown, 'the WAL grew by the commit while the event loop was held').to.be.true();
                await saving;
                expect(commits).to.equal([1, 1]);
                expect((await store.listEmails({ inbox: 'held', limit: 10 })).records).to.have.length(2);
            }
            finally {
                await store.close();
            }
        });

        it('fails the saves a dying thread held and starts another for the next save', async () => {
            const file = join(dir, 'dies.sqlite');
            const knex = openSqliteKnex(file);
            const store = createKnexRecordStore({ knex, destroyKnexOnClose: true });
            await store.migrate();
            const writer = openSqliteWriterThread(file, undefined, CRASHING_WORKER);
            try {
                await expect(writer.save([[draft('dies', 0)]], [])).to.reject(/the SQLite writer thread exited \(code 3\)/);
                await expect(writer.save([[draft('dies', 1)]], [])).to.reject(/the SQLite writer thread exited \(code 3\)/);
            }
            finally {
                await writer.close();
                await store.close();
            }
        });

        it('passes a failed statement\'s error back with its SQLite code, and saves again after it', async () => {
            const file = join(dir, 'fails.sqlite');
            const store = createKnexRecordStore({ knex: openSqliteKnex(file), destroyKnexOnClose: true });
            await store.migrate();
            const writer = openSqliteWriterThread(file);
            try {
                // A NOT NULL column left null: the thread's transaction fails and rolls back.
                const broken = { ...draft('fails', 0), inbox: null as unknown as string };
                const err = await writer.save([[broken]], []).catch((e: unknown) => e) as Error & { code?: string };
                expect(err.code).to.equal('SQLITE_CONSTRAINT');
                const [result] = await writer.save([[draft('fails', 1)]], []);
                expect(result!.saved[0]!.inbox).to.equal('fails');
            }
            finally {
                await writer.close();
                await store.close();
            }
        });
    });
});
