import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import { sha256Hex } from '../../../../lib/identity/ids';
import { BACKFILL_BATCH_ROWS } from '../../../../lib/record-store/sql/backfill-links-codes';
import { backfillSearch } from '../../../../lib/record-store/sql/backfill-search';
import { createKnexRecordStore } from '../../../../lib/record-store/knex-record-store';
import { migratorConfig, migrationSource } from '../../../../lib/record-store/sql/migration-source';
import { toInsertRow } from '../../../../lib/record-store/sql/rows';
import type { EmailRecord } from '../../../../lib/types';
import { draft } from '../../../helpers/email-draft';
import { emptyDatabases, interruptedBackfill } from '../../../helpers/migrated-stores';
import { startPostgres, type PostgresServer } from '../../../helpers/postgres';
import { searchAll } from '../../../contracts/record-store-search-contract';
import { removeDir, tempDir } from '../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** Rows an earlier version stored: two and a half batches. */
const OLD_ROWS = 250;

/** Old row i: a text body, an HTML part whose text only it holds, an attachment, a recipient in capitals. */
function oldRecord(inbox: string, i: number): EmailRecord {
    const fields = draft(inbox, i, {
        sourceId: `old-${i}@example.test`,
        recipient: `${inbox.toUpperCase()}@Example.TEST`,
        body: `Text part ${i}`,
        htmlBody: `<p>Only in the <b>HTML</b>: token${i}x</p>`,
        attachments: [{ filename: `0-Report-${i}.PDF`, contentType: 'application/pdf', size: 1, blobKey: `k${i}` }]
    });
    const record: Partial<typeof fields> = { ...fields };
    delete record.searchText;
    return { ...record, messageId: fields.sourceId, links: [], codes: [], seen: false } as EmailRecord;
}

/** Rows whose searched texts are still to fill. */
async function pending(knex: Knex): Promise<number> {
    const row = await knex('emails').count({ n: '*' }).whereNull('body_folded').first() as { n: number | string };
    return Number(row.n);
}

function backfillSuite(name: string, open: () => Promise<{ knex: Knex; cleanup(): Promise<void> }>): void {
    describe(`backfillSearch() (${name})`, () => {

        it('fills rows an earlier version stored, in batches, interrupted and rerun; then search finds them as it finds new mail', async () => {
            const { knex, cleanup } = await open();
            const store = createKnexRecordStore({ knex });
            try {
                // Every migration before this one, then rows as that version wrote them.
                const before = (await migrationSource.getMigrations([])).filter((m) => m < '20261201000000_search');
                for (let i = 0; i < before.length; i++) {
                    await knex.migrate.up(migratorConfig);
                }

                const inbox = 'old-search';
                for (let i = 0; i < OLD_ROWS; i++) {
                    const record = oldRecord(inbox, i);
                    const row = toInsertRow({ record, searchText: '', sourceHash: sha256Hex(record.sourceId), messageHash: sha256Hex(record.messageId) });
                    for (const column of ['tags', 'sender_name', 'recipient_folded', 'filenames_folded', 'body_folded', 'raw_sha256', 'sender_name_folded', 'client_address', 'client_helo', 'mail_from']) {
                        delete row[column];
                    }

                    await knex('emails').insert(row);
                }

                await knex.migrate.latest(migratorConfig);
                expect(await pending(knex)).to.equal(OLD_ROWS);

                const told = await interruptedBackfill((onBatch) => backfillSearch(knex, { sqliteSearchIndex: name === 'SQLite', onBatch }));
                expect(told).to.equal([BACKFILL_BATCH_ROWS]);
                expect(await pending(knex)).to.equal(OLD_ROWS - BACKFILL_BATCH_ROWS);

                // The rerun, as the next start runs it; its progress (the CLI's line) counts these rows too.
                const heard: Array<{ done: number; total?: number }> = [];
                await store.migrate({ onProgress: (progress) => heard.push(progress) });
                expect(heard.at(-1)).to.equal({ done: OLD_ROWS - BACKFILL_BATCH_ROWS, total: OLD_ROWS - BACKFILL_BATCH_ROWS });
                expect(await pending(knex)).to.equal(0);
                expect(await backfillSearch(knex)).to.equal(0);

                // Found by the HTML's text, the attachment's name and the recipient, folded, from the index's candidates too.
                const id = (i: number) => `old-${i}@example.test`;
                expect((await searchAll(store, inbox, 'body:token7x')).map((r) => r.messageId)).to.equal([id(7)]);
                expect((await searchAll(store, inbox, 'body:"text part 249"')).map((r) => r.messageId)).to.equal([id(249)]);
                expect((await searchAll(store, inbox, 'filename:report-12.pdf')).map((r) => r.messageId)).to.equal([id(12)]);
                expect(await searchAll(store, inbox, 'to:OLD-SEARCH@example.test')).to.have.length(OLD_ROWS);
                expect((await searchAll(store, inbox, 'tag:x'))).to.equal([]);
                const [first] = (await store.listEmails({ inbox, limit: 1 })).records;
                expect(first).to.include({ tags: [], senderName: '' });
                if (name === 'SQLite') {
                    const documents = await knex('email_search_docsize').count({ n: '*' }).first() as { n: number };
                    expect(Number(documents.n)).to.equal(OLD_ROWS);
                }
            }
            finally {
                await store.close();
                await cleanup();
            }
        });

        it('leaves rows that already have their texts alone', async () => {
            const { knex, cleanup } = await open();
            const store = createKnexRecordStore({ knex });
            try {
                await store.migrate();
                await store.saveEmails([draft('filled', 1, { body: 'as given', searchText: 'kept as given' })]);
                expect(await backfillSearch(knex)).to.equal(0);
                expect((await searchAll(store, 'filled', 'body:"kept as given"'))).to.have.length(1);
            }
            finally {
                await store.close();
                await cleanup();
            }
        });
    });
}

let postgres: PostgresServer;
let dir: string;

before(async () => {
    postgres = await startPostgres();
    dir = await tempDir('backfill-search');
});

after(async () => {
    await postgres.stop();
    await removeDir(dir);
});

for (const [name, open] of emptyDatabases(() => postgres, () => dir)) {
    backfillSuite(name, open);
}
