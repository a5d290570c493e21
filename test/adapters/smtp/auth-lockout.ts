import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createAuthLockout, lockoutKey } from '../../../adapters/smtp/auth-lockout';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** A clock the test moves by hand, ms. */
function manualClock(): { now: () => number; advance(ms: number): void } {
    let at = 1_000_000;
    return { now: () => at, advance: (ms) => void (at += ms) };
}

describe('auth-lockout', () => {

    describe('createAuthLockout()', () => {

        it('locks an address at its fifth failure within a minute, for a minute', () => {
            const clock = manualClock();
            const lockout = createAuthLockout({}, clock.now);
            expect([1, 2, 3, 4].map(() => lockout.fail('192.0.2.1'))).to.equal([false, false, false, false]);
            expect(lockout.isLocked('192.0.2.1')).to.be.false();
            expect(lockout.fail('192.0.2.1')).to.be.true();
            expect(lockout.isLocked('192.0.2.1')).to.be.true();
            expect(lockout.isLocked('192.0.2.2')).to.be.false();
            clock.advance(59_999);
            expect(lockout.isLocked('192.0.2.1')).to.be.true();
            clock.advance(1);
            expect(lockout.isLocked('192.0.2.1')).to.be.false();
            // Over: it starts again from no failures.
            expect(lockout.fail('192.0.2.1')).to.be.false();
        });

        it('forgets failures older than the window', () => {
            const clock = manualClock();
            const lockout = createAuthLockout({ failures: 3, windowMs: 1000 }, clock.now);
            lockout.fail('192.0.2.1');
            clock.advance(600);
            lockout.fail('192.0.2.1');
            clock.advance(600);
            // The first is 1,200 ms old: two within the window, not three.
            expect(lockout.fail('192.0.2.1')).to.be.false();
            expect(lockout.fail('192.0.2.1')).to.be.true();
        });

        it('tracks at most maxAddresses, forgetting the least recently failed first', () => {
            const lockout = createAuthLockout({ failures: 2, maxAddresses: 100 }, manualClock().now);
            lockout.fail('10.0.0.1');
            for (let i = 0; i < 10_000; i++) {
                lockout.fail(`10.1.${i >> 8}.${i & 255}`);
                expect(lockout.size).to.be.at.most(100);
            }

            // 10.0.0.1 was forgotten: its next failure is its first again.
            expect(lockout.fail('10.0.0.1')).to.be.false();
            expect(lockout.fail('10.0.0.1')).to.be.true();
        });

        it('drops expired entries as new failures come in', () => {
            const clock = manualClock();
            const lockout = createAuthLockout({}, clock.now);
            for (let i = 0; i < 50; i++) {
                lockout.fail(`10.0.0.${i}`);
            }

            expect(lockout.size).to.equal(50);
            clock.advance(60_001);
            lockout.fail('10.0.1.1');
            expect(lockout.size).to.equal(1);
        });

        it('counts an IPv6 /64 as one address', () => {
            const lockout = createAuthLockout({ failures: 2 }, manualClock().now);
            lockout.fail('2001:db8:1:2::1');
            expect(lockout.fail('2001:db8:1:2:ffff:ffff:ffff:fffe')).to.be.true();
            expect(lockout.isLocked('2001:db8:1:2::abcd')).to.be.true();
            expect(lockout.isLocked('2001:db8:1:3::1')).to.be.false();
        });

        it('rejects limits that are not positive integers', () => {
            for (const name of ['failures', 'windowMs', 'lockoutMs', 'maxAddresses']) {
                expect(() => createAuthLockout({ [name]: 0 })).to.throw(TypeError, `createSmtpListener: authLockout.${name} must be a positive integer`);
                expect(() => createAuthLockout({ [name]: 2.5 })).to.throw(TypeError);
            }
        });
    });

    describe('lockoutKey()', () => {

        it('keeps an IPv4 address and maps an IPv6 address to its /64', () => {
            expect(lockoutKey('127.0.0.1')).to.equal('127.0.0.1');
            expect(lockoutKey('2001:db8:1:2::1')).to.equal('2001:db8:1:2::/64');
            expect(lockoutKey('2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd')).to.equal('2001:db8:1:2::/64');
            expect(lockoutKey('2001:db8::1')).to.equal('2001:db8:0:0::/64');
            expect(lockoutKey('::1')).to.equal('0:0:0:0::/64');
            expect(lockoutKey('fe80::1%eth0')).to.equal('fe80:0:0:0::/64');
            // An IPv4 tail (NAT64 and the like) names one IPv4 client: kept whole.
            expect(lockoutKey('64:ff9b::192.0.2.1')).to.equal('64:ff9b::192.0.2.1');
        });
    });
});
