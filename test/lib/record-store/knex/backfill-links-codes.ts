import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import * as Path from 'node:path';
import { createFsBlobStore } from '../../../../lib/blob-store/fs-blob-store';
import { sha256Hex } from '../../../../lib/ingest/ids';
import { BACKFILL_BATCH_ROWS, backfillLinksAndCodes } from '../../../../lib/record-store/knex/backfill-links-codes';
import { createKnexRecordStore } from '../../../../lib/record-store/knex/knex-record-store';
import { migratorConfig } from '../../../../lib/record-store/knex/migration-source';
import { openPostgresKnex } from '../../../../lib/record-store/knex/postgres-knex';
import { toInsertRow } from '../../../../lib/record-store/knex/rows';
import { openSqliteKnex } from '../../../../lib/sqlite/knex';
import type { EmailRecord, Link } from '../../../../lib/types';
import { draft } from '../../../helpers/email-draft';
import { startPostgres, type PostgresServer } from '../../../helpers/postgres';
import { provisionServer } from '../../../helpers/provision-server';
import { removeDir, tempDir } from '../../../helpers/temp-dir';
import { TEST_SIGNING_SECRET } from '../../../helpers/test-stores';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** Rows an earlier version stored: two and a half batches. */
const OLD_ROWS = 250;

/** Migrations before links and codes existed. */
const OLD_MIGRATIONS = 3;

/** Old row i: its subject and bodies, and the links and codes EXTENSIONS §1 gives them. */
function oldEmail(i: number): { fields: { subject: string; body: string; htmlBody: string }; links: Link[]; codes: string[] } {
    const code = String(100000 + i);
    switch (i % 3) {
        case 0:
            return {
                fields: { subject: `Your code ${code}`, body: `Or open https://x.test/t/${i}.`, htmlBody: `<a href="https://x.test/v/${i}">Verify</a>` },
                links: [{ href: `https://x.test/v/${i}`, text: 'Verify' }, { href: `https://x.test/t/${i}`, text: `https://x.test/t/${i}` }],
                codes: [code]
            };
        case 1:
            return { fields: { subject: 'Newsletter © 2024', body: 'Call 555-1234, nothing to click', htmlBody: '' }, links: [], codes: [] };
        default:
            return {
                fields: { subject: 'Reset', body: `Type ${code} or mail help@x.test`, htmlBody: '<A HREF=\'mailto:help@x.test\'>Help</A>' },
                links: [{ href: 'mailto:help@x.test', text: 'Help' }],
                codes: [code]
            };
    }
}

/** Writes the rows as an earlier version did: every column but links and codes. */
async function insertOldRows(knex: Knex, inbox: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < OLD_ROWS; i++) {
        const { searchText, ...fields } = draft(inbox, i, oldEmail(i).fields);
        const record: EmailRecord = { messageId: '', ...fields, links: [], codes: [] };
        record.messageId = record.sourceId;
        const row = toInsertRow({ record, searchText, sourceHash: sha256Hex(record.sourceId), messageHash: sha256Hex(record.messageId) });
        // Columns of later versions, too.
        for (const column of ['links', 'codes', 'tags', 'sender_name', 'recipient_folded', 'filenames_folded', 'body_folded']) {
            delete row[column];
        }

        await knex('emails').insert(row);
        ids.push(record.messageId);
    }

    return ids;
}

async function pending(knex: Knex): Promise<number> {
    const [{ n }] = await knex('emails').whereNull('links').orWhereNull('codes').count({ n: '*' }) as { n: number | string }[];
    return Number(n);
}

