import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import * as Path from 'node:path';
import { createFsBlobStore } from '../../../../lib/blob-store/fs-blob-store';
import { sha256Hex } from '../../../../lib/identity/ids';
import { BACKFILL_BATCH_ROWS, backfillLinksAndCodes } from '../../../../lib/record-store/sql/backfill-links-codes';
import { createKnexRecordStore } from '../../../../lib/record-store/knex-record-store';
import { migrate } from '../../../../lib/record-store/sql/migrate';
import { migratorConfig } from '../../../../lib/record-store/sql/migration-source';
import { openPostgresKnex } from '../../../../lib/record-store/postgres/postgres-knex';
import { toInsertRow } from '../../../../lib/record-store/sql/rows';
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

/** Old row i: its subject and bodies, and the links and codes ingest gives them (docs/api.md, "Links and codes"). */
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

/** Writes a row as a version before links and codes did: every column but those two (and the raw digest, which came later). */
async function insertOldRow(knex: Knex, inbox: string, i: number): Promise<string> {
    const { searchText, ...fields } = draft(inbox, i, oldEmail(i).fields);
    const record: EmailRecord = { messageId: '', ...fields, seen: false };
    record.messageId = record.sourceId;
    const row = toInsertRow({ record, searchText, sourceHash: sha256Hex(record.sourceId), messageHash: sha256Hex(record.messageId) });
    // Columns of later versions, too.
    for (const column of ['links', 'codes', 'tags', 'sender_name', 'recipient_folded', 'filenames_folded', 'body_folded', 'raw_sha256', 'sender_name_folded', 'client_address', 'client_helo', 'mail_from']) {
        delete row[column];
    }

    await knex('emails').insert(row);
    return record.messageId;
}

/** A database as an earlier version left it (OLD_ROWS emails, no links and codes), then migrated to this version's schema by knex alone. */
async function upgradedDatabase(knex: Knex, inbox: string): Promise<string[]> {
    for (let i = 0; i < OLD_MIGRATIONS; i++) {
        await knex.migrate.up(migratorConfig);
    }

    const ids: string[] = [];
    for (let i = 0; i < OLD_ROWS; i++) {
        ids.push(await insertOldRow(knex, inbox, i));
    }

    await knex.migrate.latest(migratorConfig);
    return ids;
}

async function pending(knex: Knex): Promise<number> {
    const [{ n }] = await knex('emails').whereNull('links').orWhereNull('codes').count({ n: '*' }) as { n: number | string }[];
    return Number(n);
}

/** Every row holds the links and codes of its email. */
async function expectAllFilled(knex: Knex, ids: string[]): Promise<void> {
    const rows = await knex('emails').select('message_id', 'links', 'codes') as { message_id: string; links: string; codes: string }[];
    expect(rows).to.have.length(ids.length);
    for (const row of rows) {
        const i = ids.indexOf(row.message_id);
        expect(JSON.parse(row.links)).to.equal(oldEmail(i).links);
        expect(JSON.parse(row.codes)).to.equal(oldEmail(i).codes);
    }
}

/**
 * A table that gets a row each time a row of `emails` has its links written: a test-only
 * trigger, so two processes' back-fills can be seen to fill each row once.
 */
async function countFills(knex: Knex, pg: boolean): Promise<() => Promise<{ fills: number; rows: number }>> {
    if (pg) {
        await knex.raw('CREATE TABLE test_fills (seq bigint NOT NULL)');
        await knex.raw(`CREATE FUNCTION test_count_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO test_fills (seq) VALUES (NEW.seq); RETURN NULL; END $$`);
        await knex.raw('CREATE TRIGGER test_count_fills AFTER UPDATE OF links ON emails FOR EACH ROW EXECUTE PROCEDURE test_count_fill()');
    }
    else {
        await knex.raw('CREATE TABLE test_fills (seq INTEGER NOT NULL)');
        await knex.raw('CREATE TRIGGER test_count_fills AFTER UPDATE OF links ON emails BEGIN INSERT INTO test_fills (seq) VALUES (NEW.seq); END');
    }

    return async () => {
        const [{ fills, rows }] = await knex('test_fills').select(knex.raw('count(*) AS fills, count(DISTINCT seq) AS rows')) as { fills: number | string; rows: number | string }[];
        return { fills: Number(fills), rows: Number(rows) };
    };
}

/** An empty database on one backend, opened by `open()` as often as asked (one Knex per "process"). */
interface Backend {
    pg: boolean;
    open(): Knex;
    cleanup(): Promise<void>;
}

