import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { describeCluster, runCluster, type ClusterOptions } from './cluster-run';
import { LONG_CLUSTER_OPTIONS } from './options';

// The long cluster run runs only when asked:
//
//   npm run soak:cluster   (= INBOX_CAPTURE_SOAK=cluster lab --typescript -m 0 test/system/cluster/long.ts)
//
// Without the variable this file exports no script, and lab skips it. INBOX_CAPTURE_SOAK_OPTIONS
// may hold JSON overriding options, e.g. '{"messages":5000}'.

const { expect } = Code;

if (process.env.INBOX_CAPTURE_SOAK === 'cluster') {
    const lab = Lab.script();
    exports.lab = lab;
    const overrides = JSON.parse(process.env.INBOX_CAPTURE_SOAK_OPTIONS ?? '{}') as Partial<ClusterOptions>;
    const options: ClusterOptions = { ...LONG_CLUSTER_OPTIONS, ...overrides, progress: (line) => console.log(line) };

    lab.describe('cluster (long)', () => {

        lab.it(`${options.instances} instances, ${options.messages} messages, ${options.kills.length} kill -9s: nothing lost, every waiter woken, every webhook sent`, async () => {
            console.log(`cluster: ${JSON.stringify({ ...options, progress: undefined })}`);
            const report = await runCluster(options);
            console.log(describeCluster(report));
            console.log(`cluster report: ${JSON.stringify({ ...report, wake: { ...report.wake, latenciesMs: report.wake.latenciesMs.length } })}`);
            expect(report.failures).to.equal([]);
            expect(report.kills).to.have.length(options.kills.length);
        });
    });
}
