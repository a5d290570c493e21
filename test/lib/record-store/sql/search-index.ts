import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import { createKnexRecordStore } from '../../../../lib/record-store/knex-record-store';
import type { RecordStore } from '../../../../lib/record-store/record-store';
import { ftsCandidateQuery, likeContains, MAX_TRIGRAMS, postgresIndexable } from '../../../../lib/record-store/sql/search-index';
import { SEARCH_WINDOW } from '../../../../lib/record-store/sql/search-page';
import { TEXT_PIECE_CHARS } from '../../../../lib/record-store/sqlite/text-pieces';
import { parseSearchQuery } from '../../../../lib/search/parse-query';
import { openSqliteKnex } from '../../../../lib/sqlite/knex';
import type { EmailDraft } from '../../../../lib/types';
import { searchAll } from '../../../contracts/record-store-search-contract';
import { BASE_TIME, draft } from '../../../helpers/email-draft';
import { migratedStores, type MigratedStore } from '../../../helpers/migrated-stores';
import { startPostgres, type PostgresServer } from '../../../helpers/postgres';
import { removeDir, tempDir } from '../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ids = async (store: RecordStore, inbox: string, q: string) => (await searchAll(store, inbox, q)).map((r) => r.messageId);

/** Saves each draft as a delivery of its own, all at once. */
async function saveEach(store: RecordStore, drafts: EmailDraft[]): Promise<string[]> {
    return (await Promise.all(drafts.map((d) => store.saveEmails([d])))).map((r) => r.saved[0]!.messageId);
}

/** An inbox past the window: `older` emails holding `needle`, then SEARCH_WINDOW + 10 newer ones that do not. */
function windowDrafts(inbox: string, needle: string, older: number): EmailDraft[] {
    const drafts = Array.from({ length: older }, (_, i) => draft(inbox, i, { body: `has ${needle} inside` }));
    for (let i = 0; i < SEARCH_WINDOW + 10; i++) {
        drafts.push(draft(inbox, 100 + i, { body: `filler ${i}` }));
    }

    return drafts;
}

/** The SQL of the last statement of a search past the window: the read through the index. */
async function lastStatement(knex: Knex, store: RecordStore, inbox: string, q: string): Promise<{ sql: string; bindings: unknown[] }> {
    const statements: Array<{ sql: string; bindings: unknown[] }> = [];
    const onQuery = (data: { sql: string; bindings?: unknown[] }) => statements.push({ sql: data.sql, bindings: data.bindings ?? [] });
    knex.on('query', onQuery);
    try {
        await store.listEmails({ inbox, limit: 50, q: parseSearchQuery(q) });
    }
    finally {
        knex.off('query', onQuery);
    }

    expect(statements.length, statements.map((s) => s.sql).join('\n')).to.equal(3);
    return statements[2]!;
}