/** The back-fill scenario on one backend: `open` gives a knex on an empty database. */
function backfillSuite(name: string, open: () => Promise<{ knex: Knex; cleanup(): Promise<void> }>): void {
    describe(`backfillLinksAndCodes() (${name})`, () => {

        it('fills rows an earlier version stored, in batches, interrupted and rerun; reads are right before, during and after', async () => {
            const { knex, cleanup } = await open();
            const blobDir = await tempDir('backfill-blobs');
            const store = createKnexRecordStore({ knex });
            try {
                for (let i = 0; i < OLD_MIGRATIONS; i++) {
                    await knex.migrate.up(migratorConfig);
                }

                const inbox = 'old-mail';
                const ids = await insertOldRows(knex, inbox);
                // The schema of this version, nothing filled yet.
                await knex.migrate.latest(migratorConfig);
                expect(await pending(knex)).to.equal(OLD_ROWS);

                // Not yet filled: a read works them out.
                const first = await store.getEmail(ids[0]);
                expect(first).to.include({ links: oldEmail(0).links, codes: oldEmail(0).codes });

                const told: number[] = [];
                await expect(backfillLinksAndCodes(knex, {
                    onBatch: (filled) => {
                        told.push(filled);
                        throw new Error('stopped after one batch');
                    }
                })).to.reject('stopped after one batch');
                expect(told).to.equal([BACKFILL_BATCH_ROWS]);
                expect(await pending(knex)).to.equal(OLD_ROWS - BACKFILL_BATCH_ROWS);

                // Half filled: both kinds of row read the same way.
                const page = await store.listEmails({ inbox, limit: 100 });
                for (const record of page.records) {
                    const i = ids.indexOf(record.messageId);
                    expect(record).to.include({ links: oldEmail(i).links, codes: oldEmail(i).codes });
                }

                // The rerun, as the next start runs it: migrate() goes on with the rows left.
                await store.migrate();
                expect(await pending(knex)).to.equal(0);
                expect(await backfillLinksAndCodes(knex)).to.equal(0);

                const rows = await knex('emails').select('message_id', 'links', 'codes') as { message_id: string; links: string; codes: string }[];
                expect(rows).to.have.length(OLD_ROWS);
                for (const row of rows) {
                    const i = ids.indexOf(row.message_id);
                    expect(JSON.parse(row.links)).to.equal(oldEmail(i).links);
                    expect(JSON.parse(row.codes)).to.equal(oldEmail(i).codes);
                }

                // The API answers the stored arrays, in the list and for one email.
                const blobStore = createFsBlobStore({ root: Path.join(blobDir, 'blobs'), signingSecret: TEST_SIGNING_SECRET });
                const provisioned = await provisionServer({ recordStore: store, blobStore });
                try {
                    const list = await provisioned.server.inject({ url: `/v1/emails?inbox=${inbox}&limit=100`, headers: provisioned.auth });
                    expect(list.statusCode).to.equal(200);
                    const emails = (list.result as { emails: { messageId: string; links: Link[]; codes: string[] }[] }).emails;
                    expect(emails).to.have.length(100);
                    for (const email of emails) {
                        const i = ids.indexOf(email.messageId);
                        expect({ links: email.links, codes: email.codes }).to.equal({ links: oldEmail(i).links, codes: oldEmail(i).codes });
                    }

                    const one = await provisioned.server.inject({ url: `/v1/emails/${encodeURIComponent(ids[2])}`, headers: provisioned.auth });
                    expect(one.statusCode).to.equal(200);
                    expect(one.result).to.include({ links: oldEmail(2).links, codes: oldEmail(2).codes });
                }
                finally {
                    await provisioned.server.stop();
                }
            }
            finally {
                await store.close();
                await cleanup();
                await removeDir(blobDir);
            }
        });

        it('leaves rows that already have links and codes alone', async () => {
            const { knex, cleanup } = await open();
            const store = createKnexRecordStore({ knex });
            try {
                await store.migrate();
                const { saved } = await store.saveEmails([draft('filled', 1, { subject: 'Code 482913', links: [{ href: 'https://x.test/kept', text: 'as given' }], codes: ['9999'] })]);
                expect(await backfillLinksAndCodes(knex)).to.equal(0);
                expect(await store.getEmail(saved[0].messageId)).to.include({ links: [{ href: 'https://x.test/kept', text: 'as given' }], codes: ['9999'] });
            }
            finally {
                await store.close();
                await cleanup();
            }
        });
    });
}

let postgres: PostgresServer;

before(async () => {
    postgres = await startPostgres();
});

after(async () => {
    await postgres.stop();
});

describe('backfill-links-codes', () => {

    backfillSuite('SQLite', async () => {
        const dir = await tempDir('backfill');
        const knex = openSqliteKnex(Path.join(dir, 'inbox-capture.sqlite'));
        return {
            knex,
            async cleanup() {
                await knex.destroy();
                await removeDir(dir);
            }
        };
    });

    backfillSuite('Postgres', async () => {
        const knex = openPostgresKnex(await postgres.createDatabase());
        return { knex, cleanup: () => knex.destroy() };
    });
});
