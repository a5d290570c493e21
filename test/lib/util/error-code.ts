import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { errorCode } from '../../../lib/util/error-code';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('errorCode()', () => {

    it('returns a string code', () => {
        expect(errorCode(Object.assign(new Error('x'), { code: 'ENOENT' }))).to.equal('ENOENT');
    });

    it('returns undefined for a missing or non-string code, and for non-objects', () => {
        expect(errorCode(new Error('x'))).to.be.undefined();
        expect(errorCode(Object.assign(new Error('x'), { code: 23505 }))).to.be.undefined();
        expect(errorCode(null)).to.be.undefined();
        expect(errorCode(undefined)).to.be.undefined();
        expect(errorCode('ENOENT')).to.be.undefined();
    });
});
