import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import { sha256Hex } from '../../../../lib/identity/ids';
import { inboxPageQuery, toInboxPage } from '../../../../lib/record-store/sql/inbox-page';
import { toInsertRow } from '../../../../lib/record-store/sql/rows';
import type { InboxQuery } from '../../../../lib/types';
import { BASE_TIME, draft } from '../../../helpers/email-draft';
import { openPlannedPostgres, openPlannedSqlite, type PlannedDatabase } from '../../../helpers/planned-database';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** Inboxes the plan tests seed: enough that a scan costs more than an index to either planner. */
const INBOXES = 20_000;

// The queries a request can make: first page, a later page, with a prefix, both.
const QUERIES: Array<[string, InboxQuery]> = [
    ['the first page', { limit: 50 }],
    ['a later page', { limit: 50, after: { lastReceivedAt: BASE_TIME + 12_345, name: 'box-12345' } }],
    ['a prefix', { limit: 50, prefix: 'box-012' }],
    ['a prefix and a later page', { limit: 50, prefix: 'box-012', after: { lastReceivedAt: BASE_TIME + 1_205, name: 'box-01205' } }]
];

// One email per inbox, and a second one in every tenth, written by hand in big statements.
async function seed(knex: Knex): Promise<void> {
    const rows: Record<string, unknown>[] = [];
    for (let i = 0; i < INBOXES; ++i) {
        const inbox = `box-${String(i).padStart(5, '0')}`;
        for (let copy = 0; copy < (i % 10 === 0 ? 2 : 1); ++copy) {
            const record = { ...draft(inbox, i - copy), messageId: `${inbox}-${copy}@plan`, links: [], codes: [] };
            rows.push(toInsertRow({ record, searchText: record.searchText, sourceHash: sha256Hex(record.sourceId), messageHash: sha256Hex(record.messageId) }));
        }
    }

    for (let i = 0; i < rows.length; i += 500) {
        await knex('emails').insert(rows.slice(i, i + 500));
    }

    await knex.raw('ANALYZE');
}

describe('inbox-page', () => {

    describe('toInboxPage()', () => {
        it('keeps `limit` rows, says whether one more came, and turns bigint strings into numbers', () => {
            const rows = [
                { name: 'a', email_count: '3', last_received_at: '1700000000002' },
                { name: 'b', email_count: 1, last_received_at: 1700000000001 }
            ];
            expect(toInboxPage(rows, 1)).to.equal({ inboxes: [{ name: 'a', count: 3, lastReceivedAt: 1700000000002 }], hasMore: true });
            expect(toInboxPage(rows, 2).hasMore).to.be.false();
        });
    });

    describe('inboxPageQuery() on SQLite (EXPLAIN QUERY PLAN)', () => {
        let db: PlannedDatabase<string[]>;

        before(async () => {
            db = await openPlannedSqlite(seed);
        });

        after(async () => {
            await db.close();
        });

        const plan = (sql: string, bindings: readonly unknown[]) => db.plan({ sql, bindings });

        for (const [title, query] of QUERIES) {
            it(`reads ${title} through an index of the summary, never the emails`, async () => {
                const { sql, bindings } = inboxPageQuery(db.knex, query).toSQL();
                const steps = await plan(sql, bindings);
                expect(steps.join(' | ')).to.not.include('emails');
                for (const step of steps.filter((s) => s.includes('inboxes'))) {
                    // "SCAN inboxes" alone is a full scan; "SCAN ... USING INDEX" reads the order index in order.
                    expect(step, title).to.match(/^(SEARCH inboxes USING (PRIMARY KEY|INDEX inboxes_recent) \(|SCAN inboxes USING INDEX inboxes_recent$)/);
                }

                if (!query.prefix) {
                    // The index gives the order: no sort, so the read stops after the page.
                    expect(steps.join(' | '), title).to.not.include('TEMP B-TREE');
                }
            });
        }

        it('finds an inbox\'s next newest email with one index seek (the delete trigger\'s fallback)', async () => {
            expect(await plan('SELECT max(received_at) FROM emails WHERE inbox = ?', ['box-00010'])).to.equal(['SEARCH emails USING COVERING INDEX emails_inbox_order (inbox=?)']);
        });
    });

    describe('inboxPageQuery() on Postgres (EXPLAIN)', () => {
        let db: PlannedDatabase<string>;

        before(async () => {
            db = await openPlannedPostgres(seed);
        });

        after(async () => {
            await db.close();
        });

        const plan = (sql: string, bindings: readonly unknown[]) => db.plan({ sql, bindings });

        for (const [title, query] of QUERIES) {
            it(`reads ${title} through an index of the summary, never the emails`, async () => {
                const { sql, bindings } = inboxPageQuery(db.knex, query).toSQL();
                const text = await plan(sql, bindings);
                expect(text, title).to.not.include('Seq Scan');
                expect(text, title).to.not.include('emails');
                expect(text, title).to.match(/Index (Only )?Scan (Backward )?using (inboxes_recent|inboxes_pkey) on inboxes/);
                if (!query.prefix) {
                    expect(text, title).to.include('Index Scan using inboxes_recent on inboxes');
                    expect(text, title).to.not.include('Sort');
                }
            });
        }

        it('finds an inbox\'s next newest email with one index probe (the delete trigger\'s fallback)', async () => {
            const text = await plan('SELECT max(received_at) FROM emails WHERE inbox = ?', ['box-00010']);
            expect(text).to.not.include('Seq Scan');
            expect(text).to.match(/Index Only Scan Backward using emails_inbox_order on emails/);
        });
    });
});
