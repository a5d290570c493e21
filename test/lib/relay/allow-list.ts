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
            ['', false]
        ];
        for (const [address, allowed] of cases) {
            it(`${allowed ? 'allows' : 'refuses'} "${address}"`, () => {
                expect(list.allows(address)).to.equal(allowed);
            });
        }

        for (const bad of [[], [''], ['*'], ['*@*'], ['a*@example.com'], ['example.com'], ['@example.com'], ['*@'], ['a b@example.com'], ['*@nodot']]) {
            it(`refuses the list ${JSON.stringify(bad)}`, () => {
                expect(() => parseRelayAllowList(bad)).to.throw(/allow-list/);
            });
        }
    });
});
