import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { newWebhookSecret, webhookKey } from '../../../adapters/webhooks/webhook-secret';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('webhook-secret', () => {

    describe('webhookKey()', () => {

        it('decodes the base64 after whsec_', () => {
            expect(webhookKey('whsec_AAEC/w==')).to.equal(Buffer.from([0, 1, 2, 255]));
        });

        it('takes any other secret as its UTF-8 bytes', () => {
            expect(webhookKey('ünï')).to.equal(Buffer.from('ünï', 'utf8'));
            expect(webhookKey('whsec')).to.equal(Buffer.from('whsec'));
        });

        it('says why a malformed whsec_ secret or an empty one is no key', () => {
            for (const secret of ['whsec_', 'whsec_not base64!', 'whsec_AAE', 'whsec_AA=A', '']) {
                expect(webhookKey(secret), secret).to.be.a.string();
            }
        });
    });

    describe('newWebhookSecret()', () => {

        it('is whsec_ and 32 random bytes in base64, new each time', () => {
            const a = newWebhookSecret();
            expect(a).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
            expect(webhookKey(a)).to.have.length(32);
            expect(newWebhookSecret()).to.not.equal(a);
        });
    });
});
