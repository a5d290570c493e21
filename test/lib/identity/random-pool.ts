import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { generateMessageId, newBlobPrefix } from '../../../lib/identity/ids';
import { randomBytesFromPool } from '../../../lib/identity/random-pool';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('random bytes drawn a pool at a time', () => {
    it('hands every byte out once: blob prefixes over many pools are 28 hex digits, none twice', () => {
        // 2,000 prefixes draw 16,000 bytes: more than ten pools.
        const prefixes = Array.from({ length: 2000 }, () => newBlobPrefix());
        for (const prefix of prefixes) {
            expect(prefix).to.match(/^[0-9a-f]{28}$/);
        }

        expect(new Set(prefixes).size).to.equal(prefixes.length);
        const ids = Array.from({ length: 500 }, () => generateMessageId());
        expect(new Set(ids).size).to.equal(ids.length);
        expect(ids[0]).to.match(/^[A-Za-z0-9_-]{22}@inbox-capture$/);
    });

    it('starts a blob prefix with the time, so that later prefixes sort after earlier ones', async () => {
        const first = newBlobPrefix();
        await new Promise((resolve) => setTimeout(resolve, 5));
        const later = Array.from({ length: 100 }, () => newBlobPrefix());
        for (const prefix of later) {
            expect(prefix > first, `${prefix} after ${first}`).to.be.true();
        }

        // The time in ms, 12 hex digits: the prefix says when, to the millisecond.
        expect(Math.abs(parseInt(first.slice(0, 12), 16) - Date.now())).to.be.below(1000);
    });

    it('never changes bytes handed out earlier when it draws a new pool', () => {
        const held = randomBytesFromPool(16);
        const copy = Buffer.from(held);
        for (let i = 0; i < 300; i++) {
            randomBytesFromPool(16);
        }

        expect(held.equals(copy)).to.be.true();
    });

    it('refuses a size it cannot serve from one pool', () => {
        expect(() => randomBytesFromPool(0)).to.throw(RangeError);
        expect(() => randomBytesFromPool(1537)).to.throw(RangeError);
        expect(() => randomBytesFromPool(1.5)).to.throw(RangeError);
        expect(randomBytesFromPool(1536)).to.have.length(1536);
    });
});
