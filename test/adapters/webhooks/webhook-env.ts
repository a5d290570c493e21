import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { ConfigError, readEnvConfig } from '../../../adapters/standalone/env-config';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('webhook-env', () => {

    describe('readWebhookEnv() through readEnvConfig()', () => {

        it('reads one URL or several separated by commas, the secret for each, and the timings', () => {
            const config = readEnvConfig({
                INBOX_CAPTURE_WEBHOOK_URL: ' https://hooks.example.test/a?x=1 ,http://127.0.0.1:9000/b,',
                INBOX_CAPTURE_WEBHOOK_SECRET: 's3cret',
                INBOX_CAPTURE_WEBHOOK_TIMEOUT_MS: '2500',
                INBOX_CAPTURE_WEBHOOK_FIRST_RETRY_MS: '100',
                INBOX_CAPTURE_WEBHOOK_POLL_MS: '250'
            }, '/srv');
            expect(config.webhooks).to.equal({
                webhooks: [{ url: 'https://hooks.example.test/a?x=1', secret: 's3cret' }, { url: 'http://127.0.0.1:9000/b', secret: 's3cret' }],
                webhookDelivery: { timeoutMs: 2500, firstRetryMs: 100, pollIntervalMs: 250 }
            });
        });

        it('configures no webhooks when no URL is set, and no secret without one', () => {
            expect(readEnvConfig({}, '/srv').webhooks).to.be.undefined();
            expect(readEnvConfig({ INBOX_CAPTURE_WEBHOOK_URL: 'http://127.0.0.1/h' }, '/srv').webhooks).to.equal({ webhooks: [{ url: 'http://127.0.0.1/h' }], webhookDelivery: {} });
        });

        it('refuses what is not an http(s) URL list, a secret without a URL, and timings out of 1..10000 ms (the poll 10..10000)', () => {
            const bad: Record<string, string>[] = [
                { INBOX_CAPTURE_WEBHOOK_URL: 'ftp://127.0.0.1/h' },
                { INBOX_CAPTURE_WEBHOOK_URL: 'http://127.0.0.1/h,not a url' },
                { INBOX_CAPTURE_WEBHOOK_URL: ',' },
                { INBOX_CAPTURE_WEBHOOK_SECRET: 'orphan' },
                { INBOX_CAPTURE_WEBHOOK_URL: 'http://127.0.0.1/h', INBOX_CAPTURE_WEBHOOK_TIMEOUT_MS: '20000' },
                { INBOX_CAPTURE_WEBHOOK_URL: 'http://127.0.0.1/h', INBOX_CAPTURE_WEBHOOK_FIRST_RETRY_MS: '0' },
                { INBOX_CAPTURE_WEBHOOK_URL: 'http://127.0.0.1/h', INBOX_CAPTURE_WEBHOOK_TIMEOUT_MS: '5s' },
                { INBOX_CAPTURE_WEBHOOK_URL: 'http://127.0.0.1/h', INBOX_CAPTURE_WEBHOOK_POLL_MS: '9' },
                { INBOX_CAPTURE_WEBHOOK_URL: 'http://127.0.0.1/h', INBOX_CAPTURE_WEBHOOK_POLL_MS: '10001' },
                { INBOX_CAPTURE_WEBHOOK_URL: 'http://127.0.0.1/h', INBOX_CAPTURE_WEBHOOK_SECRET: 'whsec_not base64' }
            ];
            for (const env of bad) {
                expect(() => readEnvConfig(env, '/srv'), JSON.stringify(env)).to.throw(ConfigError, /INBOX_CAPTURE_WEBHOOK_/);
            }
        });
    });
});
