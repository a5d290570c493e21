import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { describeSoak, runSoak, SHORT_SOAK_OPTIONS, type SoakReport } from './soak';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('soak (short)', () => {

    describe('runSoak()', () => {

        it('loses nothing under concurrent SMTP, long-polls, lists and deletes, and goes back to its baseline', { timeout: 120_000 }, async () => {
            const report: SoakReport = await runSoak(SHORT_SOAK_OPTIONS);
            if (report.failures.length > 0) {
                console.error(describeSoak(report));
            }

            expect(report.failures).to.equal([]);
            // Every message acknowledged with 250 is stored or was deleted by a client.
            expect(report.messages.acknowledged).to.equal(SHORT_SOAK_OPTIONS.messages);
            expect(report.messages.lost).to.equal(0);
            expect(report.messages.unexpected).to.equal(0);
            expect(report.messages.stored + report.messages.deletedById + report.messages.deletedInBulk).to.equal(report.messages.acknowledged);
            // The deleters and listers really worked alongside the senders.
            expect(report.messages.deletedById).to.be.above(0);
            expect(report.lists.pages).to.be.above(0);
            // No 5xx, seen from either side, and no request failed below HTTP.
            expect(Object.keys(report.http.statuses).filter((s) => Number(s) >= 500)).to.equal([]);
            expect(report.http.serverErrors).to.equal(0);
            expect(report.http.transportErrors).to.equal(0);
            // Long-polls: all answered within their timeout, quiet ones empty at it.
            expect(report.longPolls.answered).to.be.above(SHORT_SOAK_OPTIONS.longPolls);
            expect(report.longPolls.withMail).to.be.above(0);
            expect(report.longPolls.emptyAtTimeout).to.be.above(0);
            expect(report.longPolls.aborted).to.be.above(0);
            expect(report.longPolls.late + report.longPolls.early + report.longPolls.missedWakeups + report.longPolls.wrongContent).to.equal(0);
            expect(report.blobs.orphans).to.equal(0);
            expect(report.blobs.total).to.equal(report.blobs.expected);
            // Back to the baseline: nothing waiting, subscribed, or held open.
            expect(report.leaks.waitersAfter).to.equal(0);
            expect(report.leaks.subscribersAfter).to.equal(0);
            expect(report.leaks.handlesGrown).to.equal({});
            expect(report.leaks.listenersGrown).to.equal({});
            expect(report.memory.heapGrowthBytes).to.be.at.most(SHORT_SOAK_OPTIONS.heapGrowthLimitBytes);
            expect(report.serviceExitCode).to.equal(0);
        });

        it('notices a lost message, a 5xx, a late long-poll, a leaked subscription, timer and heap', { timeout: 120_000 }, async () => {
            // A service broken on purpose in six ways at once: each must show as its own failure.
            const report = await runSoak({
                ...SHORT_SOAK_OPTIONS,
                messages: 40,
                senders: 4,
                inboxes: 10,
                quietInboxes: 2,
                longPolls: 20,
                pollTimeoutSeconds: { min: 1, max: 1 },
                abortShare: 0,
                listers: 1,
                deleters: 1,
                bulkInboxes: 1,
                warmupMessages: 5,
                settleMs: 3_000,
                faults: ['lose-message', 'server-error', 'late-answer', 'leak-subscription', 'leak-timer', 'retain-heap']
            });

            expect(report.messages.lost).to.equal(1);
            expect(report.failureKinds.lost).to.equal(1);
            expect(report.failureKinds['5xx']).to.be.at.least(1);
            expect(report.failureKinds['server errors']).to.equal(1);
            expect(report.longPolls.late).to.be.at.least(1);
            expect(report.leaks.subscribersAfter).to.be.above(0);
            expect(report.failureKinds['waiters left']).to.equal(1);
            expect(report.leaks.handlesGrown.Timeout).to.be.above(0);
            expect(report.failureKinds['handles left']).to.equal(1);
            expect(report.memory.heapGrowthBytes).to.be.above(SHORT_SOAK_OPTIONS.heapGrowthLimitBytes);
            expect(report.failureKinds.heap).to.equal(1);
            // The leaked interval keeps the stopped service from ending by itself.
            expect(report.serviceExitCode).to.equal(3);
        });
    });
});
