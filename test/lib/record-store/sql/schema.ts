import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { rm } from 'node:fs/promises';
import * as Schema from '../../../../lib/record-store/sql/schema';
import { isPostgres } from '../../../../lib/record-store/sql/dialect';
import { migratedStores } from '../../../helpers/migrated-stores';
import { startPostgres, type PostgresServer } from '../../../helpers/postgres';
import { tempDir } from '../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('schema', () => {
    let postgres: PostgresServer;
    let dir: string;

    before(async () => {
        postgres = await startPostgres();
        dir = await tempDir('schema');
    });

    after(async () => {
        await postgres.stop();
        await rm(dir, { recursive: true, force: true });
    });

    // The migrations keep their own copies of these names (they import nothing of ours):
    // this is what keeps the two in step.
    for (const [name, open] of migratedStores(() => postgres, () => dir)) {
        it(`names what the migrations created on ${name}`, async () => {
            const { knex, close } = await open();
            try {
                const pg = isPostgres(knex);
                for (const table of [Schema.EMAILS_TABLE, Schema.EMAIL_BLOBS_TABLE, Schema.API_KEYS_TABLE, Schema.INBOXES_TABLE, Schema.DELIVERIES_TABLE, Schema.SMTP_FAULTS_TABLE]) {
                    expect(await knex.schema.hasTable(table), table).to.be.true();
                }

                // Small blobs beside the records are SQLite's alone.
                expect(await knex.schema.hasTable(Schema.BLOBS_TABLE)).to.equal(!pg);
                for (const column of Schema.EMAIL_COLUMNS) {
                    expect(await knex.schema.hasColumn(Schema.EMAILS_TABLE, column), column).to.be.true();
                }

                for (const column of Schema.KEY_COLUMNS) {
                    expect(await knex.schema.hasColumn(Schema.API_KEYS_TABLE, column), column).to.be.true();
                }

                if (pg) {
                    const indexes = await knex('pg_indexes').select('indexname', 'indexdef').where('tablename', Schema.EMAILS_TABLE) as { indexname: string; indexdef: string }[];
                    const definition = (index: string) => indexes.find((i) => i.indexname === index)?.indexdef ?? '';
                    expect(definition('emails_inbox_order')).to.contain(`"left"(message_id, ${Schema.ORDER_PREFIX_CHARS})`);
                    expect(definition('emails_expiry')).to.contain(Schema.EXPIRY_KEY_SQL);
                }
            }
            finally {
                await close();
            }
        });
    }
});
