import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { rm } from 'node:fs/promises';
import type { Knex } from 'knex';
import { deriveMessageId } from '../../../../../lib/identity/ids';
import { down, up } from '../../../../../lib/record-store/sql/migrations/20261211000000_derived_source_index';
import { lookupSql, noneStoredSql } from '../../../../../lib/record-store/sqlite/batch-sql';
import { sqlJson } from '../../../../../lib/record-store/sqlite/sql-literals';
import { draft } from '../../../../helpers/email-draft';
import { migratedStores } from '../../../../helpers/migrated-stores';
import { startPostgres, type PostgresServer } from '../../../../helpers/postgres';
import { tempDir } from '../../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** The `CREATE INDEX` texts of `emails` on SQLite, by index name. */
async function sqliteIndexes(knex: Knex): Promise<Map<string, string>> {
    const rows = await knex('sqlite_master').select('name', 'sql').where({ type: 'index', tbl_name: 'emails' }) as Array<{ name: string; sql: string | null }>;
    return new Map(rows.map((r) => [r.name, r.sql ?? '']));
}

/** Entries of the derived copies' index (read through it alone). */
async function derivedEntries(knex: Knex): Promise<number> {
    const [row] = await knex.raw('SELECT count(*) AS n FROM emails INDEXED BY emails_inbox_source_derived WHERE message_id_hash <> source_id_hash') as Array<{ n: number }>;
    return row!.n;
}

describe('migrations/20261211000000_derived_source_index', () => {
    let postgres: PostgresServer;
    let dir: string;

    before(async () => {
        postgres = await startPostgres();
        dir = await tempDir('derived-source-index');
    });

    after(async () => {
        await postgres.stop();
        await rm(dir, { recursive: true, force: true });
    });

    const [[, openSqlite], [, openPostgres]] = migratedStores(() => postgres, () => dir);

    describe('on SQLite', () => {
        it('indexes (inbox, Message-ID, raw digest) of the copies stored under another id only; the save\'s lookups read both indexes, no table scan', { timeout: 60_000 }, async () => {
            const { knex, store, close } = await openSqlite!();
            try {
                const indexes = await sqliteIndexes(knex);
                expect(indexes.has('emails_inbox_source_raw_unique')).to.be.false();
                expect(indexes.get('emails_inbox_source_derived')).to.contain('WHERE message_id_hash <> source_id_hash');

                // One copy under its Message-ID, two copies of one delivery to two inboxes under derived ids.
                await store.saveEmails([draft('plain', 1)]);
                const shared = 'shared@example.test';
                const { saved } = await store.saveEmails([draft('left', 2, { sourceId: shared }), draft('right', 2, { sourceId: shared })]);
                expect(saved.map((s) => s.messageId)).to.equal([deriveMessageId(shared, 'left'), deriveMessageId(shared, 'right')]);
                expect(await knex('emails').count({ n: '*' }).first()).to.equal({ n: 3 });
                expect(await derivedEntries(knex)).to.equal(2);

                const hashes = sqlJson(['a'.repeat(64)]);
                const sources = sqlJson([['plain', 'b'.repeat(64)]]);
                for (const sql of [lookupSql(hashes, sources), noneStoredSql(hashes, sources)]) {
                    const plan = (await knex.raw(`EXPLAIN QUERY PLAN ${sql}`) as Array<{ detail: string }>).map((r) => r.detail).join('\n');
                    expect(plan).to.contain('INDEX emails_message_id_hash_unique (message_id_hash=?)');
                    expect(plan).to.contain('INDEX emails_inbox_source_derived (inbox=? AND source_id_hash=?)');
                    expect(plan).to.not.contain('SCAN emails');
                }
            }
            finally {
                await close();
            }
        });

        it('down() brings back the full index and up() the partial one; copies stored under either are found by a resend of the same bytes', { timeout: 60_000 }, async () => {
            const { knex, store, close } = await openSqlite!();
            try {
                await down(knex);
                let indexes = await sqliteIndexes(knex);
                expect(indexes.has('emails_inbox_source_derived')).to.be.false();
                expect(indexes.get('emails_inbox_source_raw_unique')).to.not.contain('WHERE');

                const plain = draft('plain', 1);
                const shared = 'shared@example.test';
                const before = await store.saveEmails([plain]);
                const left = await store.saveEmails([draft('left', 2, { sourceId: shared }), draft('right', 2, { sourceId: shared })]);

                await up(knex);
                indexes = await sqliteIndexes(knex);
                expect(indexes.has('emails_inbox_source_raw_unique')).to.be.false();
                expect(await derivedEntries(knex)).to.equal(2);

                // The same bytes again, alone: each replaces its copy and keeps its id.
                const again = await store.saveEmails([{ ...plain }]);
                expect(again.saved.map((s) => s.messageId)).to.equal([plain.sourceId]);
                expect(again.replaced.map((r) => r.messageId)).to.equal(before.saved.map((s) => s.messageId));
                const leftAgain = await store.saveEmails([draft('left', 3, { sourceId: shared })]);
                expect(leftAgain.saved.map((s) => s.messageId)).to.equal([deriveMessageId(shared, 'left')]);
                expect(leftAgain.replaced.map((r) => r.messageId)).to.equal([left.saved[0]!.messageId]);
                expect(await knex('emails').count({ n: '*' }).first()).to.equal({ n: 3 });
            }
            finally {
                await close();
            }
        });
    });

    it('leaves Postgres\' full unique index as it is', { timeout: 60_000 }, async () => {
        const { knex, close } = await openPostgres!();
        try {
            const names = async () => (await knex.raw('SELECT indexname FROM pg_indexes WHERE tablename = ?', ['emails'])).rows.map((r: { indexname: string }) => r.indexname) as string[];
            expect(await names()).to.include('emails_inbox_source_raw_unique');
            await down(knex);
            await up(knex);
            expect(await names()).to.include('emails_inbox_source_raw_unique');
            expect(await names()).to.not.include('emails_inbox_source_derived');
        }
        finally {
            await close();
        }
    });
});
