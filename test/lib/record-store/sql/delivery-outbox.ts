import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { rm } from 'node:fs/promises';
import type { DeliveryTarget, OutboxDelivery, RecordStore } from '../../../../lib/record-store/record-store';
import { DELIVERIES_TABLE } from '../../../../lib/record-store/sql/schema';
import { draft } from '../../../helpers/email-draft';
import { migratedStores, type MigratedStore } from '../../../helpers/migrated-stores';
import { startPostgres, type PostgresServer } from '../../../helpers/postgres';
import { tempDir } from '../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const LONG_LEASE_MS = 60_000;

// The outbox methods, which a Knex store always has.
function outbox(store: RecordStore) {
    const { claimDeliveries, retryDelivery, dropDeliveriesBefore } = store;
    if (!claimDeliveries || !retryDelivery || !dropDeliveriesBefore) {
        throw new Error('the store has no outbox');
    }

    return {
        // Webhook deliveries unless a test says otherwise.
        claimWebhookDeliveries: (urls: string[], limit: number, leaseMs: number, done?: OutboxDelivery[]) => claimDeliveries('webhook', urls, limit, leaseMs, done),
        claimDeliveries,
        retryWebhookDelivery: retryDelivery,
        dropWebhookDeliveriesBefore: (createdBefore: number) => dropDeliveriesBefore('webhook', createdBefore),
        // Done deliveries are removed by a claim's transaction; limit 0 claims nothing.
        finish: (...done: OutboxDelivery[]) => claimDeliveries('webhook', [], 0, LONG_LEASE_MS, done)
    };
}

/** Webhook targets for each draft's URLs. */
function hooks(urls: string[][]): DeliveryTarget[][] {
    return urls.map((list) => list.map((target) => ({ kind: 'webhook', target })));
}

async function withStore(open: () => Promise<MigratedStore>, test: (opened: MigratedStore) => Promise<void>): Promise<void> {
    const opened = await open();
    try {
        await test(opened);
    }
    finally {
        await opened.close();
    }
}

