import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { MissingPackageError, requireInstalled } from '../../../lib/util/optional-package';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('requireInstalled()', () => {

    it('passes when every package is installed', () => {
        expect(() => requireInstalled(['knex', 'pg', '@aws-sdk/client-s3'], 'the test')).to.not.throw();
    });

    it('names every missing package, and how to install them, in one line', () => {
        let error: unknown;
        try {
            requireInstalled(['inbox-capture-no-such-driver', 'knex', '@inbox-capture/no-such-driver'], 'TEST_SETTING selects it');
        }
        catch (err) {
            error = err;
        }

        expect(error).to.be.an.instanceof(MissingPackageError);
        expect((error as MissingPackageError).packages).to.equal(['inbox-capture-no-such-driver', '@inbox-capture/no-such-driver']);
        expect((error as Error).message).to.equal('TEST_SETTING selects it: install the "inbox-capture-no-such-driver" and "@inbox-capture/no-such-driver" packages (npm install inbox-capture-no-such-driver @inbox-capture/no-such-driver)');
        expect(() => requireInstalled(['inbox-capture-no-such-driver'], 'the Postgres record store')).to.throw(MissingPackageError, 'the Postgres record store: install the "inbox-capture-no-such-driver" package (npm install inbox-capture-no-such-driver)');
    });
});
