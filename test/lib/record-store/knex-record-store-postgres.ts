import { randomBytes } from 'node:crypto';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import { createKnexRecordStore, DEFAULT_NOTIFY_CHANNEL } from '../../../lib/record-store/knex-record-store';
import { migrationSource, MIGRATIONS_TABLE_NAME } from '../../../lib/record-store/sql/migration-source';
import { openPostgresKnex } from '../../../lib/record-store/postgres/postgres-knex';
import type { RecordStore } from '../../../lib/record-store/record-store';
import type { RecordPage } from '../../../lib/types';
import { recordStoreContract } from '../../contracts/record-store-contract';
import { recordStoreInboxesContract } from '../../contracts/record-store-inboxes-contract';
import { recordStoreRelayContract } from '../../contracts/record-store-relay-contract';
import { recordStoreSearchContract } from '../../contracts/record-store-search-contract';
import { capturedStatement } from '../../helpers/captured-statement';
import { BASE_TIME, draft } from '../../helpers/email-draft';
import { startPostgres, type PostgresServer } from '../../helpers/postgres';

const { expect } = Code;
const lab = exports.lab = Lab.script();
const { describe, it, before, after } = lab;

/** Collects what a watcher hears and lets a test wait for a given inbox. */
function recorder() {
    const heard: string[] = [];
    const waiting = new Map<string, () => void>();
    return {
        heard,
        listener: (inbox: string) => {
            heard.push(inbox);
            waiting.get(inbox)?.();
        },
        until: (inbox: string) => new Promise<void>((resolve) => {
            if (heard.includes(inbox)) {
                resolve();
                return;
            }

            waiting.set(inbox, resolve);
        })
    };
}

/** How generated emails (g = 1 .. 20,000) are spread: SQL over `g`, with `?` taken from `bindings` in this order. */
interface Generated {
    /** Prefix of each message id and salt of its hash. */
    name: string;
    inbox: string;
    receivedAt: string;
    hasAttachments: string;
    bindings: unknown[];
}

/**
 * 20,000 emails written in one statement (the store would take seconds), then ANALYZE:
 * for plan tests, where the plan is under test, not saveEmails().
 */
async function insertGenerated(knex: Knex, g: Generated): Promise<void> {
    await knex.raw(`
        INSERT INTO emails (message_id, message_id_hash, source_id, source_id_hash, inbox, sender, recipient,
            subject, sender_folded, subject_folded, body, html_body, received_at, raw_key, raw_size,
            has_attachments, attachments)
        SELECT '${g.name}-' || g || '@example.test', md5(g::text) || md5('${g.name}' || g), '${g.name}-' || g || '@example.test',
            md5(g::text) || md5('${g.name}' || g), ${g.inbox},
            'alice@example.test', 'x@example.test', 'Subject ' || g, 'alice@example.test', 'subject ' || g,
            'body', '', ${g.receivedAt}, 'raw-' || g, 100, ${g.hasAttachments}, '[]'
        FROM generate_series(1, 20000) AS g`, g.bindings as Knex.RawBinding[]);
    await knex.raw('ANALYZE');
}

/** The plan (`explain`: EXPLAIN and its options) of the one statement `run` sends, captured from knex. */
async function planOf(knex: Knex, run: () => Promise<unknown>, explain = 'EXPLAIN'): Promise<string[]> {
    const { sql, bindings } = await capturedStatement(knex, run);
    const connection = await knex.client.acquireConnection() as {
        query(sql: string, values: unknown[]): Promise<{ rows: { 'QUERY PLAN': string }[] }>;
    };
    try {
        const result = await connection.query(`${explain} ${sql}`, bindings);
        return result.rows.map((r) => r['QUERY PLAN']);
    }
    finally {
        await knex.client.releaseConnection(connection);
    }
}

let server: PostgresServer;

before(async () => {
    server = await startPostgres();
});

after(async () => {
    await server.stop();
});

// A fresh, migrated store for each contract.
const openFresh = async () => {
    const knex = openPostgresKnex(await server.createDatabase());
    const store = createKnexRecordStore({ knex, destroyKnexOnClose: true });
    await store.migrate();
    return {
        store,
        cleanup: () => store.close()
    };
};

recordStoreContract(lab, 'postgres', openFresh);
recordStoreInboxesContract(lab, 'postgres', openFresh);
recordStoreSearchContract(lab, 'postgres', openFresh);
recordStoreRelayContract(lab, 'postgres', openFresh);

