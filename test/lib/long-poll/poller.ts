import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { createLongPoller } from '../../../lib/long-poll/poller';
import { createNotifier, type Notifier } from '../../../lib/long-poll/notifier';
import { createKnexRecordStore } from '../../../lib/record-store/knex-record-store';
import type { RecordStore } from '../../../lib/record-store/record-store';
import { openSqliteKnex } from '../../../lib/sqlite/knex';
import { draft } from '../../helpers/email-draft';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after, beforeEach, afterEach } = exports.lab = Lab.script();

describe('long-poll/poller', () => {

    let dir: string;
    let store: RecordStore;

    before(async () => {
        dir = await tempDir('long-poll');
    });

    after(async () => {
        await Fs.rm(dir, { recursive: true, force: true });
    });

    beforeEach(async () => {
        store = createKnexRecordStore({ knex: openSqliteKnex(Path.join(dir, `${Date.now()}-${Math.random()}.sqlite`)), destroyKnexOnClose: true });
        await store.migrate();
    });

    afterEach(async () => {
        await store.close();
    });

    /** A notifier that counts subscriptions ever made. */
    const countingNotifier = () => {
        const inner = createNotifier();
        let subscribed = 0;
        const notifier: Notifier = {
            ...inner,
            subscribe(inbox, listener) {
                subscribed++;
                return inner.subscribe(inbox, listener);
            }
        };
        return { notifier, subscribed: () => subscribed };
    };

    /** Resolves once `condition` holds, checking on every turn of the event loop. */
    const until = async (condition: () => boolean) => {
        while (!condition()) {
            await new Promise((resolve) => setImmediate(resolve));
        }
    };

    describe('wait()', () => {

        it('answers at once when mail already matches', async () => {
            await store.saveEmails([draft('ready', 1)]);
            const { notifier, subscribed } = countingNotifier();
            const poller = createLongPoller({ recordStore: store, notifier });
            const page = await poller.wait({ inbox: 'ready', limit: 10 }, { timeoutMs: 28_000 });
            expect(page.records.map((r) => r.subject)).to.equal(['Subject 1']);
            expect(subscribed()).to.equal(0);
        });

        it('wakes on a notification for its inbox and then releases everything', async () => {
            const notifier = createNotifier();
            const poller = createLongPoller({ recordStore: store, notifier });
            const waiting = poller.wait({ inbox: 'wake', limit: 10 }, { timeoutMs: 28_000 });
            await until(() => poller.waiterCount() === 1);
            await store.saveEmails([draft('wake', 1)]);
            notifier.publish('wake');
            const page = await waiting;
            expect(page.records).to.have.length(1);
            expect(poller.waiterCount()).to.equal(0);
            expect(notifier.subscriberCount()).to.equal(0);
        });

        it('releases its timers and subscription when the client goes away', async () => {
            const notifier = createNotifier();
            const poller = createLongPoller({ recordStore: store, notifier });
            const controller = new AbortController();
            const waiting = poller.wait({ inbox: 'gone', limit: 10 }, { timeoutMs: 28_000, signal: controller.signal });
            await until(() => poller.waiterCount() === 1);
            controller.abort();
            expect((await waiting).records).to.equal([]);
            expect(poller.waiterCount()).to.equal(0);
            expect(notifier.subscriberCount()).to.equal(0);
        });

        it('counts the timeout from the call: a first query that ends past the deadline answers at once (soak regression)', async () => {
            // Under load the first query queues behind others; the client's timeout must not restart after it.
            const slow: RecordStore = {
                ...store,
                async listEmails(query) {
                    await new Promise((resolve) => setTimeout(resolve, 300));
                    return store.listEmails(query);
                }
            };
            const { notifier, subscribed } = countingNotifier();
            const poller = createLongPoller({ recordStore: slow, notifier });
            const page = await poller.wait({ inbox: 'late', limit: 10 }, { timeoutMs: 100 });
            expect(page.records).to.equal([]);
            // It never started waiting: no subscription, no waiter left.
            expect(subscribed()).to.equal(0);
            expect(poller.waiterCount()).to.equal(0);
        });

        it('answers with the mail a check in flight at the deadline returns, not an empty page (soak regression)', async () => {
            let release!: () => void;
            const gate = new Promise<void>((resolve) => {
                release = resolve;
            });
            let calls = 0;
            const gated: RecordStore = {
                ...store,
                async listEmails(query) {
                    // The first query answers at once (nothing yet); the check woken by the mail is held.
                    if (++calls > 1) {
                        await gate;
                    }

                    return store.listEmails(query);
                }
            };

            const notifier = createNotifier();
            const poller = createLongPoller({ recordStore: gated, notifier });
            // The store's first save opens its writer connection and prepares its statements:
            // done here, so that the save below is quick.
            await store.saveEmails([draft('edge-warm-up', 0)]);
            // A deadline of 2 s: on a machine busy enough to stall this test for 200 ms, the
            // deadline came first, no check was ever woken, and the wait below spun for ever.
            const waiting = poller.wait({ inbox: 'edge', limit: 10 }, { timeoutMs: 2000 });
            let settled = false;
            void waiting.finally(() => {
                settled = true;
            });
            await until(() => poller.waiterCount() === 1);
            await store.saveEmails([draft('edge', 1)]);
            notifier.publish('edge');
            await until(() => calls === 2 || settled);
            expect(calls, 'the deadline passed before the woken check began: the machine stalled for 2 s').to.equal(2);

            // The deadline passes while the woken check is still in the store.
            await new Promise((resolve) => setTimeout(resolve, 2200));
            release();
            const page = await waiting;
            expect(page.records.map((r) => r.subject)).to.equal(['Subject 1']);
            expect(poller.waiterCount()).to.equal(0);
            expect(notifier.subscriberCount()).to.equal(0);
        });
    });
});
