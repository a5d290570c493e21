import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import { createKnexRecordStore } from '../../../lib/record-store/knex-record-store';
import { down as dropTrigrams, TRIGRAM_INDEXES } from '../../../lib/record-store/sql/migrations/20261121120000_search_trigrams';
import { openPostgresKnex } from '../../../lib/record-store/postgres/postgres-knex';
import type { RecordStore } from '../../../lib/record-store/record-store';
import type { ListQuery } from '../../../lib/types';
import { BASE_TIME } from '../../helpers/email-draft';
import { startPostgres, type PostgresServer } from '../../helpers/postgres';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** Rows of the searched inbox: enough that the planner weighs reading them all. */
const ROWS = 20_000;
const INBOX = 'search';

describe('Postgres record store', () => {
    let server: PostgresServer;
    let knex: Knex;
    let store: RecordStore;

    before(async () => {
        server = await startPostgres();
        knex = openPostgresKnex(await server.createDatabase());
        store = createKnexRecordStore({ knex, destroyKnexOnClose: true });
        await store.migrate();
        // One statement instead of the store (seconds): the plan is under test here.
        // Every row is in the searched inbox, so without an index on the text the
        // cheapest way to prove "no match" is to read the whole table.
        await knex.raw(`
            INSERT INTO emails (message_id, message_id_hash, source_id, source_id_hash, inbox, sender, recipient,
                subject, sender_folded, subject_folded, body, html_body, received_at, raw_key, raw_size,
                has_attachments, attachments)
            SELECT 'gen-' || g || '@example.test', md5(g::text) || md5('id' || g), 'gen-' || g || '@example.test',
                md5(g::text) || md5('id' || g), ?, 'Sender' || (g % 50) || '@example.test', 'x@example.test',
                'Invoice ' || g, 'sender' || (g % 50) || '@example.test', 'invoice ' || g,
                'body', '', ?::bigint + g, 'raw-' || g, 100, false, '[]'
            FROM generate_series(1, ${ROWS}) AS g`, [INBOX, BASE_TIME]);
        await knex.raw('ANALYZE emails');
    });

    after(async () => {
        await store?.close();
        await server?.stop();
    });

    // EXPLAIN of the statement listEmails() really sends, captured from knex.
    const planOf = async (query: ListQuery): Promise<string> => {
        const statements: { sql: string; bindings: unknown[] }[] = [];
        const onQuery = (q: { sql: string; bindings: unknown[] }) => statements.push(q);
        knex.on('query', onQuery);
        try {
            await store.listEmails(query);
        }
        finally {
            knex.off('query', onQuery);
        }

        expect(statements).to.have.length(1);
        const sql = statements[0]!.sql.replace(/\$\d+/g, '?');
        const result = await knex.raw(`EXPLAIN ${sql}`, statements[0]!.bindings as Knex.RawBinding[]) as { rows: { 'QUERY PLAN': string }[] };
        return result.rows.map((r) => r['QUERY PLAN']).join('\n');
    };

    describe('migrate()', () => {
        it('creates trigram indexes for the sender and subject searches', async () => {
            const rows = await knex('pg_indexes').select('indexname', 'indexdef').where({ tablename: 'emails' }) as { indexname: string; indexdef: string }[];
            for (const [column, index] of Object.entries(TRIGRAM_INDEXES)) {
                const found = rows.find((r) => r.indexname === index);
                expect(found, index).to.exist();
                expect(found!.indexdef).to.contain(`gin (${column} gin_trgm_ops)`);
            }
        });
    });

    describe('listEmails()', () => {
        it('answers a sender search that matches nothing from the trigram index, not a table scan', async () => {
            const plan = await planOf({ inbox: INBOX, limit: 50, sender: 'nobody-at-all' });
            expect(plan).to.contain(`Bitmap Index Scan on ${TRIGRAM_INDEXES.sender_folded}`);
            expect(plan).to.not.contain('Seq Scan');
            expect((await store.listEmails({ inbox: INBOX, limit: 50, sender: 'nobody-at-all' })).records).to.equal([]);
        });

        it('answers a subject search that matches nothing from the trigram index, not a table scan', async () => {
            const plan = await planOf({ inbox: INBOX, limit: 50, subject: 'no such subject' });
            expect(plan).to.contain(`Bitmap Index Scan on ${TRIGRAM_INDEXES.subject_folded}`);
            expect(plan).to.not.contain('Seq Scan');
        });

        it('finds the same rows through the index as without it (LIKE escapes included)', async () => {
            const queries: ListQuery[] = [
                { inbox: INBOX, limit: 100, sender: 'SENDER7@' },
                { inbox: INBOX, limit: 100, subject: 'voice 12345' },
                { inbox: INBOX, limit: 100, sender: '%' },
                { inbox: INBOX, limit: 100, subject: 'invoice_1' }
            ];
            const indexed = await Promise.all(queries.map((q) => store.listEmails(q)));
            await knex.transaction(async (trx) => {
                await dropTrigrams(trx);
                const plain = createKnexRecordStore({ knex: trx as unknown as Knex });
                for (const [i, q] of queries.entries()) {
                    expect((await plain.listEmails(q)).records, JSON.stringify(q)).to.equal(indexed[i]!.records);
                }

                // The data is one where, without the indexes, the planner reads the table:
                // what the plan tests above guard against.
                const bare = await trx.raw(`EXPLAIN SELECT seq FROM emails WHERE inbox = ? AND sender_folded LIKE '%nobody-at-all%'
                    ORDER BY received_at DESC, left(message_id, 256) DESC, message_id DESC LIMIT 51`, [INBOX]) as { rows: { 'QUERY PLAN': string }[] };
                expect(bare.rows.map((r) => r['QUERY PLAN']).join('\n')).to.contain('Seq Scan on emails');

                // Leaves the indexes in place for the other tests.
                await trx.rollback();
            }).catch((err: unknown) => {
                // knex rejects a transaction rolled back on purpose with no error.
                if (err !== undefined) {
                    throw err;
                }
            });

            expect(indexed[0]!.records.length).to.be.above(0);
            expect(indexed[0]!.records.every((r) => r.sender.toLowerCase().includes('sender7@'))).to.be.true();
            expect(indexed[1]!.records.map((r) => r.subject)).to.equal(['Invoice 12345']);
            expect(indexed[2]!.records).to.equal([]);
            expect(indexed[3]!.records).to.equal([]);
        });
    });
});
