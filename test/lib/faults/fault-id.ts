import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { nextFaultId } from '../../../lib/faults/fault-id';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('lib/faults/fault-id', () => {

    it('makes version 7 UUIDs that sort as they were made, within one millisecond too', () => {
        const made = Array.from({ length: 5000 }, () => nextFaultId(1_800_000_000_000));
        for (const { id } of made) {
            expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        }

        const ids = made.map((m) => m.id);
        expect([...ids].sort()).to.equal(ids);
        expect(new Set(ids).size).to.equal(ids.length);
        // 4,096 fit one millisecond; the rest borrow the next, and createdAt says so.
        expect(made[0]!.createdAt).to.equal(1_800_000_000_000);
        expect(made[4095]!.createdAt).to.equal(1_800_000_000_000);
        expect(made[4096]!.createdAt).to.equal(1_800_000_000_001);
        expect(parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16)).to.equal(made[0]!.createdAt);
    });

    it('never goes back when the clock does', () => {
        const later = nextFaultId(1_900_000_000_000);
        const earlier = nextFaultId(1_899_999_999_000);
        expect(earlier.id > later.id).to.be.true();
        expect(earlier.createdAt).to.equal(1_900_000_000_000);
    });
});