describe('webhook-outbox', () => {
    let postgres: PostgresServer;
    let dir: string;

    before(async () => {
        postgres = await startPostgres();
        dir = await tempDir('webhook-outbox');
    });

    after(async () => {
        await postgres.stop();
        await rm(dir, { recursive: true, force: true });
    });

    for (const [name, open] of migratedStores(() => postgres, () => dir)) {
        describe(`on ${name}`, () => {

            it('saveEmails() writes one pending delivery per (stored email, URL) with the email, due at once', async () => {
                await withStore(open, async ({ knex, store }) => {
                    const { saved } = await store.saveEmails([draft('one', 1), draft('two', 1)], { deliveries: hooks([['http://a.test/h', 'http://b.test/h'], []]) });
                    const rows = await knex(DELIVERIES_TABLE).select('message_id', 'url', 'attempts') as { message_id: string; url: string; attempts: number }[];
                    expect(rows.map((r) => [r.message_id, r.url, Number(r.attempts)]).sort()).to.equal([
                        [saved[0]!.messageId, 'http://a.test/h', 0],
                        [saved[0]!.messageId, 'http://b.test/h', 0]
                    ]);

                    const claimed = await outbox(store).claimWebhookDeliveries(['http://a.test/h'], 10, LONG_LEASE_MS);
                    expect(claimed.map((d) => [d.messageId, d.target, d.attempts])).to.equal([[saved[0]!.messageId, 'http://a.test/h', 0]]);
                    expect(claimed[0]!.id).to.match(/^[0-9a-f-]{36}$/);
                });
            });

            it('writes no delivery for a save without deliveries', async () => {
                await withStore(open, async ({ knex, store }) => {
                    await store.saveEmails([draft('none', 1)]);
                    expect(await knex(DELIVERIES_TABLE).select('id')).to.equal([]);
                });
            });

            it('claims each due delivery once when claims run at once', async () => {
                await withStore(open, async ({ store }) => {
                    const count = 24;
                    await Promise.all(Array.from({ length: count }, (_, n) => store.saveEmails([draft('many', n)], { deliveries: hooks([['http://a.test/h']]) })));
                    const claims = await Promise.all(Array.from({ length: 4 }, () => outbox(store).claimWebhookDeliveries(['http://a.test/h'], 10, LONG_LEASE_MS)));
                    const ids = claims.flat().map((d) => d.id);
                    expect(ids.length).to.equal(new Set(ids).size);
                    // Nothing more is due while the leases last.
                    const rest = await outbox(store).claimWebhookDeliveries(['http://a.test/h'], 100, LONG_LEASE_MS);
                    expect(ids.length + rest.length).to.equal(count);
                    expect(await outbox(store).claimWebhookDeliveries(['http://a.test/h'], 100, LONG_LEASE_MS)).to.equal([]);
                });
            });

            it('makes a delivery due again after its lease; only the latest claim records an outcome', async () => {
                await withStore(open, async ({ knex, store }) => {
                    const o = outbox(store);
                    await store.saveEmails([draft('lease', 1)], { deliveries: hooks([['http://a.test/h']]) });
                    const [first] = await o.claimWebhookDeliveries(['http://a.test/h'], 1, 1);
                    await new Promise((resolve) => setTimeout(resolve, 20));
                    const [second] = await o.claimWebhookDeliveries(['http://a.test/h'], 1, LONG_LEASE_MS);
                    expect(second!.id).to.equal(first!.id);

                    // The stale claim's outcome is ignored.
                    expect(await o.finish(first!)).to.equal([]);
                    await o.retryWebhookDelivery(first!, 0, 'stale');
                    const [row] = await knex(DELIVERIES_TABLE).select('attempts', 'last_error') as { attempts: number; last_error: string | null }[];
                    expect([Number(row!.attempts), row!.last_error]).to.equal([0, null]);

                    const retried: OutboxDelivery = second!;
                    await o.retryWebhookDelivery(retried, Date.now() - 1, 'HTTP 500');
                    const [again] = await o.claimWebhookDeliveries(['http://a.test/h'], 1, LONG_LEASE_MS);
                    expect([again!.id, again!.attempts]).to.equal([first!.id, 1]);
                    await o.finish(again!);
                    expect(await knex(DELIVERIES_TABLE).select('id')).to.equal([]);
                });
            });

            it('removes the done deliveries and claims the next ones in one call', async () => {
                await withStore(open, async ({ knex, store }) => {
                    const o = outbox(store);
                    await store.saveEmails([draft('batch', 1)], { deliveries: hooks([['http://a.test/h', 'http://b.test/h']]) });
                    await store.saveEmails([draft('batch', 2)], { deliveries: hooks([['http://a.test/h']]) });
                    const first = await o.claimWebhookDeliveries(['http://a.test/h', 'http://b.test/h'], 2, LONG_LEASE_MS);
                    const next = await o.claimWebhookDeliveries(['http://a.test/h', 'http://b.test/h'], 5, LONG_LEASE_MS, first);
                    expect(next.length).to.equal(1);
                    const left = await knex(DELIVERIES_TABLE).select('id') as { id: string }[];
                    expect(left.map((r) => r.id)).to.equal([next[0]!.id]);
                });
            });

            it('drops deliveries stored before a time, whatever their URL', async () => {
                await withStore(open, async ({ knex, store }) => {
                    const o = outbox(store);
                    await store.saveEmails([draft('old', 1)], { deliveries: hooks([['http://gone.test/h', 'http://a.test/h']]) });
                    expect(await o.dropWebhookDeliveriesBefore(Date.now() - 60_000)).to.equal(0);
                    expect(await o.dropWebhookDeliveriesBefore(Date.now() + 1)).to.equal(2);
                    expect(await knex(DELIVERIES_TABLE).select('id')).to.equal([]);
                });
            });

            it('keeps deliveries of each kind apart: a claim or a drop of one kind never touches the other', async () => {
                await withStore(open, async ({ store }) => {
                    const o = outbox(store);
                    const both: DeliveryTarget[][] = [[{ kind: 'webhook', target: 'relay' }, { kind: 'relay', target: 'relay' }]];
                    const { saved } = await store.saveEmails([draft('kinds', 1)], { deliveries: both });
                    const [webhook] = await o.claimDeliveries('webhook', ['relay'], 10, LONG_LEASE_MS);
                    expect(webhook).to.include({ kind: 'webhook', target: 'relay', messageId: saved[0]!.messageId });
                    expect(await o.claimDeliveries('webhook', ['relay'], 10, LONG_LEASE_MS)).to.equal([]);
                    expect(await o.dropWebhookDeliveriesBefore(Date.now() + 1)).to.equal(1);
                    const [relay] = await o.claimDeliveries('relay', ['relay'], 10, LONG_LEASE_MS);
                    expect(relay).to.include({ kind: 'relay', target: 'relay', messageId: saved[0]!.messageId, attempts: 0 });
                });
            });
        });
    }
});
