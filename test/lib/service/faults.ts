import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createFaults } from '../../../lib/service/faults';
import { defaultInboxFromAddress } from '../../../lib/identity/recipients';
import type { FaultRule } from '../../../lib/faults/fault-rule';
import { sqliteFsStores, type TestStores } from '../../helpers/test-stores';
import { waitUntil } from '../../helpers/wait-until';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('lib/service/faults', () => {
    let stores: TestStores;

    before(async () => {
        stores = await sqliteFsStores().create();
        await stores.recordStore.migrate();
    });

    after(() => stores.cleanup());

    describe('createFaults()', () => {

        it('a read of the rules that began before a change made here does not count as fresh', async () => {
            // The first read is held until the rule below is saved: it answers the rule set without it.
            let release!: () => void;
            const held = new Promise<void>((resolve) => {
                release = resolve;
            });
            let reads = 0;
            const listFaultRules = stores.recordStore.listFaultRules!.bind(stores.recordStore);
            const recordStore = {
                ...stores.recordStore,
                listFaultRules: async (): Promise<FaultRule[]> => {
                    const rules = await listFaultRules();
                    if (reads++ === 0) {
                        await held;
                    }

                    return rules;
                }
            };
            // Long enough that the held read, were it taken as fresh, would still be within it below.
            const faults = createFaults({ recordStore, inboxFromAddress: defaultInboxFromAddress, refreshMs: 2_000 });
            const first = faults.take('rcpt', { sender: 'a@b.test', recipients: ['x@example.test'] });
            // create() reads the kept rules in its own write (the limits), not through listFaultRules;
            // it answers only after the refresh, so it is awaited at the end.
            const created = faults.create({ stage: 'rcpt', reply: { code: 451 } });
            await waitUntil('the rule is stored', async () => (await listFaultRules()).length === 1);
            release();
            expect(await first).to.be.null();
            expect(faults.armed('rcpt')).to.be.true();
            expect(await faults.take('rcpt', { sender: 'a@b.test', recipients: ['x@example.test'] })).to.include({ reply: { code: 451, message: 'Fault injected by inbox-capture' } });
            await created;
            await faults.deleteAll();
        });

        it('gives rules time-ordered ids, so rules made in one millisecond list (and win a match) in the order they were made', async () => {
            const faults = createFaults({ recordStore: stores.recordStore, inboxFromAddress: defaultInboxFromAddress, refreshMs: 10 });
            await Promise.all(Array.from({ length: 100 }, (_, i) => faults.create({ stage: 'rcpt', match: { inbox: `order-${i}` }, reply: { code: 451 } })));
            const listed = await faults.list();
            expect(listed.length).to.equal(100);
            for (const rule of listed) {
                // The id carries the rule's millisecond (lib/faults/fault-id.ts): the list's order by (createdAt, id) is the ids' own.
                expect(parseInt(rule.id.replace(/-/g, '').slice(0, 12), 16)).to.equal(rule.createdAt);
            }

            expect(listed.map((r) => r.id)).to.equal(listed.map((r) => r.id).sort());
            expect(await faults.deleteAll()).to.equal(100);
        });

        it('keeps at most 100 rules for one key prefix and 1,000 in all, counted in the insert\'s own write: 200 concurrent creates at 990 leave exactly 1,000', async () => {
            const faults = createFaults({ recordStore: stores.recordStore, inboxFromAddress: defaultInboxFromAddress, refreshMs: 10 });
            const teamA = { inboxPrefix: 'team-a-' };
            const made = await Promise.all(Array.from({ length: 101 }, (_, i) => faults.create({ stage: 'rcpt', match: { inbox: `team-a-${i}` }, reply: { code: 451 } }, teamA)
                .then(() => 'made', (err: { code?: string; message?: string }) => `${err.code}: ${err.message}`)));
            expect(made.filter((m) => m === 'made').length).to.equal(100);
            expect(made.filter((m) => m !== 'made')).to.equal(['LIMIT_REACHED: faults: at most 100 rules are kept for the inboxes of the prefix "team-a-"; delete some first']);
            // Another prefix, and a key without one, are not held by team-a-'s rules.
            await faults.create({ stage: 'rcpt', match: { inbox: 'team-b-0' }, reply: { code: 451 } }, { inboxPrefix: 'team-b-' });
            await faults.create({ stage: 'rcpt', match: { inbox: 'team-a-extra' }, reply: { code: 451 } });

            const kept = (await faults.list()).length;
            await Promise.all(Array.from({ length: 990 - kept }, (_, i) => faults.create({ stage: 'data', match: { recipient: `filler-${i}` }, reply: { code: 451 } })));

            const burst = await Promise.all(Array.from({ length: 200 }, (_, i) => faults.create({ stage: 'data', match: { recipient: `burst-${i}` }, reply: { code: 451 } })
                .then(() => 'made', (err: { code?: string }) => err.code)));
            expect(burst.filter((m) => m === 'made').length).to.equal(10);
            expect(burst.filter((m) => m === 'LIMIT_REACHED').length).to.equal(190);
            expect((await faults.list()).length).to.equal(1_000);
            expect(await faults.deleteAll()).to.equal(1_000);
        });

        it('a scope with an inbox prefix reaches only the rules limited to an inbox inside it', async () => {
            const faults = createFaults({ recordStore: stores.recordStore, inboxFromAddress: defaultInboxFromAddress, refreshMs: 10 });
            const mine = await faults.create({ stage: 'rcpt', match: { inbox: 'team-a-signup' }, reply: { code: 451 } });
            const theirs = await faults.create({ stage: 'rcpt', match: { inbox: 'team-b-signup' }, reply: { code: 451 } });
            const everyone = await faults.create({ stage: 'data', match: { recipient: 'team-a-' }, reply: { code: 550 } });
            const scope = { inboxPrefix: 'team-a-' };

            expect((await faults.list(scope)).map((r) => r.id)).to.equal([mine.id]);
            expect((await faults.list()).length).to.equal(3);
            expect(await faults.delete(theirs.id, scope)).to.be.false();
            expect(await faults.delete(everyone.id, scope)).to.be.false();
            expect(await faults.deleteAll(scope)).to.equal(1);
            expect(await faults.deleteAll(scope)).to.equal(0);
            expect((await faults.list()).map((r) => r.id).sort()).to.equal([theirs.id, everyone.id].sort());
            expect(await faults.delete(theirs.id, { inboxPrefix: null })).to.be.true();
            expect(await faults.deleteAll()).to.equal(1);
        });
    });
});
