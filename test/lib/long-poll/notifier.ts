import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createNotifier } from '../../../lib/long-poll/notifier';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('notifier', () => {

    describe('publish()', () => {

        it('calls the listeners of that inbox only', () => {
            const notifier = createNotifier();
            const calls: string[] = [];
            notifier.subscribe('a', () => calls.push('a1'));
            notifier.subscribe('a', () => calls.push('a2'));
            notifier.subscribe('b', () => calls.push('b'));
            notifier.publish('a');
            expect(calls).to.equal(['a1', 'a2']);
            notifier.publish('nobody');
            expect(calls).to.equal(['a1', 'a2']);
        });

        it('calls every listener even when listeners unsubscribe while it runs', () => {
            const notifier = createNotifier();
            let calls = 0;
            const unsubscribes: Array<() => void> = [];
            for (let i = 0; i < 5; i++) {
                unsubscribes.push(notifier.subscribe('a', () => {
                    calls++;
                    // A woken long-poll unsubscribes itself and its neighbour.
                    unsubscribes[i]();
                    unsubscribes[(i + 1) % 5]();
                }));
            }

            notifier.publish('a');
            expect(calls).to.equal(5);
            expect(notifier.subscriberCount()).to.equal(0);
        });

        it('counts the same function subscribed twice as two subscriptions', () => {
            const notifier = createNotifier();
            let calls = 0;
            const listener = () => calls++;
            const first = notifier.subscribe('a', listener);
            notifier.subscribe('a', listener);
            notifier.publish('a');
            expect(calls).to.equal(2);
            first();
            notifier.publish('a');
            expect(calls).to.equal(3);
        });
    });

    describe('subscribe()', () => {

        it('returns an idempotent unsubscribe that stops the calls and the count', () => {
            const notifier = createNotifier();
            let calls = 0;
            const unsubscribe = notifier.subscribe('a', () => calls++);
            notifier.subscribe('a', () => undefined);
            expect(notifier.subscriberCount()).to.equal(2);
            unsubscribe();
            unsubscribe();
            expect(notifier.subscriberCount()).to.equal(1);
            notifier.publish('a');
            expect(calls).to.equal(0);
        });

        it('wakes and releases ten thousand listeners of one inbox', () => {
            const notifier = createNotifier();
            let woken = 0;
            for (let i = 0; i < 10_000; i++) {
                const unsubscribe = notifier.subscribe('busy', () => {
                    woken++;
                    unsubscribe();
                });
            }

            notifier.publish('busy');
            expect(woken).to.equal(10_000);
            expect(notifier.subscriberCount()).to.equal(0);
        });
    });
});
