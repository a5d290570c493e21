import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { TimeoutError, within } from '../../../lib/util/timeout';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('timeout', () => {

    describe('within()', () => {

        it('answers the work\'s value or failure when it settles in time', async () => {
            expect(await within(Promise.resolve(7), 1000, 'adding')).to.equal(7);
            await expect(within(Promise.reject(new Error('broken')), 1000, 'adding')).to.reject('broken');
        });

        it('rejects with a TimeoutError naming the work when it does not', async () => {
            const err = await expect(within(new Promise(() => undefined), 10, 'writing blob k')).to.reject(TimeoutError);
            expect(err.message).to.equal('writing blob k did not finish within 10 ms');
        });
    });
});