describe('Postgres record store', () => {
    // A migrated database of its own, as another process would open it.
    const openStore = async (url: string, notifyChannel?: string) => {
        const knex = openPostgresKnex(url);
        const store = createKnexRecordStore({ knex, destroyKnexOnClose: true, notifyChannel });
        await store.migrate();
        return { knex, store };
    };

    describe('migrate()', () => {
        it('lets several processes migrate a fresh database at once', async () => {
            const url = await server.createDatabase();
            const stores = await Promise.all([1, 2, 3].map(() => openStore(url)));
            try {
                const rows = await stores[0]!.knex(MIGRATIONS_TABLE_NAME).select('name') as { name: string }[];
                // Each migration once, in order, whichever process ran it.
                expect(rows.map((r) => r.name)).to.equal(await migrationSource.getMigrations([]));
                expect(rows.map((r) => r.name).slice(0, 2)).to.equal(['20261121000000_initial', '20261121120000_search_trigrams']);
                expect(await stores[0]!.knex.schema.hasTable('knex_migrations')).to.be.false();
            }
            finally {
                await Promise.all(stores.map((s) => s.store.close()));
            }
        });
    });

    describe('listEmails()', () => {
        let knex: Knex;
        let store: RecordStore;
        const inbox = 'plans';

        before(async () => {
            ({ knex, store } = await openStore(await server.createDatabase()));
            // 20,000 rows, a quarter in the inbox under test: enough that reading the
            // inbox and sorting it is an option the planner has to turn down.
            await insertGenerated(knex, {
                name: 'gen',
                inbox: `CASE WHEN g % 4 = 0 THEN ? ELSE 'other' || (g % 4) END`,
                receivedAt: '?::bigint + g % 97',
                hasAttachments: 'g % 2 = 0',
                bindings: [inbox, BASE_TIME]
            });
        });

        after(async () => {
            await store.close();
        });

        // A full sort of the inbox shows as a plain Sort node; an Incremental Sort
        // presorted by the index, which only orders rows that tie on (received_at,
        // id prefix), is the design.
        const fullSorts = (plan: string[]) => plan.filter((line) => /^\s*(->\s*)?Sort\s+\(/.test(line));
        const PRESORTED = 'Presorted Key: received_at, ("left"(message_id, 256))';

        it('reads the first page from the order index without sorting the inbox', async () => {
            const plan = await planOf(knex, () => store.listEmails({ inbox, limit: 20 }));
            expect(plan.join('\n')).to.contain('Index Scan Backward using emails_inbox_order on emails');
            expect(plan.join('\n')).to.contain(PRESORTED);
            expect(fullSorts(plan), plan.join('\n')).to.equal([]);
        });

        it('seeks a cursor page in the order index without sorting the inbox', async () => {
            const first = await store.listEmails({ inbox, limit: 20 });
            const last = first.records[19]!;
            const plan = await planOf(knex, () => store.listEmails({ inbox, limit: 20, after: { receivedAt: last.receivedAt, messageId: last.messageId } }));
            const text = plan.join('\n');
            expect(text).to.contain('Index Scan Backward using emails_inbox_order on emails');
            expect(text).to.match(/Index Cond: \(\(inbox = .*ROW\(received_at, "left"\(message_id, 256\)\) <= ROW/);
            expect(text).to.contain(PRESORTED);
            expect(fullSorts(plan), text).to.equal([]);
        });

        it('keeps the index order under filters', async () => {
            const plan = await planOf(knex, () => store.listEmails({ inbox, limit: 20, subject: 'subject 1', hasAttachments: false, receivedAfter: BASE_TIME }));
            expect(plan.join('\n')).to.contain('Index Scan Backward using emails_inbox_order on emails');
            expect(fullSorts(plan), plan.join('\n')).to.equal([]);
        });
    });

    describe('listEmails() of a busy inbox whose mail is older than all the rest', () => {
        let knex: Knex;
        let store: RecordStore;

        before(async () => {
            ({ knex, store } = await openStore(await server.createDatabase()));
            // Written in time order, as mail arrives: the first quarter, the oldest, all in
            // 'old'; the rest spread over nine newer inboxes.
            await insertGenerated(knex, {
                name: 'aged',
                inbox: `CASE WHEN g <= 5000 THEN 'old' ELSE 'new-' || (g % 9) END`,
                receivedAt: '?::bigint + g',
                hasAttachments: 'false',
                bindings: [BASE_TIME]
            });
        });

        after(async () => {
            await store.close();
        });

        it('reads the inbox order index, not every newer email of other inboxes newest first', async () => {
            let page: RecordPage | undefined;
            const plan = await planOf(knex, async () => {
                page = await store.listEmails({ inbox: 'old', limit: 50 });
            }, 'EXPLAIN (ANALYZE)');
            expect(page!.records.map((r) => r.messageId).slice(0, 2)).to.equal(['aged-5000@example.test', 'aged-4999@example.test']);

            const text = plan.join('\n');
            // A time index read newest first would pass the other inboxes' 15,000 emails by.
            expect(text).to.contain('Index Scan Backward using emails_inbox_order on emails');
            expect(text).to.not.contain('Rows Removed by Filter');
        });
    });

    describe('saveEmails()', () => {
        it('stores one record when two processes race 50 deliveries of one message', async () => {
            const url = await server.createDatabase();
            const a = await openStore(url);
            const b = await openStore(url);
            try {
                const d = draft('shared', 1);
                const all = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).store.saveEmails([{ ...d }])));
                expect(all.every((r) => r.saved[0]!.messageId === d.sourceId)).to.be.true();
                expect(all.flatMap((r) => r.replaced)).to.have.length(49);
                expect((await b.store.listEmails({ inbox: 'shared', limit: 10 })).records).to.have.length(1);
            }
            finally {
                await a.store.close();
                await b.store.close();
            }
        });
    });

    describe('watchInboxes()', () => {
        let url: string;
        let watcher: { knex: Knex; store: RecordStore };
        let writer: { knex: Knex; store: RecordStore };

        before(async () => {
            url = await server.createDatabase();
            watcher = await openStore(url);
            writer = await openStore(url);
        });

        after(async () => {
            await watcher.store.close();
            await writer.store.close();
        });

        // Backends LISTENing in this database, per pg_stat_activity.
        const listeners = async () => {
            const result = await writer.knex.raw(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()"
            ) as { rows: { pid: number }[] };
            return result.rows.map((r) => r.pid);
        };

        const eventually = async (check: () => Promise<boolean>) => {
            while (!await check()) {
                await new Promise((resolve) => setTimeout(resolve, 20));
            }
        };

        it('tells another process which inboxes received mail', async () => {
            const rec = recorder();
            const unwatch = await watcher.store.watchInboxes!(rec.listener);
            try {
                await writer.store.saveEmails([draft('watch-a', 1)]);
                const source = `multi-${randomBytes(4).toString('hex')}@example.test`;
                await writer.store.saveEmails([draft('watch-b', 2, { sourceId: source }), draft('watch-c', 3, { sourceId: source })]);
                await Promise.all([rec.until('watch-a'), rec.until('watch-b'), rec.until('watch-c')]);
                expect(rec.heard).to.equal(['watch-a', 'watch-b', 'watch-c']);
            }
            finally {
                await unwatch();
            }
        });

        it('says nothing about a delivery that was rolled back', async () => {
            const rec = recorder();
            const unwatch = await watcher.store.watchInboxes!(rec.listener);
            try {
                await expect(writer.store.saveEmails([draft('rolled-back', 1, { receivedAt: Number.NaN })])).to.reject();
                await writer.store.saveEmails([draft('committed', 2)]);
                await rec.until('committed');
                // NOTIFYs arrive in commit order: the rolled-back one would be first.
                expect(rec.heard).to.equal(['committed']);
            }
            finally {
                await unwatch();
            }
        });

        it('listens on a connection of its own, not one of the pool', async () => {
            const rec = recorder();
            const before = await listeners();
            const unwatch = await watcher.store.watchInboxes!(rec.listener);
            try {
                const pool = (watcher.knex.client as { pool: { numUsed(): number } }).pool;
                expect(pool.numUsed()).to.equal(0);
                await eventually(async () => (await listeners()).length === before.length + 1);
                await writer.store.saveEmails([draft('own-connection', 1)]);
                await rec.until('own-connection');
            }
            finally {
                await unwatch();
            }
        });

        it('reconnects and listens again after its connection is killed', async () => {
            const rec = recorder();
            const unwatch = await watcher.store.watchInboxes!(rec.listener);
            try {
                await eventually(async () => (await listeners()).length === 1);
                const [killed] = await listeners();
                await writer.knex.raw('SELECT pg_terminate_backend(?)', [killed!]);

                // Notify until the new connection hears it (it may still be connecting).
                let heard = false;
                const arrived = rec.until('after-reconnect').then(() => {
                    heard = true;
                });
                while (!heard) {
                    await writer.knex.raw('SELECT pg_notify(?, ?)', [DEFAULT_NOTIFY_CHANNEL, 'after-reconnect']);
                    await Promise.race([arrived, new Promise((resolve) => setTimeout(resolve, 50))]);
                }

                const now = await listeners();
                expect(now).to.have.length(1);
                expect(now[0]).to.not.equal(killed);
            }
            finally {
                await unwatch();
            }
        });

        it('stops listening when unsubscribed', async () => {
            const before = (await listeners()).length;
            const unwatch = await watcher.store.watchInboxes!(() => undefined);
            await eventually(async () => (await listeners()).length === before + 1);
            await unwatch();
            await eventually(async () => (await listeners()).length === before);
        });

        it('uses the configured channel', async () => {
            const own = await openStore(url, 'inbox_capture_other');
            try {
                const rec = recorder();
                const unwatch = await own.store.watchInboxes!(rec.listener);
                const other = await openStore(url, 'inbox_capture_other');
                await other.store.saveEmails([draft('custom-channel', 1)]);
                await other.store.close();
                await rec.until('custom-channel');
                await unwatch();
            }
            finally {
                await own.store.close();
            }
        });

        it('ends its watchers on close()', async () => {
            const before = (await listeners()).length;
            const own = await openStore(url);
            await own.store.watchInboxes!(() => undefined);
            await eventually(async () => (await listeners()).length === before + 1);
            await own.store.close();
            await eventually(async () => (await listeners()).length === before);
        });
    });

    describe('errors', () => {
        it('throws rather than answering "absent" when the database is gone', async () => {
            const { knex, store } = await openStore(await server.createDatabase());
            await knex.destroy();
            await expect(store.getEmail('x@example.test')).to.reject();
            await expect(store.inboxVersion('x')).to.reject();
            await expect(store.listEmails({ inbox: 'x', limit: 1 })).to.reject();
        });
    });
});
