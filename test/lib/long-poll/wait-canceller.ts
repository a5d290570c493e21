import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { WaitCanceller } from '../../../lib/long-poll/wait-canceller';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** A wait's stand-in that counts how often it was cancelled. */
const target = () => {
    const counted = { cancels: 0, cancel: () => counted.cancels++ };
    return counted;
};

describe('wait-canceller', () => {

    describe('abort()', () => {

        it('cancels the attached wait once and reports aborted; aborting again does nothing', () => {
            const canceller = new WaitCanceller();
            const wait = target();
            canceller.attach(wait);
            expect(canceller.aborted).to.be.false();
            canceller.abort();
            expect(canceller.aborted).to.be.true();
            expect(wait.cancels).to.equal(1);
            canceller.abort();
            expect(wait.cancels).to.equal(1);
        });

        it('before anything is attached, only reports aborted', () => {
            const canceller = new WaitCanceller();
            canceller.abort();
            expect(canceller.aborted).to.be.true();
            const wait = target();
            canceller.attach(wait);
            canceller.abort();
            expect(wait.cancels).to.equal(0);
        });

        it('is bound: works called alone and as an event listener', () => {
            const alone = new WaitCanceller();
            const first = target();
            alone.attach(first);
            const { abort } = alone;
            abort();
            expect(first.cancels).to.equal(1);

            const listening = new WaitCanceller();
            const second = target();
            listening.attach(second);
            const controller = new AbortController();
            controller.signal.addEventListener('abort', listening.abort, { once: true });
            controller.abort();
            expect(listening.aborted).to.be.true();
            expect(second.cancels).to.equal(1);
        });
    });

    describe('attach()', () => {

        it('replaces the wait an abort ends', () => {
            const canceller = new WaitCanceller();
            const old = target();
            const current = target();
            canceller.attach(old);
            canceller.attach(current);
            canceller.abort();
            expect(old.cancels).to.equal(0);
            expect(current.cancels).to.equal(1);
        });

        it('with undefined, detaches a wait that is over: a later abort touches nothing', () => {
            const canceller = new WaitCanceller();
            const wait = target();
            canceller.attach(wait);
            canceller.attach(undefined);
            canceller.abort();
            expect(canceller.aborted).to.be.true();
            expect(wait.cancels).to.equal(0);
        });
    });
});
