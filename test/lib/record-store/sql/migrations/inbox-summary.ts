import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import { sha256Hex } from '../../../../../lib/identity/ids';
import { createKnexRecordStore } from '../../../../../lib/record-store/knex-record-store';
import { migratorConfig } from '../../../../../lib/record-store/sql/migration-source';
import { openPostgresKnex } from '../../../../../lib/record-store/postgres/postgres-knex';
import type { RecordStore } from '../../../../../lib/record-store/record-store';
import { toInsertRow } from '../../../../../lib/record-store/sql/rows';
import { openSqliteKnex } from '../../../../../lib/sqlite/knex';
import { BASE_TIME, draft } from '../../../../helpers/email-draft';
import { startPostgres, type PostgresServer } from '../../../../helpers/postgres';
import { tempDir } from '../../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const MIGRATION = '20261124200000_inbox_summary';

/** An `emails` row written by hand, as the CLI, a bench seeder or a DBA would, bypassing the store. */
function emailRow(inbox: string, n: number): Record<string, unknown> {
    const record = { ...draft(inbox, n), messageId: `${inbox}-${n}-${Math.random()}@hand`, links: [], codes: [] };
    return toInsertRow({ record, searchText: record.searchText, sourceHash: sha256Hex(record.sourceId), messageHash: sha256Hex(record.messageId) });
}

/** The summary as stored, and as the emails say it must be. */
async function summaryAndTruth(knex: Knex): Promise<{ summary: unknown[]; truth: unknown[] }> {
    const summary = (await knex.raw('SELECT name, email_count AS n, last_received_at AS t FROM inboxes ORDER BY name')) as unknown;
    const truth = (await knex.raw('SELECT inbox AS name, count(*) AS n, max(received_at) AS t FROM emails GROUP BY inbox ORDER BY inbox')) as unknown;
    const rows = (r: unknown) => ((r as { rows?: unknown[] }).rows ?? r as unknown[]).map((x) => {
        const { name, n, t } = x as { name: string; n: number | string; t: number | string };
        return { name, n: Number(n), t: Number(t) };
    }).sort((a, b) => (a.name < b.name ? -1 : 1));
    return { summary: rows(summary), truth: rows(truth) };
}

interface Backend {
    name: string;
    /** A fresh database and a Knex on it (not migrated). */
    open(): Promise<{ knex: Knex; cleanup(): Promise<void> }>;
}

let postgres: PostgresServer | undefined;

const backends: Backend[] = [
    {
        name: 'sqlite',
        async open() {
            const dir = await tempDir('inbox-summary');
            const knex = openSqliteKnex(join(dir, 'inbox-capture.sqlite'));
            return { knex, cleanup: async () => {
                await knex.destroy();
                await rm(dir, { recursive: true, force: true });
            } };
        }
    },
    {
        name: 'postgres',
        async open() {
            postgres ??= await startPostgres();
            const knex = openPostgresKnex(await postgres.createDatabase());
            return { knex, cleanup: () => knex.destroy() };
        }
    }
];

after(async () => {
    await postgres?.stop();
});

