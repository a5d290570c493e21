import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { describeSoak, LONG_SOAK_OPTIONS, runSoak, type SoakOptions } from './soak';

// The long soak (ISSUE 7: 20,000 messages, 2,000 long-polls) runs only when asked:
//
//   npm run soak        (= INBOX_CAPTURE_SOAK=long lab --typescript -m 0 test/system/soak/long.ts)
//
// `lab test` loads every file under test/, this one included; without the variable it
// exports no script, and lab skips files without one. INBOX_CAPTURE_SOAK_OPTIONS may
// hold JSON overriding options, e.g. '{"messages":2000,"longPolls":500}'.

const { expect } = Code;

/** The environment variable that turns the long soak on. */
export const SOAK_SWITCH = 'INBOX_CAPTURE_SOAK';

if (process.env[SOAK_SWITCH] === 'long') {
    const lab = Lab.script();
    exports.lab = lab;
    const overrides = JSON.parse(process.env.INBOX_CAPTURE_SOAK_OPTIONS ?? '{}') as Partial<SoakOptions>;
    const options: SoakOptions = { ...LONG_SOAK_OPTIONS, ...overrides, progress: (line) => console.log(line) };

    lab.describe('soak (long)', () => {

        lab.it(`delivers ${options.messages} messages to ${options.longPolls} waiting long-polls with nothing lost and nothing left behind`, async () => {
            console.log(`soak: ${JSON.stringify({ ...options, progress: undefined })}`);
            const report = await runSoak(options);
            console.log(describeSoak(report));
            console.log(`soak report: ${JSON.stringify(report)}`);
            expect(report.failures).to.equal([]);
            expect(report.messages.acknowledged).to.equal(options.messages);
            expect(report.messages.stored + report.messages.deletedById + report.messages.deletedInBulk).to.equal(options.messages);
            expect(report.longPolls.peakWaiters).to.be.at.least(Math.floor(options.longPolls * 0.9));
        });
    });
}
