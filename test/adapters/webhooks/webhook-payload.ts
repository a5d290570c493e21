import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { Webhook } from 'standardwebhooks';
import { signWebhook, webhookRequest } from '../../../adapters/webhooks/webhook-payload';
import { webhookKey } from '../../../adapters/webhooks/webhook-secret';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('webhook-payload', () => {

    describe('signWebhook()', () => {

        it('is v1, and the base64 HMAC-SHA256 of "<id>.<timestamp>.<body>" (the Standard Webhooks example)', () => {
            const key = webhookKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw') as Buffer;
            expect(signWebhook(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, Buffer.from('{"test": 2432232314}')))
                .to.equal('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
        });
    });

    describe('webhookRequest()', () => {

        it('wraps the email as { event, email } and signs id, timestamp and exactly the body bytes', () => {
            const key = webhookKey('plain key') as Buffer;
            const { body, headers } = webhookRequest('d-1', { subject: 'Grüße' }, key, 1_700_000_000_999);
            expect(body.toString('utf8')).to.equal('{"event":"email.received","email":{"subject":"Grüße"}}');
            expect(headers).to.equal({
                'content-type': 'application/json',
                'x-inbox-capture-event': 'email.received',
                'webhook-id': 'd-1',
                'webhook-timestamp': '1700000000',
                'webhook-signature': signWebhook(key, 'd-1', 1700000000, body)
            });
        });

        it('verifies with the standardwebhooks library, for a whsec_ secret and a plain one', () => {
            for (const [secret, verifier] of [
                ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')],
                ['a plain secret, ünïcode too', new Webhook(Buffer.from('a plain secret, ünïcode too', 'utf8'), { format: 'raw' })]
            ] as const) {
                const { body, headers } = webhookRequest('d-2', { n: 1 }, webhookKey(secret) as Buffer);
                expect(verifier.verify(body.toString('utf8'), headers)).to.equal({ event: 'email.received', email: { n: 1 } });
                expect(() => verifier.verify(body.toString('utf8'), { ...headers, 'webhook-id': 'd-3' })).to.throw('No matching signature found');
            }
        });

        it('sends no signature header without a key', () => {
            const { headers } = webhookRequest('d-2', {}, undefined);
            expect(headers).to.not.include('webhook-signature');
            expect(headers['webhook-id']).to.equal('d-2');
        });
    });
});
