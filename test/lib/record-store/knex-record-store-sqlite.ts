import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import { createKnexRecordStore } from '../../../lib/record-store/knex-record-store';
import { MIGRATIONS_TABLE_NAME, migrationSource } from '../../../lib/record-store/sql/migration-source';
import type { RecordStore } from '../../../lib/record-store/record-store';
import { openSqliteKnex } from '../../../lib/sqlite/knex';
import { recordStoreContract } from '../../contracts/record-store-contract';
import { recordStoreInboxesContract } from '../../contracts/record-store-inboxes-contract';
import { recordStoreRelayContract } from '../../contracts/record-store-relay-contract';
import { recordStoreSearchContract } from '../../contracts/record-store-search-contract';
import { capturedStatement } from '../../helpers/captured-statement';
import { countWithinBudget } from '../../../lib/record-store/sql/email-page';
import { BASE_TIME, draft } from '../../helpers/email-draft';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const lab = exports.lab = Lab.script();
const { describe, it, before, after } = lab;

/** A fresh directory for one database; removed by the caller. */

async function openStore(dir: string, file = 'inbox-capture.sqlite') {
    const knex = openSqliteKnex(join(dir, file));
    const store = createKnexRecordStore({ knex, destroyKnexOnClose: true });
    await store.migrate();
    return { knex, store };
}

// A fresh, migrated store for each contract.
const openFresh = async () => {
    const dir = await tempDir('sqlite');
    const { store } = await openStore(dir);
    return {
        store,
        cleanup: async () => {
            await store.close();
            await rm(dir, { recursive: true, force: true });
        }
    };
};

recordStoreContract(lab, 'sqlite', openFresh);
recordStoreInboxesContract(lab, 'sqlite', openFresh);
recordStoreSearchContract(lab, 'sqlite', openFresh);
recordStoreRelayContract(lab, 'sqlite', openFresh);

