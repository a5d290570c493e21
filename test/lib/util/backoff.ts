import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { backoffMs, retryWithBackoff } from '../../../lib/util/backoff';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('backoff', () => {

    describe('backoffMs()', () => {

        it('doubles from the first wait', () => {
            expect([0, 1, 2, 3].map((retry) => backoffMs(retry, { firstMs: 50 }))).to.equal([50, 100, 200, 400]);
        });

        it('stops growing at maxMs', () => {
            expect([0, 5, 6, 20].map((retry) => backoffMs(retry, { firstMs: 100, maxMs: 5000 }))).to.equal([100, 3200, 5000, 5000]);
        });

        it('with jitter, picks from the upper half of each step', () => {
            for (let i = 0; i < 200; i++) {
                const wait = backoffMs(3, { firstMs: 10, jitter: true });
                expect(wait).to.be.within(40, 80);
            }

            const waits = new Set(Array.from({ length: 20 }, () => backoffMs(3, { firstMs: 10, jitter: true })));
            expect(waits.size).to.be.above(1);
        });
    });

    describe('retryWithBackoff()', () => {

        it('returns the first success', async () => {
            let calls = 0;
            const result = await retryWithBackoff(() => {
                calls++;
                return calls < 3 ? Promise.reject(new Error(`fail ${calls}`)) : Promise.resolve('ok');
            }, { retries: 5, firstMs: 1 });
            expect(result).to.equal('ok');
            expect(calls).to.equal(3);
        });

        it('throws the last failure after `retries` retries, telling onRetry of each one retried', async () => {
            let calls = 0;
            const told: number[] = [];
            await expect(retryWithBackoff(() => Promise.reject(new Error(`fail ${++calls}`)), {
                retries: 2,
                firstMs: 1,
                onRetry: (_err, retry) => told.push(retry)
            })).to.reject('fail 3');
            expect(calls).to.equal(3);
            expect(told).to.equal([0, 1]);
        });

        it('throws at once a failure that is not retryable', async () => {
            let calls = 0;
            await expect(retryWithBackoff(() => Promise.reject(new Error(`fail ${++calls}`)), {
                retries: 5,
                firstMs: 1,
                retryable: (err) => (err as Error).message !== 'fail 2'
            })).to.reject('fail 2');
            expect(calls).to.equal(2);
        });

        it('waits between attempts as backoffMs() says', async () => {
            const times: number[] = [];
            await expect(retryWithBackoff(() => {
                times.push(Date.now());
                return Promise.reject(new Error('no'));
            }, { retries: 2, firstMs: 20 })).to.reject('no');
            // 20 ms, then 40 ms: timers never fire early.
            expect(times[1] - times[0]).to.be.at.least(19);
            expect(times[2] - times[1]).to.be.at.least(39);
        });
    });
});
