import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { WAKE_LIMIT_MS } from './cluster-audit';
import { describeCluster, runCluster } from './cluster-run';
import { SHORT_CLUSTER_OPTIONS as OPTIONS } from './options';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('three instances on one Postgres and one bucket, one killed -9 mid-run', () => {

    it('stores every acknowledged message once and lists it everywhere, wakes every waiter within 1 s, sends every webhook, keeps retention and fault times exact', { timeout: 180_000 }, async () => {
        const report = await runCluster(OPTIONS);
        console.log(`\n[cluster] ${describeCluster(report).replace(/\n/g, '\n[cluster] ')}`);
        expect(report.failures).to.equal([]);
        // Every message was tried; the ones a kill cut off are the only ones not acknowledged.
        expect(report.acknowledged + report.inDoubt + (report.refused[450] ?? 0)).to.equal(OPTIONS.messages + OPTIONS.faultAttempts + report.wake.rounds);
        // The load reached every instance, and the kill happened mid-load.
        expect(Object.keys(report.acksByInstance).sort()).to.equal(['A', 'B', 'C']);
        expect(report.kills).to.have.length(1);
        expect(report.kills[0]!.afterAcks).to.be.below(OPTIONS.messages);
        expect(report.faultCodes).to.equal({ 250: OPTIONS.faultAttempts - OPTIONS.faultTimes, 450: OPTIONS.faultTimes });
        expect(report.rowsStoredTwice).to.equal(0);
        expect(report.retainedCounts).to.equal([OPTIONS.retentionMaxPerInbox, OPTIONS.retentionMaxPerInbox, OPTIONS.retentionMaxPerInbox]);
        expect(report.webhooks.missing).to.equal([]);
        expect(report.wake.latenciesMs.length).to.be.at.least(OPTIONS.instances * OPTIONS.instances);
        expect(report.wake.latenciesMs.at(-1)!).to.be.at.most(WAKE_LIMIT_MS);
        expect(report.exitCodes).to.equal([0, 0, 0]);
    });
});
