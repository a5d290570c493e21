import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { referencedBlobKeys, referencedKeysSql, removeUnreferencedStagedBlobsSql } from '../../../../lib/record-store/sql/blob-references';
import { createKnexRecordStore } from '../../../../lib/record-store/knex-record-store';
import { openPostgresKnex } from '../../../../lib/record-store/postgres/postgres-knex';
import type { RecordStore } from '../../../../lib/record-store/record-store';
import { openSqliteKnex } from '../../../../lib/sqlite/knex';
import { draft } from '../../../helpers/email-draft';
import { startPostgres, type PostgresServer } from '../../../helpers/postgres';
import { removeDir, tempDir } from '../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** A migrated store holding one delivery of 100 copies that share `shared/raw.eml`. */
async function seeded(knex: Knex): Promise<RecordStore> {
    const store = createKnexRecordStore({ knex, destroyKnexOnClose: true });
    await store.migrate();
    await store.saveEmails(Array.from({ length: 100 }, (_, i) => draft(`copy${i}`, i, { sourceId: 'shared@x', rawKey: 'shared/raw.eml' })));
    return store;
}

describe('blob-references', () => {

    let postgres: PostgresServer;
    let dir: string;

    before(async () => {
        postgres = await startPostgres();
        dir = await tempDir('blob-references');
    });

    after(async () => {
        await postgres.stop();
        await removeDir(dir);
    });

    describe('referencedBlobKeys()', () => {

        for (const [name, open] of [
            ['SQLite', () => openSqliteKnex(join(dir, `${Date.now()}-${Math.random()}.sqlite`))],
            ['Postgres', async () => openPostgresKnex(await postgres.createDatabase())]
        ] as Array<[string, () => Knex | Promise<Knex>]>) {
            it(`answers a key that 100 copies reference once, and not a key nothing references (${name})`, async () => {
                const knex = await open();
                const store = await seeded(knex);
                try {
                    expect([...await referencedBlobKeys(knex, ['shared/raw.eml', 'nobody/raw.eml', 'shared/raw.eml'])]).to.equal(['shared/raw.eml']);
                }
                finally {
                    await store.close();
                }
            });
        }

        it('finds references through the email_blobs_blob_key index, one probe per key (SQLite EXPLAIN QUERY PLAN)', async () => {
            const knex = openSqliteKnex(join(dir, 'plan.sqlite'));
            const store = await seeded(knex);
            try {
                const plan = await knex.raw(`EXPLAIN QUERY PLAN ${referencedKeysSql(2)}`, ['a', 'b']) as { detail: string }[];
                expect(plan.map((row) => row.detail)).to.include('SEARCH email_blobs USING COVERING INDEX email_blobs_blob_key (blob_key=?)');
                expect(plan.some((row) => /^SCAN email_blobs/.test(row.detail))).to.be.false();

                const removal = await knex.raw(`EXPLAIN QUERY PLAN ${removeUnreferencedStagedBlobsSql('(SELECT value FROM json_each(?))')}`, ['["a"]']) as { detail: string }[];
                expect(removal.map((row) => row.detail)).to.include('SEARCH email_blobs USING COVERING INDEX email_blobs_blob_key (blob_key=?)');
                expect(removal.some((row) => /^SCAN (email_blobs|blobs)\b/.test(row.detail))).to.be.false();
            }
            finally {
                await store.close();
            }
        });

        it('finds references through the email_blobs_blob_key index (Postgres EXPLAIN)', async () => {
            const knex = openPostgresKnex(await postgres.createDatabase());
            const store = await seeded(knex);
            try {
                // A table this small is read whole; without that option the plan shows whether the index serves the lookup.
                const plan = await knex.transaction(async (trx) => {
                    await trx.raw('SET LOCAL enable_seqscan = off');
                    const result = await trx.raw(`EXPLAIN ${referencedKeysSql(2)}`, ['a', 'b']) as { rows: { 'QUERY PLAN': string }[] };
                    return result.rows.map((row) => row['QUERY PLAN']).join('\n');
                });
                expect(plan).to.match(/Index Only Scan using email_blobs_blob_key on email_blobs/);
                expect(plan).to.not.match(/Seq Scan on email_blobs/);
            }
            finally {
                await store.close();
            }
        });
    });
});
