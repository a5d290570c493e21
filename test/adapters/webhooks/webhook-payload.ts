import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { signWebhookBody, webhookRequest } from '../../../adapters/webhooks/webhook-payload';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('webhook-payload', () => {

    describe('signWebhookBody()', () => {

        it('is sha256= and the hex HMAC-SHA256 of the bytes (RFC 4231 test case 2)', () => {
            expect(signWebhookBody('Jefe', Buffer.from('what do ya want for nothing?')))
                .to.equal('sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
        });
    });

    describe('webhookRequest()', () => {

        it('wraps the email as { event, email } and signs exactly the body bytes', () => {
            const { body, headers } = webhookRequest('d-1', { subject: 'Grüße' }, 'key');
            expect(body.toString('utf8')).to.equal('{"event":"email.received","email":{"subject":"Grüße"}}');
            expect(headers).to.equal({
                'content-type': 'application/json',
                'x-inbox-capture-event': 'email.received',
                'x-inbox-capture-delivery': 'd-1',
                'x-inbox-capture-signature': signWebhookBody('key', body)
            });
        });

        it('sends no signature header without a secret', () => {
            expect(webhookRequest('d-2', {}, undefined).headers).to.not.include('x-inbox-capture-signature');
        });
    });
});
