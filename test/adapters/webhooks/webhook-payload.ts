import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { Webhook } from 'standardwebhooks';
import { MAX_WEBHOOK_BODY_BYTES, signWebhook, webhookBody, webhookRequest, type WebhookEmail } from '../../../adapters/webhooks/webhook-payload';
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
            const { body, headers } = webhookRequest('d-1', { subject: 'Grüße', body: 'b', htmlBody: '' } as WebhookEmail, key, 1_700_000_000_999);
            expect(body.toString('utf8')).to.equal('{"event":"email.received","email":{"subject":"Grüße","body":"b","htmlBody":""}}');
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
                const { body, headers } = webhookRequest('d-2', { body: 'x', htmlBody: '' }, webhookKey(secret) as Buffer);
                expect(verifier.verify(body.toString('utf8'), headers)).to.equal({ event: 'email.received', email: { body: 'x', htmlBody: '' } });
                expect(() => verifier.verify(body.toString('utf8'), { ...headers, 'webhook-id': 'd-3' })).to.throw('No matching signature found');
            }
        });

        it('sends no signature header without a key', () => {
            const { headers } = webhookRequest('d-2', { body: '', htmlBody: '' }, undefined);
            expect(headers).to.not.include('webhook-signature');
            expect(headers['webhook-id']).to.equal('d-2');
        });
    });

    describe('webhookBody()', () => {
        const email = (body: string, htmlBody = '') => ({ messageId: 'm@x', subject: 's', body, htmlBody, codes: ['482913'] });

        it('carries the email whole up to 1 MiB of JSON', () => {
            const fits = email('x'.repeat(MAX_WEBHOOK_BODY_BYTES - 200));
            const body = webhookBody(fits);
            expect(body.length).to.be.at.most(MAX_WEBHOOK_BODY_BYTES);
            expect(JSON.parse(body.toString())).to.equal({ event: 'email.received', email: fits });
        });

        it('empties body and htmlBody past 1 MiB and says "truncated": true beside "event"', () => {
            for (const large of [email('x'.repeat(MAX_WEBHOOK_BODY_BYTES)), email('"'.repeat(MAX_WEBHOOK_BODY_BYTES / 2 + 10)), email('a', '<p>'.repeat(MAX_WEBHOOK_BODY_BYTES))]) {
                const body = webhookBody(large);
                expect(body.length).to.be.below(1000);
                expect(body.toString()).to.startWith('{"event":"email.received","truncated":true,"email":{');
                expect(JSON.parse(body.toString()).email).to.equal({ ...large, body: '', htmlBody: '' });
            }
        });
    });
});
