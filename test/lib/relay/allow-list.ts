import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { parseRelayAllowList } from '../../../lib/relay/allow-list';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('lib/relay/allow-list', () => {

    describe('parseRelayAllowList()', () => {
        const list = parseRelayAllowList(['*@Example.com', ' alice@example.org ', '']);

        const cases: [string, boolean][] = [
            ['bob@example.com', true],
            ['BOB@EXAMPLE.COM', true],
            ['alice@example.org', true],
            ['Alice@Example.Org', true],
            ['bob@example.org', false],
            ['alice@example.org.evil.test', false],
            ['bob@sub.example.com', false],
            ['bob@example.com.evil.test', false],
            ['example.com', false],
            ['@example.com', false],
            ['', false],
            // Local parts that route onwards on old relays, or hide an @: a domain pattern never covers them.
            ['evil%evil.test@example.com', false],
            ['evil!evil.test@example.com', false],
            ['"evil@evil.test"@example.com', false],
            ['@relay.test:bob@example.com', false],
            ['bob.smith+tag@example.com', true]
        ];
        for (const [address, allowed] of cases) {
            it(`${allowed ? 'allows' : 'refuses'} "${address}"`, () => {
                expect(list.allows(address)).to.equal(allowed);
            });
        }

        it('lets a routing local part by only when the list names that exact address', () => {
            const exact = parseRelayAllowList(['*@example.com', 'odd%route@example.com', 'bang!path@example.com']);
            expect(exact.allows('odd%route@example.com')).to.be.true();
            expect(exact.allows('Bang!Path@Example.com')).to.be.true();
            expect(exact.allows('odd%other@example.com')).to.be.false();
            expect(exact.allows('other!path@example.com')).to.be.false();
        });

        for (const bad of [[], [''], ['*'], ['*@*'], ['a*@example.com'], ['example.com'], ['@example.com'], ['*@'], ['a b@example.com'], ['*@nodot']]) {
            it(`refuses the list ${JSON.stringify(bad)}`, () => {
                expect(() => parseRelayAllowList(bad)).to.throw(/allow-list/);
            });
        }
    });
});