/** The back-fill scenarios on one backend. */
function backfillSuite(name: string, create: () => Promise<Backend>): void {
    describe(`on migrate() (${name})`, () => {

        it('fills the rows an earlier version stored before the store serves, in batches, and goes on where an interrupted one stopped', async () => {
            const backend = await create();
            const knex = backend.open();
            const blobDir = await tempDir('backfill-blobs');
            const store = createKnexRecordStore({ knex });
            try {
                const inbox = 'old-mail';
                const ids = await upgradedDatabase(knex, inbox);
                expect(await pending(knex)).to.equal(OLD_ROWS);

                // Not filled yet: a read answers what is stored, and works nothing out.
                expect(await store.getEmail(ids[0]!)).to.include({ links: [], codes: [] });

                // A migrate() stopped after its first batch (the process killed, say).
                const told: number[] = [];
                await expect(migrate(knex, {
                    onBatch: (filled) => {
                        told.push(filled);
                        throw new Error('stopped after one batch');
                    }
                })).to.reject('stopped after one batch');
                expect(told).to.equal([BACKFILL_BATCH_ROWS]);
                expect(await pending(knex)).to.equal(OLD_ROWS - BACKFILL_BATCH_ROWS);

                // The next start's migrate() fills the rest, and one after it has nothing to do.
                await store.migrate();
                expect(await pending(knex)).to.equal(0);
                await expectAllFilled(knex, ids);
                expect(await migrate(knex)).to.equal({ backfilled: 0, searchBackfilled: 0 });

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

                    const one = await provisioned.server.inject({ url: `/v1/emails/${encodeURIComponent(ids[2]!)}`, headers: provisioned.auth });
                    expect(one.statusCode).to.equal(200);
                    expect(one.result).to.include({ links: oldEmail(2).links, codes: oldEmail(2).codes });
                }
                finally {
                    await provisioned.server.stop();
                }
            }
            finally {
                await store.close();
                await knex.destroy();
                await backend.cleanup();
                await removeDir(blobDir);
            }
        });

        it('two instances migrating at once fill every row once, and neither is done before every row is', async () => {
            const backend = await create();
            const knexes = [backend.open(), backend.open()];
            const stores = knexes.map((knex) => createKnexRecordStore({ knex }));
            try {
                const ids = await upgradedDatabase(knexes[0]!, 'old-mail');
                const fills = await countFills(knexes[0]!, backend.pg);
                const leftWhenDone = await Promise.all(stores.map(async (store, i) => {
                    await store.migrate();
                    return pending(knexes[i]!);
                }));
                expect(leftWhenDone).to.equal([0, 0]);
                expect(await fills()).to.equal({ fills: OLD_ROWS, rows: OLD_ROWS });
                await expectAllFilled(knexes[0]!, ids);
            }
            finally {
                await Promise.all(stores.map((store) => store.close()));
                await Promise.all(knexes.map((knex) => knex.destroy()));
                await backend.cleanup();
            }
        });

        it('leaves rows that have links and codes alone, and fills one an earlier version wrote later at the next migrate()', async () => {
            const backend = await create();
            const knex = backend.open();
            const store = createKnexRecordStore({ knex });
            try {
                await store.migrate();
                const kept = { links: [{ href: 'https://x.test/kept', text: 'as given' }], codes: ['9999'] };
                const { saved } = await store.saveEmails([draft('filled', 1, { subject: 'Code 482913', ...kept })]);
                expect(await backfillLinksAndCodes(knex)).to.equal(0);
                expect(await store.getEmail(saved[0]!.messageId)).to.include(kept);

                // An instance of an earlier version still running writes a row without them: read as
                // stored (none) until the next migrate() fills it.
                const late = await insertOldRow(knex, 'late', 0);
                expect(await store.getEmail(late)).to.include({ links: [], codes: [] });
                await store.migrate();
                expect(await store.getEmail(late)).to.include({ links: oldEmail(0).links, codes: oldEmail(0).codes });
                expect(await store.getEmail(saved[0]!.messageId)).to.include(kept);
            }
            finally {
                await store.close();
                await knex.destroy();
                await backend.cleanup();
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
        const file = Path.join(dir, 'inbox-capture.sqlite');
        return { pg: false, open: () => openSqliteKnex(file), cleanup: () => removeDir(dir) };
    });

    backfillSuite('Postgres', async () => {
        const url = await postgres.createDatabase();
        return { pg: true, open: () => openPostgresKnex(url), cleanup: () => Promise.resolve() };
    });
});