describe('migration 20261124200000_inbox_summary', () => {
    for (const backend of backends) {
        describe(backend.name, () => {
            let knex: Knex;
            let store: RecordStore;
            let cleanup: () => Promise<void>;

            before(async () => {
                ({ knex, cleanup } = await backend.open());
                store = createKnexRecordStore({ knex });
                await store.migrate();
            });

            after(async () => {
                await store.close();
                await cleanup();
            });

            it('fills the summary from the emails already stored, and its down() removes it all', async () => {
                await knex.migrate.down({ ...migratorConfig, name: MIGRATION });
                expect(await knex.schema.hasTable('inboxes')).to.be.false();
                await knex('emails').insert([emailRow('fill-a', 1), emailRow('fill-a', 9), emailRow('fill-b', 4)]);
                await knex.migrate.latest(migratorConfig);
                expect((await store.listInboxes({ limit: 10, prefix: 'fill-' })).inboxes).to.equal([
                    { name: 'fill-a', count: 2, lastReceivedAt: BASE_TIME + 9 },
                    { name: 'fill-b', count: 1, lastReceivedAt: BASE_TIME + 4 }
                ]);
                // And the triggers are back: a write by hand shows at once.
                await knex('emails').insert(emailRow('fill-b', 12));
                expect((await store.listInboxes({ limit: 1, prefix: 'fill-' })).inboxes).to.equal([{ name: 'fill-b', count: 2, lastReceivedAt: BASE_TIME + 12 }]);
            });

            it('empties with the emails, whether deleted by hand without a condition or (Postgres) truncated', async () => {
                await store.saveEmails([draft('empty-a', 1), draft('empty-b', 2)]);
                expect((await store.listInboxes({ limit: 10 })).inboxes.length).to.be.above(1);
                await knex('email_blobs').delete();
                await (backend.name === 'postgres' ? knex.raw('TRUNCATE emails CASCADE') : knex('emails').delete());
                expect(await store.listInboxes({ limit: 10 })).to.equal({ inboxes: [], hasMore: false });
                await store.saveEmails([draft('empty-a', 3)]);
                expect((await store.listInboxes({ limit: 10 })).inboxes).to.equal([{ name: 'empty-a', count: 1, lastReceivedAt: BASE_TIME + 3 }]);
            });

            it('stays exact through every path that writes or deletes, in any mix', async () => {
                const inboxes = ['mix-a', 'mix-b', 'mix-c', 'mix-d'];
                let n = 0;
                const pick = () => inboxes[Math.floor(Math.random() * inboxes.length)]!;
                for (let round = 0; round < 12; ++round) {
                    const ids = (await Promise.all([
                        // Batched saves of several deliveries, some multi-inbox.
                        store.saveEmails([draft(pick(), ++n), draft(pick(), ++n)]),
                        store.saveEmails([draft(pick(), ++n)]),
                        store.saveEmails([draft(pick(), Math.floor(Math.random() * n))])
                    ])).flatMap((r) => r.saved.map((s) => s.messageId));
                    await knex('emails').insert([emailRow(pick(), ++n), emailRow(pick(), ++n)]);
                    await store.deleteEmail(ids[Math.floor(Math.random() * ids.length)]!);
                    if (round % 4 === 3) {
                        await store.deleteInboxBatch(pick(), 3);
                        // A multi-row delete by hand across inboxes (the CLI's gc does this by age).
                        await knex('emails').whereIn('inbox', [pick(), pick()]).andWhere('received_at', '<', BASE_TIME + n / 2).delete();
                    }

                    const { summary, truth } = await summaryAndTruth(knex);
                    expect(summary, `round ${round}`).to.equal(truth);
                }
            });
        });
    }

    describe('postgres, concurrent writers', () => {
        let urls: string;
        const knexes: Knex[] = [];
        const open = () => {
            const k = openPostgresKnex(urls);
            knexes.push(k);
            return k;
        };

        before(async () => {
            postgres ??= await startPostgres();
            urls = await postgres.createDatabase();
            const store = createKnexRecordStore({ knex: open() });
            await store.migrate();
            await store.close();
        });

        after(async () => {
            await Promise.all(knexes.map((k) => k.destroy()));
        });

        // Backends of this database waiting for a lock.
        const waitingOnLocks = async (knex: Knex) => {
            const result = await knex.raw("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'") as { rows: { n: string }[] };
            return Number(result.rows[0]!.n);
        };

        it('never deadlocks two batches that write the same inboxes in opposite orders', async () => {
            const [setup, a, b, holder] = [open(), open(), open(), open()];
            const names = Array.from({ length: 20 }, (_, i) => `dl-${String(i).padStart(2, '0')}`);
            await setup('emails').insert(names.map((name) => emailRow(name, 0)));

            // A third transaction holds the middle inbox's summary row, so both batches are
            // sure to be mid-way when it lets go: A has taken the rows before it, and would
            // B, were rows locked in the order of the batch rather than by name.
            const middle = names[10]!;
            let release!: () => void;
            const released = new Promise<void>((resolve) => { release = resolve; });
            const held = holder.transaction(async (trx) => {
                await trx.raw('SELECT 1 FROM inboxes WHERE name = ? FOR UPDATE', [middle]);
                await released;
            });
            await new Promise((resolve) => setTimeout(resolve, 50));

            const batch = (knex: Knex, order: string[], n: number) => knex.transaction(async (trx) => {
                // One statement, rows in the batch's order.
                await trx('emails').insert(order.map((name) => emailRow(name, n)));
            });
            const first = batch(a, names, 1);
            const second = batch(b, [...names].reverse(), 2);
            for (let i = 0; i < 200 && await waitingOnLocks(setup) < 2; ++i) {
                await new Promise((resolve) => setTimeout(resolve, 10));
            }

            expect(await waitingOnLocks(setup)).to.equal(2);
            release();
            await held;
            await Promise.all([first, second]);
            const { summary, truth } = await summaryAndTruth(setup);
            expect(summary).to.equal(truth);
            expect(summary).to.equal(names.map((name) => ({ name, n: 3, t: BASE_TIME + 2 })));
        });

        it('stays exact with two processes saving and deleting over the same inboxes at once', async () => {
            const one = createKnexRecordStore({ knex: open() });
            const two = createKnexRecordStore({ knex: open() });
            try {
                const inboxes = Array.from({ length: 6 }, (_, i) => `both-${i}`);
                let n = 0;
                const work = (store: RecordStore, reverse: boolean) => Promise.all(Array.from({ length: 30 }, async (_, i) => {
                    const order = reverse ? [...inboxes].reverse() : inboxes;
                    const saved = await store.saveEmails(order.slice(i % 3).map((inbox) => draft(inbox, ++n)));
                    if (i % 5 === 4) {
                        await store.deleteEmail(saved.saved[0]!.messageId);
                        await store.deleteInboxBatch(order[i % order.length]!, 2);
                    }
                }));
                await Promise.all([work(one, false), work(two, true)]);
                const { summary, truth } = await summaryAndTruth(knexes[0]!);
                expect(summary).to.equal(truth);
                expect((summary as unknown[]).length).to.be.above(0);
            }
            finally {
                await one.close();
                await two.close();
            }
        });
    });
});
