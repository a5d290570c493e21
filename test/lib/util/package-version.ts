import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { packageVersion } from '../../../lib/util/package-version';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('packageVersion()', () => {

    it('is the version in our package.json', () => {
        const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
        expect(packageVersion()).to.equal(pkg.version);
    });
});
