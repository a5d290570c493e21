import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { MAX_PROBES_IN_FLIGHT, VERSION_SHARE_MS, createProbeLimiter } from '../../../lib/long-poll/probe-limiter';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A record store whose version probes answer when the test says so. */
const fakeStore = () => {
    const calls: Array<{ inbox: string; settled: boolean; answer: (version: number) => void; fail: (err: Error) => void }> = [];
    const recordStore = {
        inboxVersion(inbox: string): Promise<number> {
            return new Promise<number>((resolve, reject) => {
                const call = {
                    inbox,
                    settled: false,
                    answer: (version: number) => {
                        call.settled = true;
                        resolve(version);
                    },
                    fail: (err: Error) => {
                        call.settled = true;
                        reject(err);
                    }
                };
                calls.push(call);
            });
        }
    };
    return { recordStore, calls, inFlight: () => calls.filter((call) => !call.settled).length };
};

/** A limiter over a fake store, with a counter as the caller's order of events. */
const limiterOf = () => {
    const store = fakeStore();
    let seq = 0;
    const limiter = createProbeLimiter({ recordStore: store.recordStore, nextSeq: () => ++seq });
    return { ...store, limiter, seq: () => seq };
};

/** Runs `fn` with Date.now() moved `ms` ahead. */
const later = <T>(ms: number, fn: () => T): T => {
    const realNow = Date.now;
    Date.now = () => realNow() + ms;
    try {
        return fn();
    }
    finally {
        Date.now = realNow;
    }
};

describe('probe-limiter', () => {

    describe('probeVersion()', () => {

        it('shares one probe of an inbox among its callers while it is in flight', async () => {
            const { limiter, calls } = limiterOf();
            const first = limiter.probeVersion('a');
            const second = limiter.probeVersion('a');
            const other = limiter.probeVersion('b');
            expect(second).to.shallow.equal(first);
            expect(other).to.not.shallow.equal(first);
            await tick();
            expect(calls.map((call) => call.inbox)).to.equal(['a', 'b']);
            // Still in flight long after the share window: still shared.
            expect(later(10 * VERSION_SHARE_MS, () => limiter.probeVersion('a'))).to.shallow.equal(first);

            calls[0].answer(7);
            calls[1].answer(3);
            expect(await first.value).to.equal(7);
            expect(await second.value).to.equal(7);
            expect(await other.value).to.equal(3);
            expect(calls).to.have.length(2);
        });

        it('answers from a resolved probe for VERSION_SHARE_MS, then probes again', async () => {
            const { limiter, calls } = limiterOf();
            const first = limiter.probeVersion('a');
            await tick();
            calls[0].answer(1);
            await first.value;
            expect(first.at).to.be.at.most(Date.now());

            expect(later(VERSION_SHARE_MS - 5, () => limiter.probeVersion('a'))).to.shallow.equal(first);
            const next = later(VERSION_SHARE_MS, () => limiter.probeVersion('a'));
            expect(next).to.not.shallow.equal(first);
            await tick();
            expect(calls).to.have.length(2);
            calls[1].answer(2);
            expect(await next.value).to.equal(2);

            // Without a newer probe, the resolved one is forgotten once its window has passed.
            const quiet = limiter.probeVersion('quiet');
            await tick();
            calls[2].answer(5);
            await quiet.value;
            await new Promise((resolve) => setTimeout(resolve, VERSION_SHARE_MS + 20));
            expect(limiter.probeVersion('quiet')).to.not.shallow.equal(quiet);
        });

        it('stamps when a probe was sent and when it resolved, before any caller resumes', async () => {
            const { limiter, calls, seq } = limiterOf();
            const probe = limiter.probeVersion('a');
            expect(probe.issuedSeq).to.equal(1);
            expect(probe.resolvedSeq).to.equal(Infinity);
            expect(probe.at).to.equal(Infinity);
            await tick();
            calls[0].answer(4);
            await probe.value;
            expect(probe.resolvedSeq).to.equal(2);
            expect(probe.at).to.not.equal(Infinity);
            expect(seq()).to.equal(2);
        });

        it('keeps at most MAX_PROBES_IN_FLIGHT in the store and sends the rest in order as slots free', async () => {
            const { limiter, calls, inFlight } = limiterOf();
            const inboxes = Array.from({ length: MAX_PROBES_IN_FLIGHT + 8 }, (_, i) => `inbox-${i}`);
            const probes = inboxes.map((inbox) => limiter.probeVersion(inbox));
            await tick();
            expect(calls).to.have.length(MAX_PROBES_IN_FLIGHT);
            expect(inFlight()).to.equal(MAX_PROBES_IN_FLIGHT);

            // A success and a failure each free a slot for the oldest waiting probe.
            calls[0].answer(0);
            await tick();
            expect(calls.map((call) => call.inbox).slice(MAX_PROBES_IN_FLIGHT)).to.equal([inboxes[MAX_PROBES_IN_FLIGHT]]);
            calls[1].fail(new Error('store down'));
            await expect(probes[1].value).to.reject('store down');
            await tick();
            expect(calls.map((call) => call.inbox).slice(MAX_PROBES_IN_FLIGHT)).to.equal(inboxes.slice(MAX_PROBES_IN_FLIGHT, MAX_PROBES_IN_FLIGHT + 2));
            expect(inFlight()).to.equal(MAX_PROBES_IN_FLIGHT);

            while (calls.some((call) => !call.settled)) {
                for (const call of calls.filter((each) => !each.settled)) {
                    call.answer(Number(call.inbox.slice('inbox-'.length)));
                }

                await tick();
                expect(inFlight()).to.be.at.most(MAX_PROBES_IN_FLIGHT);
            }

            expect(calls).to.have.length(inboxes.length);
            const versions = await Promise.all(probes.filter((_, i) => i !== 1).map((probe) => probe.value));
            expect(versions).to.equal(inboxes.map((_, i) => i).filter((i) => i !== 1));
        });

        it('passes a failure to every caller sharing the probe and forgets it at once', async () => {
            const { limiter, calls } = limiterOf();
            const first = limiter.probeVersion('a');
            const second = limiter.probeVersion('a');
            await tick();
            calls[0].fail(new Error('version query failed'));
            await expect(first.value).to.reject('version query failed');
            await expect(second.value).to.reject('version query failed');
            expect(first.resolvedSeq).to.equal(Infinity);

            // No share window for a failure: the next caller probes again.
            const retry = limiter.probeVersion('a');
            expect(retry).to.not.shallow.equal(first);
            await tick();
            expect(calls).to.have.length(2);
            calls[1].answer(9);
            expect(await retry.value).to.equal(9);
        });
    });
});