describe('SQLite record store', () => {
    let dir: string;

    before(async () => {
        dir = await tempDir('sqlite');
    });

    after(async () => {
        await rm(dir, { recursive: true, force: true });
    });

    describe('openSqliteKnex()', () => {
        it('sets WAL, synchronous=FULL, busy_timeout, foreign keys and statement journals in memory', async () => {
            const knex = openSqliteKnex(join(dir, 'pragmas', 'nested', 'db.sqlite'));
            try {
                const pragma = async (name: string) => {
                    const rows = await knex.raw(`PRAGMA ${name}`) as Record<string, unknown>[];
                    return Object.values(rows[0]!)[0];
                };

                expect(await pragma('journal_mode')).to.equal('wal');
                // 2 = FULL: every commit is synced before it is acknowledged.
                expect(await pragma('synchronous')).to.equal(2);
                expect(await pragma('busy_timeout')).to.equal(5000);
                expect(await pragma('foreign_keys')).to.equal(1);
                // 2 = MEMORY: a multi-row save's statement journal never spills to a temp file.
                expect(await pragma('temp_store')).to.equal(2);
                expect(existsSync(join(dir, 'pragmas', 'nested', 'db.sqlite'))).to.be.true();
            }
            finally {
                await knex.destroy();
            }
        });
    });

    describe('migrate()', () => {
        it('records what it ran in inbox_capture_migrations, not knex_migrations', async () => {
            const { knex, store } = await openStore(dir, 'table-name.sqlite');
            try {
                expect(MIGRATIONS_TABLE_NAME).to.equal('inbox_capture_migrations');
                const rows = await knex(MIGRATIONS_TABLE_NAME).select('name') as { name: string }[];
                expect(rows.map((r) => r.name)).to.equal(await migrationSource.getMigrations([]));
                expect(await knex.schema.hasTable('inbox_capture_migrations_lock')).to.be.true();
                expect(await knex.schema.hasTable('knex_migrations')).to.be.false();
            }
            finally {
                await store.close();
            }
        });

        it('changes nothing when run again', async () => {
            const { knex, store } = await openStore(dir, 'twice.sqlite');
            try {
                const schema = () => knex.raw("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name");
                const before = await schema();
                const runs = await knex(MIGRATIONS_TABLE_NAME).select('name', 'batch');

                await store.migrate();
                await store.migrate();

                expect(await schema()).to.equal(before);
                expect(await knex(MIGRATIONS_TABLE_NAME).select('name', 'batch')).to.equal(runs);
                const [, pending] = await knex.migrate.list({ migrationSource, tableName: MIGRATIONS_TABLE_NAME }) as [unknown[], unknown[]];
                expect(pending).to.equal([]);
            }
            finally {
                await store.close();
            }
        });

        it('keeps stored mail across a reopen of the file', async () => {
            const first = await openStore(dir, 'reopen.sqlite');
            const { saved } = await first.store.saveEmails([draft('reopen', 1)]);
            await first.store.close();

            const second = await openStore(dir, 'reopen.sqlite');
            try {
                expect(await second.store.getEmail(saved[0]!.messageId)).to.equal(saved[0]!);
            }
            finally {
                await second.store.close();
            }
        });
    });

    describe('listEmails()', () => {
        let knex: Knex;
        let store: RecordStore;
        const inbox = 'plans';

        before(async () => {
            ({ knex, store } = await openStore(dir, 'plans.sqlite'));
            // 20,000 rows, a quarter in the inbox under test, written in one statement
            // (the store would take seconds): the plan is under test, not saveEmails().
            await knex.raw(`
                WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 20000)
                INSERT INTO emails (message_id, message_id_hash, source_id, source_id_hash, inbox, sender, recipient,
                    subject, sender_folded, subject_folded, body, html_body, received_at, raw_key, raw_size,
                    has_attachments, attachments)
                SELECT 'gen-' || n || '@example.test', printf('%064d', n), 'gen-' || n || '@example.test',
                    printf('%064d', n), CASE WHEN n % 4 = 0 THEN ? ELSE 'other' || (n % 4) END,
                    'alice@example.test', 'x@example.test', 'Subject ' || n, 'alice@example.test', 'subject ' || n,
                    'body', '', ? + n % 97, 'raw-' || n, 100, n % 2 = 0, '[]'
                FROM g`, [inbox, BASE_TIME]);
            await knex.raw('ANALYZE');
        });

        after(async () => {
            await store.close();
        });

        // The plan of the statement listEmails() really runs, captured from knex.
        const planOf = async (run: () => Promise<unknown>) => {
            const { sql, bindings } = await capturedStatement(knex, run);
            const rows = await knex.raw(`EXPLAIN QUERY PLAN ${sql}`, bindings) as { detail: string }[];
            return rows.map((r) => r.detail).join('\n');
        };

        it('reads the first page from the order index without sorting', async () => {
            const plan = await planOf(() => store.listEmails({ inbox, limit: 20 }));
            expect(plan).to.contain('USING INDEX emails_inbox_order (inbox=?)');
            expect(plan).to.not.contain('TEMP B-TREE');
        });

        it('seeks a cursor page in the order index without sorting', async () => {
            const first = await store.listEmails({ inbox, limit: 20 });
            const last = first.records[19]!;
            const plan = await planOf(() => store.listEmails({ inbox, limit: 20, after: { receivedAt: last.receivedAt, messageId: last.messageId } }));
            expect(plan).to.contain('USING INDEX emails_inbox_order (inbox=? AND (received_at,message_id)<(?,?))');
            expect(plan).to.not.contain('TEMP B-TREE');
        });

        it('cuts a page at its byte budget in one statement, its sizes read from the order index', async () => {
            // capturedStatement() holds it to one statement: sizes and rows are not two reads.
            const plan = await planOf(() => store.listEmails({ inbox, limit: 20, maxBytes: 100 }));
            expect(plan).to.contain('USING INDEX emails_inbox_order (inbox=?)');
            expect(plan).to.not.match(/SCAN emails(?! USING)/);

            // The page is the budget's prefix of the unbudgeted one, as countWithinBudget() counts it.
            const whole = await store.listEmails({ inbox, limit: 20 });
            const sizes = whole.records.map((r) => Buffer.byteLength(r.body) + Buffer.byteLength(r.htmlBody) + Buffer.byteLength(r.subject) + Buffer.byteLength(JSON.stringify(r.attachments)));
            const counts: number[] = [];
            for (const maxBytes of [1, 100, 200, 1_000_000]) {
                const cut = await store.listEmails({ inbox, limit: 20, maxBytes });
                const count = countWithinBudget(sizes, 20, maxBytes);
                expect(cut.records).to.equal(whole.records.slice(0, count));
                expect(cut.hasMore).to.be.true();
                counts.push(count);
            }

            // One email however small the budget, all 20 under a large one, and cuts between.
            expect(counts[0]).to.equal(1);
            expect(counts[1]).to.be.between(1, counts[2]!);
            expect(counts[2]).to.be.between(counts[1]!, 20);
            expect(counts[3]).to.equal(20);

            const empty = await store.listEmails({ inbox: 'nobody', limit: 20, maxBytes: 100 });
            expect(empty).to.equal({ records: [], hasMore: false });
        });

        it('keeps the index order under filters', async () => {
            const plan = await planOf(() => store.listEmails({ inbox, limit: 20, subject: 'subject 1', hasAttachments: false, receivedAfter: BASE_TIME }));
            expect(plan).to.contain('USING INDEX emails_inbox_order');
            expect(plan).to.not.contain('TEMP B-TREE');
        });
    });

    describe('saveEmails()', () => {
        it('survives two processes writing one file at once', async () => {
            // Two Knex instances stand for the service and, say, the CLI's ingest.
            const a = await openStore(dir, 'two-writers.sqlite');
            const b = await openStore(dir, 'two-writers.sqlite');
            try {
                const d = draft('shared', 1);
                const all = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).store.saveEmails([{ ...d }])));
                expect(all.every((r) => r.saved[0]!.messageId === d.sourceId)).to.be.true();
                const page = await a.store.listEmails({ inbox: 'shared', limit: 10 });
                expect(page.records).to.have.length(1);
            }
            finally {
                await a.store.close();
                await b.store.close();
            }
        });
    });

    describe('close()', () => {
        it('leaves a Knex instance it does not own open', async () => {
            const knex = openSqliteKnex(join(dir, 'borrowed.sqlite'));
            try {
                const store = createKnexRecordStore({ knex });
                await store.migrate();
                await store.close();
                expect(await knex.raw('SELECT 1 AS one')).to.equal([{ one: 1 }]);
            }
            finally {
                await knex.destroy();
            }
        });
    });

    describe('errors', () => {
        it('throws rather than answering "absent" when the database is gone', async () => {
            const { knex, store } = await openStore(dir, 'gone.sqlite');
            await knex.destroy();
            await expect(store.getEmail('x@example.test')).to.reject();
            await expect(store.inboxVersion('x')).to.reject();
            await expect(store.findActiveKeyByHash('0'.repeat(64))).to.reject();
            await expect(store.revokeKey('x')).to.reject();
        });

        it('refuses a Knex client it does not support', () => {
            // Only the client name is read before refusing.
            const knex = { client: { config: { client: 'mysql2' } } } as unknown as Knex;
            expect(() => createKnexRecordStore({ knex })).to.throw(/'sqlite3' and 'pg'/);
        });

        it('offers no cross-process watch on SQLite', async () => {
            const { store } = await openStore(dir, 'nowatch.sqlite');
            expect(store.watchInboxes).to.be.undefined();
            await store.close();
        });
    });
});
