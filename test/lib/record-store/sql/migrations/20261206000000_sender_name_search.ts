import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { rm } from 'node:fs/promises';
import { SEARCH_WINDOW } from '../../../../../lib/record-store/sql/search-page';
import { down, up } from '../../../../../lib/record-store/sql/migrations/20261206000000_sender_name_search';
import type { EmailDraft } from '../../../../../lib/types';
import { searchAll } from '../../../../contracts/record-store-search-contract';
import { draft } from '../../../../helpers/email-draft';
import { migratedStores } from '../../../../helpers/migrated-stores';
import { startPostgres, type PostgresServer } from '../../../../helpers/postgres';
import { tempDir } from '../../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** An SQLite document as the version before wrote it: without the display name. */
const EARLIER_DOCUMENT_SQL = "char(1) || inbox || char(2) || sender_folded || char(3) || subject_folded || char(3) || coalesce(recipient_folded, '') || char(3) || coalesce(filenames_folded, '') || char(3) || coalesce(body_folded, '')";

/** More named rows than one batch of the migration, and more rows than a search reads before it asks the index. */
const ROWS = Math.max(SEARCH_WINDOW, 500) + 120;

describe('migrations/20261206000000_sender_name_search', () => {
    let postgres: PostgresServer;
    let dir: string;

    before(async () => {
        postgres = await startPostgres();
        dir = await tempDir('sender-name-search');
    });

    after(async () => {
        await postgres.stop();
        await rm(dir, { recursive: true, force: true });
    });

    for (const [name, open] of migratedStores(() => postgres, () => dir)) {
        describe(`up() on ${name}`, () => {

            it('fills the folded display name of rows stored before, indexes it, and search finds them by it', { timeout: 60_000 }, async () => {
                const { knex, store, close } = await open();
                try {
                    // The oldest row has a name no other holds; of the others a third have none, a
                    // third a name of plain ASCII (folded in SQL), a third one that is not (in JS).
                    const inbox = 'named';
                    const drafts: EmailDraft[] = [draft(inbox, 0, { sourceId: 'oldest@x.test', senderName: 'ÉMILE Ñandú' })];
                    const names = (i: number) => ['', `Sender Number ${i}`, `ÇELIK Sender Number ${i}`][i % 3]!;
                    for (let i = 1; i < ROWS; i++) {
                        drafts.push(draft(inbox, i, { sourceId: `row-${i}@x.test`, senderName: names(i) }));
                    }

                    for (let i = 0; i < drafts.length; i += 100) {
                        await store.saveEmails(drafts.slice(i, i + 100).map((d) => ({ ...d })));
                    }

                    // Back to the schema before, with the documents as that version wrote them.
                    await down(knex);
                    if (name === 'SQLite') {
                        await knex.raw('DELETE FROM email_search');
                        await knex.raw(`INSERT INTO email_search (rowid, document) SELECT seq, ${EARLIER_DOCUMENT_SQL} FROM emails`);
                        // Past the newest emails a search asks the index, which knows no name yet.
                        expect(await knex('emails').select('seq').whereRaw('seq IN (SELECT rowid FROM email_search WHERE email_search MATCH ?)', ['"émi" AND "ile"'])).to.equal([]);
                    }

                    await up(knex);

                    const found = async (q: string) => (await searchAll(store, inbox, q)).map((r) => r.sourceId);
                    expect(await found('from:"émile ñandú"')).to.equal(['oldest@x.test']);
                    expect(await found('ÑANDÚ')).to.equal(['oldest@x.test']);
                    const named = (text: string) => drafts.filter((d) => d.senderName.toLowerCase().includes(text)).map((d) => d.sourceId).reverse();
                    expect(await found('from:"sender number 7"')).to.equal(named('sender number 7'));
                    expect(await found('"number 58"')).to.equal(named('number 58'));
                    expect(await found('from:"çelik sender number 2"')).to.equal(named('çelik sender number 2'));
                    expect(await found('-çelik -from:ñandú')).to.equal(drafts.filter((d) => !d.senderName.startsWith('Ç') && !d.senderName.includes('Ñ')).map((d) => d.sourceId).reverse());
                    const unnamed = await knex('emails').count({ n: '*' }).where('sender_name_folded', '').first() as { n: number | string };
                    expect(Number(unnamed.n)).to.equal(Math.floor((ROWS - 1) / 3));
                    if (name === 'SQLite') {
                        // One document per email, the name in it.
                        const documents = await knex('email_search_docsize').count({ n: '*' }).first() as { n: number };
                        expect(Number(documents.n)).to.equal(ROWS);
                        expect(await knex('emails').select('seq').whereRaw('seq IN (SELECT rowid FROM email_search WHERE email_search MATCH ?)', ['"émi" AND "ile"'])).to.have.length(1);
                    }
                    else {
                        const index = await knex.raw("SELECT indexname FROM pg_indexes WHERE tablename = 'emails' AND indexname = 'emails_sender_name_trgm'") as { rows: unknown[] };
                        expect(index.rows).to.have.length(1);
                    }
                }
                finally {
                    await close();
                }
            });
        });
    }
});
