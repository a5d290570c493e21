import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createInboxCapture, type InboxCapture } from '../../../lib/service/inbox-capture';
import type { EmailRecord } from '../../../lib/types';
import { startWebhooks as startWebhooksOf, type StartWebhooksOptions } from '../../../adapters/webhooks/start-webhooks';
import type { WebhookDispatcher } from '../../../adapters/webhooks/webhook-dispatcher';
import { buildMail } from '../../helpers/mail';
import { sqliteFsStores, type TestStores } from '../../helpers/test-stores';
import { startWebhookReceiver } from '../../helpers/webhook-receiver';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const render = (record: EmailRecord) => ({ id: record.messageId, subject: record.subject });

/** What a test gets: a started service, its stores, and startWebhooks() on that service (stopped after the test). */
interface Rig {
    capture: InboxCapture;
    stores: TestStores;
    startWebhooks(options: StartWebhooksOptions): WebhookDispatcher;
}

async function withCapture(test: (rig: Rig) => Promise<void>): Promise<void> {
    const stores = await sqliteFsStores().create();
    const capture = createInboxCapture({ recordStore: stores.recordStore, blobStore: stores.blobStore });
    await capture.start();
    const started: WebhookDispatcher[] = [];
    const startWebhooks = (options: StartWebhooksOptions) => {
        const dispatcher = startWebhooksOf(capture, options);
        started.push(dispatcher);
        return dispatcher;
    };
    try {
        await test({ capture, stores, startWebhooks });
    }
    finally {
        // The dispatcher before the stores (cleanup() closes them).
        await Promise.all(started.map((d) => d.close()));
        await stores.cleanup();
    }
}

describe('webhook-dispatcher', () => {

    describe('startWebhookDispatcher() through startWebhooks()', () => {

        it('sends the rendered email, and gives a delivery up once retrying would pass giveUpAfterMs', async () => {
            const hook = await startWebhookReceiver(() => ({ status: 500 }));
            try {
                await withCapture(async ({ capture, stores, startWebhooks }) => {
                    startWebhooks({ targets: [{ url: hook.url() }], render, firstRetryMs: 100, giveUpAfterMs: 1300 });
                    const [record] = await capture.ingestRawEmail(buildMail({ to: 'given-up@test.example', subject: 'hello' }));
                    const [first] = await hook.waitFor(1);
                    expect(JSON.parse(first!.body.toString('utf8'))).to.equal({ event: 'email.received', email: { id: record!.messageId, subject: 'hello' } });

                    // Attempts at about 0, 100, 300 and 700 ms; the next would be at 1500, past 1300: four attempts.
                    // The margins (the third retry may come 600 ms late, the fifth is 200 ms past the limit
                    // and waits are never early) keep a loaded machine from changing the count.
                    await hook.waitFor(4);
                    await new Promise((resolve) => setTimeout(resolve, 1200));
                    const attempts = 4;
                    expect(await stores.recordStore.claimWebhookDeliveries!([hook.url()], 10, 1)).to.equal([]);
                    expect(hook.received.length).to.equal(attempts);
                });
            }
            finally {
                await hook.close();
            }
        });

        it('tries each retry when it is due, without waiting for the poll, although a timer may fire a millisecond early', async () => {
            // About one timer in thirty fires before Date.now() reaches its due time; 200 retries
            // 2 ms apart meet such a one almost surely, and the poll (a minute) would then hold the rest.
            const failures = 200;
            const hook = await startWebhookReceiver((i) => ({ status: i < failures ? 500 : 200 }));
            try {
                await withCapture(async ({ capture, stores, startWebhooks }) => {
                    startWebhooks({ targets: [{ url: hook.url() }], render, firstRetryMs: 2, maxRetryMs: 2, pollIntervalMs: 60_000 });
                    await capture.ingestRawEmail(buildMail({ to: 'timers@test.example' }));
                    const attempts = await hook.waitFor(failures + 1);
                    expect(new Set(attempts.map((a) => a.headers['x-inbox-capture-delivery'])).size).to.equal(1);
                    // Sent: nothing of it is left to claim.
                    await new Promise((resolve) => setTimeout(resolve, 50));
                    expect(await stores.recordStore.claimWebhookDeliveries!([hook.url()], 10, 1)).to.equal([]);
                    expect(hook.received.length).to.equal(failures + 1);
                });
            }
            finally {
                await hook.close();
            }
        });

        it('close() aborts a POST in flight and sends nothing after it; the delivery stays pending', async () => {
            const hook = await startWebhookReceiver(() => 'hold');
            try {
                await withCapture(async ({ capture, stores, startWebhooks }) => {
                    const webhooks = startWebhooks({ targets: [{ url: hook.url() }], render });
                    await capture.ingestRawEmail(buildMail({ to: 'closing@test.example' }));
                    await hook.waitFor(1);
                    await webhooks.close();
                    // The aborted POST's connection is gone.
                    for (let i = 0; i < 100 && hook.held() > 0; i++) {
                        await new Promise((resolve) => setTimeout(resolve, 20));
                    }

                    expect(hook.held()).to.equal(0);
                    // Still in the outbox, leased by the aborted attempt (not due before the lease is over).
                    expect(await stores.recordStore.claimWebhookDeliveries!([hook.url()], 10, 1)).to.equal([]);
                    expect(await stores.recordStore.dropWebhookDeliveriesBefore!(Date.now() + 1)).to.equal(1);
                    expect(hook.received.length).to.equal(1);
                });
            }
            finally {
                await hook.close();
            }
        });

        it('refuses a second start on one service', async () => {
            await withCapture(async ({ startWebhooks }) => {
                startWebhooks({ targets: [{ url: 'http://127.0.0.1:9/h' }], render });
                expect(() => startWebhooks({ targets: [], render })).to.throw(/already routed/);
            });
        });
    });
});
