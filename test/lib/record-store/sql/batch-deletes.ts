import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import { sha256Hex } from '../../../../lib/identity/ids';
import { beyondNewestQuery, inboxesOverQuery, lastKeptQuery, receivedBeforeQuery } from '../../../../lib/record-store/sql/batch-deletes';
import { toInsertRow } from '../../../../lib/record-store/sql/rows';
import { BASE_TIME, draft } from '../../../helpers/email-draft';
import { openPlannedPostgres, openPlannedSqlite, type PlannedDatabase } from '../../../helpers/planned-database';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** Emails the plan tests seed: enough that a scan costs more than an index to either planner. */
const EMAILS = 20_000;
/** Inboxes they are spread over. */
const INBOXES = 200;
/** A cutoff that a tenth of the seeded emails are older than. */
const CUTOFF = BASE_TIME + EMAILS / 10;

// Email i goes to inbox i % INBOXES, received at BASE_TIME + i, written by hand in big statements.
async function seed(knex: Knex): Promise<void> {
    const rows: Record<string, unknown>[] = [];
    for (let i = 0; i < EMAILS; ++i) {
        const record = { ...draft(`box-${i % INBOXES}`, i), messageId: `m${i}@plan`, links: [], codes: [] };
        rows.push(toInsertRow({ record, searchText: record.searchText, sourceHash: sha256Hex(record.sourceId), messageHash: sha256Hex(record.messageId) }));
    }

    for (let i = 0; i < rows.length; i += 500) {
        await knex('emails').insert(rows.slice(i, i + 500));
    }

    await knex.raw('ANALYZE');
}

/** The SQL and bindings of a builder, locked as the store locks it on Postgres. */
const sqlOf = (q: Knex.QueryBuilder, pg: boolean) => (pg ? q.forUpdate().skipLocked() : q).toSQL();

describe('batch-deletes', () => {

    describe('on SQLite (EXPLAIN QUERY PLAN)', () => {
        let db: PlannedDatabase<string[]>;

        before(async () => {
            db = await openPlannedSqlite(seed);
        });

        after(async () => {
            await db.close();
        });

        it('receivedBeforeQuery() seeks the received_at index, oldest first, without a sort', async () => {
            expect(await db.plan(sqlOf(receivedBeforeQuery(db.knex, CUTOFF, 25, false), false))).to.equal(['SEARCH emails USING INDEX emails_received_at (received_at<?)']);
        });

        it('beyondNewestQuery() reads the inbox order index for the boundary and for the batch', async () => {
            expect(await db.plan(sqlOf(lastKeptQuery(db.knex, 'box-7', 10, false), false))).to.equal(['SEARCH emails USING COVERING INDEX emails_inbox_order (inbox=?)']);
            const beyond = await beyondNewestQuery(db.knex, 'box-7', 10, 25, false);
            // A seek to the boundary, then the index in order: no sort, no scan.
            expect(await db.plan(sqlOf(beyond!.select, false))).to.equal(['SEARCH emails USING INDEX emails_inbox_order (inbox=? AND (received_at,message_id)<(?,?))']);
        });

        it('inboxesOverQuery() reads only the summary, by its primary key', async () => {
            for (const after of [undefined, 'box-5']) {
                const steps = await db.plan(sqlOf(inboxesOverQuery(db.knex, 50, after, 500), false));
                expect(steps).to.equal([after ? 'SEARCH inboxes USING PRIMARY KEY (name>?)' : 'SCAN inboxes']);
            }
        });
    });

    describe('on Postgres (EXPLAIN)', () => {
        let db: PlannedDatabase<string>;

        before(async () => {
            db = await openPlannedPostgres(seed);
        });

        after(async () => {
            await db.close();
        });

        it('receivedBeforeQuery() scans the expiry index in order, never the table', async () => {
            const text = await db.plan(sqlOf(receivedBeforeQuery(db.knex, CUTOFF, 25, true), true));
            expect(text).to.not.include('Seq Scan');
            expect(text).to.not.include('Sort');
            expect(text).to.match(/Index Scan using emails_expiry on emails/);
        });

        it('beyondNewestQuery() reads the inbox order index, never the table', async () => {
            const last = await db.plan(lastKeptQuery(db.knex, 'box-7', 10, true).toSQL());
            expect(last).to.not.include('Seq Scan');
            expect(last).to.match(/Index (Only )?Scan Backward using emails_inbox_order on emails/);
            const beyond = await beyondNewestQuery(db.knex, 'box-7', 10, 25, true);
            const text = await db.plan(sqlOf(beyond!.select, true));
            expect(text).to.not.include('Seq Scan');
            expect(text).to.match(/Index Scan (Backward )?using emails_inbox_order on emails/);
        });

        it('inboxesOverQuery() reads only the summary', async () => {
            const text = await db.plan(sqlOf(inboxesOverQuery(db.knex, 50, 'box-5', 500), true));
            expect(text).to.not.include('emails');
            expect(text).to.match(/on inboxes/);
        });
    });
});
