import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createInboxCapture, type InboxCapture } from '../../../lib/inbox-capture';
import type { EmailRecord } from '../../../lib/types';
import type { WebhookDispatcher } from '../../../lib/webhooks/webhook-dispatcher';
import { buildMail } from '../../helpers/mail';
import { sqliteFsStores, type TestStores } from '../../helpers/test-stores';
import { startWebhookReceiver } from '../../helpers/webhook-receiver';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const render = (record: EmailRecord) => ({ id: record.messageId, subject: record.subject });

async function withCapture(test: (capture: InboxCapture, stores: TestStores) => Promise<void>): Promise<void> {
    const stores = await sqliteFsStores().create();
    const capture = createInboxCapture({ recordStore: stores.recordStore, blobStore: stores.blobStore });
    await capture.start();
    const started: WebhookDispatcher[] = [];
    const startWebhooks = capture.startWebhooks.bind(capture);
    capture.startWebhooks = (options) => {
        const dispatcher = startWebhooks(options);
        started.push(dispatcher);
        return dispatcher;
    };
    try {
        await test(capture, stores);
    }
    finally {
        // The dispatcher before the stores (cleanup() closes them).
        await Promise.all(started.map((d) => d.close()));
        await stores.cleanup();
    }
}

describe('webhook-dispatcher', () => {

    describe('startWebhookDispatcher() through InboxCapture.startWebhooks()', () => {

        it('sends the rendered email, and gives a delivery up once retrying would pass giveUpAfterMs', async () => {
            const hook = await startWebhookReceiver(() => ({ status: 500 }));
            try {
                await withCapture(async (capture, stores) => {
                    capture.startWebhooks({ targets: [{ url: hook.url() }], render, firstRetryMs: 50, giveUpAfterMs: 300 });
                    const [record] = await capture.ingestRawEmail(buildMail({ to: 'given-up@test.example', subject: 'hello' }));
                    const [first] = await hook.waitFor(1);
                    expect(JSON.parse(first!.body.toString('utf8'))).to.equal({ event: 'email.received', email: { id: record!.messageId, subject: 'hello' } });

                    // Waits of 50, 100, then 200 ms, which would end past 300 ms after the save: three attempts.
                    await hook.waitFor(3);
                    await new Promise((resolve) => setTimeout(resolve, 600));
                    const attempts = 3;
                    expect(await stores.recordStore.claimWebhookDeliveries!([hook.url()], 10, 1)).to.equal([]);
                    expect(hook.received.length).to.equal(attempts);
                });
            }
            finally {
                await hook.close();
            }
        });

        it('close() aborts a POST in flight and sends nothing after it; the delivery stays pending', async () => {
            const hook = await startWebhookReceiver(() => 'hold');
            try {
                await withCapture(async (capture, stores) => {
                    const webhooks = capture.startWebhooks({ targets: [{ url: hook.url() }], render });
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
            await withCapture(async (capture) => {
                capture.startWebhooks({ targets: [{ url: 'http://127.0.0.1:9/h' }], render });
                expect(() => capture.startWebhooks({ targets: [], render })).to.throw(/already started/);
            });
        });
    });
});
