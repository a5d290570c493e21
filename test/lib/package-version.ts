import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { packageVersion } from '../../lib/package-version';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('packageVersion()', () => {

    it('is the version in our package.json', () => {
        expect(packageVersion()).to.equal(require('../../package.json').version);
    });
});
