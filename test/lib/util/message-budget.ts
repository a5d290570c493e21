import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { isInboxCaptureError } from '../../../lib/errors';
import { budgetSpent, createMessageBudget } from '../../../lib/util/message-budget';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('message-budget', () => {

    describe('createMessageBudget()', () => {

        it('refuses a limit that is not a positive integer', () => {
            for (const bad of [0, -1, 1.5, Number.NaN, Infinity]) {
                expect(() => createMessageBudget(bad)).to.throw(TypeError, /limitBytes/);
            }
        });

        it('reserves up to the limit and refuses what would pass it', () => {
            const budget = createMessageBudget(100);
            const a = budget.reserve(60)!;
            expect(a.bytes).to.equal(60);
            expect(budget.reserve(41)).to.be.null();
            const b = budget.reserve(40)!;
            expect(budget.heldBytes).to.equal(100);
            expect(b.grow(1)).to.be.false();
            expect(b.bytes).to.equal(40);
            expect(budget.reserve(0)).to.not.be.null();
        });

        it('grows a reservation while it fits and gives every byte back on release, once', () => {
            const budget = createMessageBudget(100);
            const a = budget.reserve(0)!;
            const other = budget.reserve(10)!;
            expect(a.grow(50)).to.be.true();
            expect(a.grow(40)).to.be.true();
            expect(a.grow(1)).to.be.false();
            expect(budget.heldBytes).to.equal(100);
            a.release();
            a.release();
            expect(a.bytes).to.equal(0);
            expect(a.grow(1)).to.be.false();
            expect(budget.heldBytes).to.equal(10);
            other.release();
            expect(budget.heldBytes).to.equal(0);
        });

        it('lets a reservation that is alone pass the limit, so a small budget slows intake but never stops it', () => {
            const budget = createMessageBudget(10);
            const alone = budget.reserve(0)!;
            expect(alone.grow(25)).to.be.true();
            expect(budget.heldBytes).to.equal(25);
            expect(budget.reserve(0)).to.be.null();
            alone.release();
            expect(budget.reserve(25)!.bytes).to.equal(25);
        });
    });

    describe('budgetSpent()', () => {

        it('is the retryable BUSY error', () => {
            expect(isInboxCaptureError(budgetSpent(), 'BUSY')).to.be.true();
        });
    });
});