describe('search-index', () => {

    describe('ftsCandidateQuery()', () => {
        it('asks for every trigram of the marked inbox and of each needle, each a phrase, each once', () => {
            expect(ftsCandidateQuery('big', ['ord-4242'])).to.equal('"\u0001bi" AND "big" AND "ig\u0002" AND "ord" AND "rd-" AND "d-4" AND "-42" AND "424" AND "242"');
            expect(ftsCandidateQuery('in', ['abc', 'xabc'])).to.equal('"\u0001in" AND "in\u0002" AND "abc" AND "xab"');
        });

        it('doubles quotes and keeps any other character, surrogate pairs whole', () => {
            expect(ftsCandidateQuery('a', ['say "hi"'])).to.equal('"\u0001a\u0002" AND "say" AND "ay " AND "y """ AND " ""h" AND """hi" AND "hi"""');
            expect(ftsCandidateQuery('a', ['🙂x🙂'])).to.equal('"\u0001a\u0002" AND "🙂x🙂"');
        });

        it('spreads at most MAX_TRIGRAMS trigrams over a long needle, first and last included', () => {
            const needle = 'abcdefghijklmnopqrstuvwxyz0123456789';
            const trigrams = ftsCandidateQuery('i', [needle])!.split(' AND ').slice(1);
            expect(trigrams).to.have.length(MAX_TRIGRAMS);
            expect(trigrams[0]).to.equal('"abc"');
            expect(trigrams.at(-1)).to.equal('"789"');
        });

        it('answers null when no needle has three characters or every one holds a mark', () => {
            expect(ftsCandidateQuery('big', ['ab', 'x'])).to.be.null();
            expect(ftsCandidateQuery('big', ['abc\u0002def'])).to.be.null();
            expect(ftsCandidateQuery('big', [])).to.be.null();
        });
    });

    describe('postgresIndexable()', () => {
        it('is true for a needle with three letters or digits in a row', () => {
            expect(postgresIndexable('ord-4242')).to.be.true();
            expect(postgresIndexable('a1b')).to.be.true();
        });

        it('is false for what pg_trgm cannot read (shorter runs, punctuation, non-ASCII letters, marks)', () => {
            for (const needle of ['ab', 'a-b-c', '!!!', 'äöü', 'ab\u0003cde']) {
                expect(postgresIndexable(needle), needle).to.be.false();
            }
        });
    });

    describe('likeContains()', () => {
        it('escapes %, _ and \\', () => {
            expect(likeContains('50%_a\\b')).to.equal('%50\\%\\_a\\\\b%');
        });
    });

    describe('SQLite', () => {
        let dir: string;
        let knex: Knex;
        let store: RecordStore;

        before(async () => {
            dir = await tempDir('search-index');
            knex = openSqliteKnex(`${dir}/inbox-capture.sqlite`);
            store = createKnexRecordStore({ knex });
            await store.migrate();
        });

        after(async () => {
            await store.close();
            await knex.destroy();
            await removeDir(dir);
        });

        /** The index's documents and the emails they must match, rowid for seq. */
        const documents = async () => (await knex('email_search_docsize').select('id').orderBy('id') as { id: number }[]).map((r) => r.id);
        const rows = async () => (await knex('emails').select('seq').whereNotNull('body_folded').orderBy('seq') as { seq: number }[]).map((r) => r.seq);

        it('holds one document per email through every save, replacement and delete', async () => {
            const inbox = 'docs';
            const [a, b] = await saveEach(store, [draft(inbox, 1, { body: 'alpha' }), draft(inbox, 2, { body: 'beta' })]);
            const replacing = draft(inbox, 3, { body: 'gamma' });
            await store.saveEmails([replacing]);
            await store.saveEmails([{ ...draft(inbox, 4, { body: 'delta' }), sourceId: replacing.sourceId }]);
            await store.saveEmails([draft(inbox, 5), draft(inbox, 6)]);
            await store.deleteEmail(a!);
            await store.deleteReceivedBeforeBatch(0, 10);
            await store.deleteBeyondNewestBatch(inbox, 3, 10);
            await store.setTags(b!, ['x']);
            expect(await documents()).to.equal(await rows());
            while ((await store.deleteInboxBatch(inbox, 2)).length > 0) {
                // Until empty.
            }

            expect(await documents()).to.equal(await rows());
        });

        it('indexes a body written in pieces whole, once its last piece is in', async () => {
            const inbox = 'long-body';
            const body = `${'x'.repeat(TEXT_PIECE_CHARS + 10)} the end word9`;
            const [id] = await saveEach(store, [draft(inbox, 1, { body }), ...windowDrafts(inbox, 'other', 0)]);
            expect(await ids(store, inbox, 'word9')).to.equal([id]);
            expect(await documents()).to.equal(await rows());
        });

        it('reads the older emails through the index: the inbox\'s order index, the candidates a set, no scan of the table', async () => {
            const inbox = 'plan';
            const matching = await saveEach(store, windowDrafts(inbox, 'needle42', 3));
            expect(await ids(store, inbox, 'needle42')).to.equal(matching.slice(0, 3).reverse());
            const statement = await lastStatement(knex, store, inbox, 'body:needle42');
            const plan = (await knex.raw(`EXPLAIN QUERY PLAN ${statement.sql}`, statement.bindings as Knex.RawBinding[]) as { detail: string }[]).map((r) => r.detail);
            expect(plan.join('\n')).to.match(/SEARCH emails USING INDEX emails_inbox_order/);
            expect(plan.join('\n')).to.match(/SCAN email_search VIRTUAL TABLE INDEX 0:M/);
            expect(plan.join('\n')).to.not.match(/SCAN emails(?! USING)|TEMP B-TREE/);
        });

        it('answers the same without an index (an SQLite without FTS5 trigram), reading the inbox', async () => {
            const inbox = 'no-index';
            const matching = await saveEach(store, windowDrafts(inbox, 'needle43', 2));
            const plain = openSqliteKnex(`${dir}/plain.sqlite`);
            const other = createKnexRecordStore({ knex: plain });
            try {
                await other.migrate();
                await plain.raw('DROP TRIGGER email_search_on_delete');
                await plain.raw('DROP TABLE email_search');
                const without = createKnexRecordStore({ knex: plain });
                const saved = await saveEach(without, windowDrafts(inbox, 'needle43', 2));
                expect(await ids(without, inbox, 'needle43')).to.equal(saved.slice(0, 2).reverse());
                expect(await ids(store, inbox, 'needle43')).to.equal(matching.slice(0, 2).reverse());
                await without.close();
            }
            finally {
                await other.close();
                await plain.destroy();
            }
        });
    });

    describe('SQLite in memory (the Knex save path)', () => {
        it('adds the documents of what it saves, and finds them past the window', async () => {
            const knex = openSqliteKnex(':memory:');
            const store = createKnexRecordStore({ knex, destroyKnexOnClose: true });
            try {
                await store.migrate();
                const matching = await saveEach(store, windowDrafts('memory', 'needle44', 2));
                expect(await ids(store, 'memory', 'needle44')).to.equal(matching.slice(0, 2).reverse());
                const documents = await knex('email_search_docsize').count({ n: '*' }).first() as { n: number };
                expect(Number(documents.n)).to.equal(SEARCH_WINDOW + 12);
            }
            finally {
                await store.close();
            }
        });
    });

    describe('Postgres', () => {
        let server: PostgresServer;
        let migrated: MigratedStore;
        let knex: Knex;
        let store: RecordStore;

        before(async () => {
            server = await startPostgres();
            const [, open] = migratedStores(() => server, () => '').find(([name]) => name === 'Postgres')!;
            migrated = await open();
            ({ knex, store } = migrated);
        });

        after(async () => {
            await migrated.close();
            await server.stop();
        });

        it('answers the same without the index (a Postgres without pg_trgm), reading the inbox', async () => {
            const inbox = 'no-index';
            const matching = await saveEach(store, windowDrafts(inbox, 'needle46', 2));
            await knex.raw('DROP INDEX emails_search_trgm');
            try {
                expect(await ids(store, inbox, 'needle46')).to.equal(matching.slice(0, 2).reverse());
                expect(await ids(store, inbox, 'body:needle46 -filler')).to.equal(matching.slice(0, 2).reverse());
            }
            finally {
                await knex.raw('CREATE INDEX emails_search_trgm ON emails USING gin (inbox, body_folded gin_trgm_ops)');
            }
        });

        it('has the GIN index on the inbox and the folded body', async () => {
            const [index] = await knex('pg_indexes').select('indexdef').where({ indexname: 'emails_search_trgm' }) as { indexdef: string }[];
            expect(index!.indexdef).to.contain('USING gin (inbox, body_folded gin_trgm_ops)');
            expect(index!.indexdef).to.contain('gin_trgm_ops');
        });

        it('reads the older emails through the trigram index on inbox and body', async () => {
            const inbox = 'plan';
            // 20,000 emails in one statement (the store would take seconds): the plan is under test; the three oldest match.
            await knex.raw(`
                INSERT INTO emails (message_id, message_id_hash, source_id, source_id_hash, inbox, sender, recipient, subject, sender_folded,
                    subject_folded, body, html_body, received_at, raw_key, raw_size, has_attachments, attachments, recipient_folded, filenames_folded, body_folded)
                SELECT 'gen-' || g || '@x', md5(g::text) || md5('id' || g), 'gen-' || g || '@x', md5(g::text) || md5('id' || g), ?, 'a@x', 'plan@x',
                    'Subject ' || g, 'a@x', 'subject ' || g, 'body', '', ?::bigint + g, 'raw-' || g, 100, false, '[]', 'plan@x', '',
                    CASE WHEN g <= 3 THEN 'has needle45 inside' ELSE 'filler text number ' || g END
                FROM generate_series(1, 20000) AS g`, [inbox, BASE_TIME]);
            await knex.raw('ANALYZE emails');
            expect(await ids(store, inbox, 'needle45')).to.equal(['gen-3@x', 'gen-2@x', 'gen-1@x']);
            const statement = await lastStatement(knex, store, inbox, 'body:needle45');
            const sql = statement.sql.replace(/\$\d+/g, '?');
            const plan = ((await knex.raw(`EXPLAIN ${sql}`, statement.bindings as Knex.RawBinding[])) as { rows: { 'QUERY PLAN': string }[] }).rows.map((r) => r['QUERY PLAN']).join('\n');
            expect(plan).to.contain('Bitmap Index Scan on emails_search_trgm');
            expect(plan).to.not.contain('Seq Scan');
        });
    });
});
