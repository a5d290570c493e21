import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { ANNOUNCED_GRACE_MS, DEADLINE_GRACE_MS, createLongPoller, type LongPoller } from '../../../lib/long-poll/poller';
import { MAX_PROBES_IN_FLIGHT, VERSION_SHARE_MS } from '../../../lib/long-poll/probe-limiter';
import { WaitCanceller } from '../../../lib/long-poll/wait-canceller';
import { FIRST_CHECK_MS } from '../../../lib/long-poll/waiters';
import { createNotifier } from '../../../lib/long-poll/notifier';
import { createKnexRecordStore } from '../../../lib/record-store/knex-record-store';
import type { RecordStore } from '../../../lib/record-store/record-store';
import { openSqliteKnex } from '../../../lib/sqlite/knex';
import type { ListQuery, RecordPage } from '../../../lib/types';
import { draft } from '../../helpers/email-draft';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('long-poll/poller', () => {

    let dir: string;
    let store: RecordStore;

    before(async () => {
        dir = await tempDir('long-poll-sharing');
        store = createKnexRecordStore({ knex: openSqliteKnex(Path.join(dir, 'records.sqlite')), destroyKnexOnClose: true });
        await store.migrate();
    });

    after(async () => {
        await store.close();
        await Fs.rm(dir, { recursive: true, force: true });
    });

    /** Resolves once `condition` holds, checking on every turn of the event loop. */
    const until = async (condition: () => boolean) => {
        while (!condition()) {
            await new Promise((resolve) => setImmediate(resolve));
        }
    };

    const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

    /** A gate: a promise and the function that opens it. */
    const gate = () => {
        let open!: () => void;
        const opened = new Promise<void>((resolve) => {
            open = resolve;
        });
        return { opened, open };
    };

    /** A wait with its outcome observable while it runs and the wall time it took. */
    const track = (poller: LongPoller, query: ListQuery, timeoutMs: number, canceller?: WaitCanceller) => {
        const startedAt = Date.now();
        const state: { page: RecordPage | undefined; elapsed: number; timeoutMs: number; done: Promise<RecordPage> } = {
            page: undefined,
            elapsed: -1,
            timeoutMs,
            done: undefined!
        };
        state.done = poller.wait(query, { timeoutMs, canceller }).then((page) => {
            state.page = page;
            state.elapsed = Date.now() - startedAt;
            return page;
        });
        return state;
    };

    describe('WaitCanceller', () => {

        it('ends a wait with an empty page when aborted before or during it, and aborting again does nothing', { timeout: 5000 }, async () => {
            const notifier = createNotifier();
            const poller = createLongPoller({ recordStore: store, notifier });

            // Aborted before the call: the wait never starts (a 28 s timeout would outlast the test).
            const early = new WaitCanceller();
            early.abort();
            expect(early.aborted).to.be.true();
            const first = await poller.wait({ inbox: 'cancel-early', limit: 10 }, { timeoutMs: 28_000, canceller: early });
            expect(first.records).to.equal([]);
            expect(poller.waiterCount()).to.equal(0);
            expect(notifier.subscriberCount()).to.equal(0);

            // Aborted while waiting.
            const during = new WaitCanceller();
            expect(during.aborted).to.be.false();
            const waiting = poller.wait({ inbox: 'cancel-during', limit: 10 }, { timeoutMs: 28_000, canceller: during });
            await until(() => poller.waiterCount() === 1);
            during.abort();
            during.abort();
            expect(during.aborted).to.be.true();
            expect((await waiting).records).to.equal([]);
            expect(poller.waiterCount()).to.equal(0);
            expect(notifier.subscriberCount()).to.equal(0);

            // Once the wait is over, a late abort touches nothing, not even a later waiter.
            const other = poller.wait({ inbox: 'cancel-during', limit: 10 }, { timeoutMs: 28_000 });
            await until(() => poller.waiterCount() === 1);
            during.abort();
            early.abort();
            expect(poller.waiterCount()).to.equal(1);
            await store.saveEmails([draft('cancel-during', 1)]);
            notifier.publish('cancel-during');
            expect((await other).records).to.have.length(1);
            expect(poller.waiterCount()).to.equal(0);
        });

        it('does the same for an AbortSignal', { timeout: 5000 }, async () => {
            const notifier = createNotifier();
            const poller = createLongPoller({ recordStore: store, notifier });
            const before = new AbortController();
            before.abort();
            expect((await poller.wait({ inbox: 'signal', limit: 10 }, { timeoutMs: 28_000, signal: before.signal })).records).to.equal([]);

            const during = new AbortController();
            const waiting = poller.wait({ inbox: 'signal', limit: 10 }, { timeoutMs: 28_000, signal: during.signal });
            await until(() => poller.waiterCount() === 1);
            during.abort();
            expect((await waiting).records).to.equal([]);
            expect(poller.waiterCount()).to.equal(0);
            expect(notifier.subscriberCount()).to.equal(0);
        });
    });

    describe('wait()', () => {

        it('keeps at most MAX_PROBES_IN_FLIGHT version probes in the store and still finds mail stored without a notification', { timeout: 20_000 }, async () => {
            const inboxes = Array.from({ length: 40 }, (_, i) => `probe-limit-${i}`);
            let inFlight = 0;
            let maxInFlight = 0;
            let calls = 0;
            const slow: RecordStore = {
                ...store,
                async inboxVersion(inbox) {
                    calls++;
                    inFlight++;
                    maxInFlight = Math.max(maxInFlight, inFlight);
                    try {
                        await sleep(50);
                        return await store.inboxVersion(inbox);
                    }
                    finally {
                        inFlight--;
                    }
                }
            };

            const notifier = createNotifier();
            const poller = createLongPoller({ recordStore: slow, notifier });
            const cancellers = inboxes.map(() => new WaitCanceller());
            const waits = inboxes.map((inbox, i) => track(poller, { inbox, limit: 10 }, 15_000, cancellers[i]));
            await until(() => poller.waiterCount() === inboxes.length);

            // Another process stores mail: nobody is notified, only fallback checks can see it.
            const withMail = [3, 11, 22, 29, 38];
            for (const i of withMail) {
                await store.saveEmails([draft(inboxes[i], i)]);
            }

            const pages = await Promise.all(withMail.map((i) => waits[i].done));
            for (const [n, page] of pages.entries()) {
                expect(page.records.map((r) => r.subject)).to.equal([`Subject ${withMail[n]}`]);
            }

            expect(waits.filter((w) => w.page !== undefined)).to.have.length(withMail.length);
            for (const canceller of cancellers) {
                canceller.abort();
            }

            await Promise.all(waits.map((w) => w.done));
            expect(poller.waiterCount()).to.equal(0);
            // Every waiter's arrival and fallback checks were probed, but never more than the limit at once.
            expect(calls).to.be.at.least(inboxes.length);
            expect(maxInFlight).to.equal(MAX_PROBES_IN_FLIGHT);
        });

        it('probes an idle inbox as often for 200 waiters as for one', { timeout: 10_000 }, async () => {
            // Deadlines before the second check of the schedule (FIRST_CHECK_MS, then twice that; docs/design.md, "Listing and long-polling").
            const windowMs = FIRST_CHECK_MS * 3 - 100;
            // A probe answers every caller while in flight and VERSION_SHARE_MS after: whatever
            // the schedule and however many waiters arrive, at most one store call per
            // VERSION_SHARE_MS, plus the first.
            const bound = Math.ceil(windowMs / VERSION_SHARE_MS) + 1;

            const counted = () => {
                let calls = 0;
                const recordStore: RecordStore = {
                    ...store,
                    inboxVersion(inbox) {
                        calls++;
                        return store.inboxVersion(inbox);
                    }
                };
                const poller = createLongPoller({ recordStore, notifier: createNotifier() });
                return { poller, calls: () => calls };
            };

            const one = counted();
            const burst = counted();
            const spread = counted();
            const startedAt = Date.now();
            const waits = [
                track(one.poller, { inbox: 'idle-one', limit: 10 }, windowMs),
                ...Array.from({ length: 200 }, () => track(burst.poller, { inbox: 'idle-burst', limit: 10 }, windowMs))
            ];

            // 200 more arriving one by one over most of the window, all ending with it.
            for (let i = 0; i < 200; i++) {
                waits.push(track(spread.poller, { inbox: 'idle-spread', limit: 10 }, Math.max(50, startedAt + windowMs - Date.now())));
                await sleep(Math.floor(windowMs * 0.7 / 200));
            }

            const pages = await Promise.all(waits.map((w) => w.done));
            for (const page of pages) {
                expect(page.records).to.equal([]);
            }

            expect(one.calls()).to.be.at.least(1);
            expect(Math.abs(burst.calls() - one.calls())).to.be.at.most(2);
            expect(burst.calls()).to.be.at.most(bound);
            expect(spread.calls()).to.be.at.most(bound);
            expect(burst.poller.waiterCount() + spread.poller.waiterCount()).to.equal(0);
        });

        it('answers waiters with the same query from one shared list query when woken', { timeout: 10_000 }, async () => {
            let lists = 0;
            const counted: RecordStore = {
                ...store,
                listEmails(query) {
                    lists++;
                    return store.listEmails(query);
                }
            };

            const notifier = createNotifier();
            const poller = createLongPoller({ recordStore: counted, notifier });
            const query = { inbox: 'same-query', limit: 10 };
            const waits = Array.from({ length: 100 }, () => track(poller, { ...query }, 28_000));
            await until(() => poller.waiterCount() === 100);
            // Their first queries were shared too.
            expect(lists).to.be.at.most(3);

            lists = 0;
            await store.saveEmails([draft('same-query', 1)]);
            notifier.publish('same-query');
            const pages = await Promise.all(waits.map((w) => w.done));
            for (const page of pages) {
                expect(page.records.map((r) => r.subject)).to.equal(['Subject 1']);
            }

            expect(lists).to.be.at.most(2);
            expect(poller.waiterCount()).to.equal(0);
            expect(notifier.subscriberCount()).to.equal(0);
        });

        /**
         * A store that stalls every query of `inbox` after the first probe and the first
         * list query (the waiter's admission) until opened: a loaded store.
         */
        const stalling = (inbox: string) => {
            const stall = gate();
            let probes = 0;
            let lists = 0;
            const recordStore: RecordStore = {
                ...store,
                async inboxVersion(name) {
                    if (name === inbox && ++probes > 1) {
                        await stall.opened;
                    }

                    return store.inboxVersion(name);
                },
                async listEmails(query) {
                    if (query.inbox === inbox && ++lists > 1) {
                        await stall.opened;
                    }

                    return store.listEmails(query);
                }
            };
            return { recordStore, open: stall.open, lists: () => lists };
        };

        it('answers with announced mail whose read outlasts the deadline, within ANNOUNCED_GRACE_MS', { timeout: 10_000 }, async () => {
            const timeoutMs = 200;
            // Past the deadline and past the shorter grace of a fallback check, yet well inside ANNOUNCED_GRACE_MS.
            const readMs = timeoutMs + DEADLINE_GRACE_MS + 300;
            expect(readMs).to.be.below(ANNOUNCED_GRACE_MS / 2);

            const slow = stalling('announced');
            const notifier = createNotifier();
            const poller = createLongPoller({ recordStore: slow.recordStore, notifier });
            const waiting = track(poller, { inbox: 'announced', limit: 10 }, timeoutMs);
            await until(() => poller.waiterCount() === 1);
            await store.saveEmails([draft('announced', 1)]);
            notifier.publish('announced');
            await until(() => slow.lists() === 2);

            try {
                await sleep(readMs);
                expect(waiting.page).to.be.undefined();
            }
            finally {
                slow.open();
            }

            const page = await waiting.done;
            expect(page.records.map((r) => r.subject)).to.equal(['Subject 1']);
            expect(poller.waiterCount()).to.equal(0);
            expect(notifier.subscriberCount()).to.equal(0);
        });

        it('answers empty when the read of announced mail hangs past ANNOUNCED_GRACE_MS', { timeout: 5000 }, async () => {
            // The poller reads the time from Date.now(): shifting it by the grace stands for
            // waiting ANNOUNCED_GRACE_MS (10 s) of real time. Another waiter's deadline
            // (a real timer) makes the poller look at the clock.
            const slow = stalling('hung');
            const notifier = createNotifier();
            const poller = createLongPoller({ recordStore: slow.recordStore, notifier });
            const hung = track(poller, { inbox: 'hung', limit: 10 }, 200);
            const ticker = track(poller, { inbox: 'hung-ticker', limit: 10 }, 700);
            await until(() => poller.waiterCount() === 2);
            await store.saveEmails([draft('hung', 1)]);
            notifier.publish('hung');
            await until(() => slow.lists() === 2);

            const realNow = Date.now;
            try {
                // Past the hung waiter's deadline: it waits for the read, in its grace.
                await sleep(300);
                expect(hung.page).to.be.undefined();
                Date.now = () => realNow() + ANNOUNCED_GRACE_MS;
                expect((await hung.done).records).to.equal([]);
                expect((await ticker.done).records).to.equal([]);
            }
            finally {
                Date.now = realNow;
                slow.open();
            }

            expect(poller.waiterCount()).to.equal(0);
            expect(notifier.subscriberCount()).to.equal(0);
        });

        it('never answers one of 300 waiters with different timeouts before its own timeout', { timeout: 15_000 }, async () => {
            const timeouts = Array.from({ length: 300 }, (_, i) => 100 + (i * 600) / 299);
            // Shuffled, so the deadline heap gets them out of order.
            for (let i = timeouts.length - 1; i > 0; i--) {
                const j = Math.floor(Math.random() * (i + 1));
                [timeouts[i], timeouts[j]] = [timeouts[j], timeouts[i]];
            }

            const notifier = createNotifier();
            const poller = createLongPoller({ recordStore: store, notifier });
            const waits = timeouts.map((timeoutMs, i) => track(poller, { inbox: `deadline-${i}`, limit: 10 }, Math.round(timeoutMs)));
            await Promise.all(waits.map((w) => w.done));
            for (const wait of waits) {
                expect(wait.page!.records).to.equal([]);
                expect(wait.elapsed).to.be.at.least(wait.timeoutMs);
                expect(wait.elapsed).to.be.below(wait.timeoutMs + 5000);
            }

            expect(poller.waiterCount()).to.equal(0);
            expect(notifier.subscriberCount()).to.equal(0);
        });

        it('wakes only the waiters whose query matches the new mail', { timeout: 10_000 }, async () => {
            const notifier = createNotifier();
            const poller = createLongPoller({ recordStore: store, notifier });
            const other = track(poller, { inbox: 'filtered', limit: 10, subject: 'invoice' }, 800);
            const matching = track(poller, { inbox: 'filtered', limit: 10, subject: 'subject' }, 5000);
            await until(() => poller.waiterCount() === 2);
            await store.saveEmails([draft('filtered', 1)]);
            notifier.publish('filtered');

            const page = await matching.done;
            expect(page.records.map((r) => r.subject)).to.equal(['Subject 1']);
            expect(other.page).to.be.undefined();
            expect(poller.waiterCount()).to.equal(1);

            expect((await other.done).records).to.equal([]);
            expect(other.elapsed).to.be.at.least(other.timeoutMs);
            expect(poller.waiterCount()).to.equal(0);
            expect(notifier.subscriberCount()).to.equal(0);
        });
    });
});
