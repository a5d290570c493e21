import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Nodemailer from 'nodemailer';
import { createSmtpListener } from '../../../adapters/smtp';
import { buildMail } from '../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver';

const { expect } = Code;
const { describe, it, afterEach } = exports.lab = Lab.script();

interface Payload {
    event: string;
    email: { messageId: string; inbox: string; rawUrl: string };
}

const payloadOf = (body: Buffer) => JSON.parse(body.toString('utf8')) as Payload;

describe('plugin webhooks option', () => {

    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
        for (const cleanup of cleanups.splice(0).reverse()) {
            await cleanup();
        }
    });

    async function receiver(): Promise<WebhookReceiver> {
        const started = await startWebhookReceiver();
        cleanups.push(() => started.close());
        return started;
    }

    async function provision(options: Parameters<typeof provisionServer>[0]): Promise<ProvisionedServer> {
        const provisioned = await provisionServer(options);
        cleanups.push(() => provisioned.cleanup());
        return provisioned;
    }

    it('tells a target with `inboxes` only of mail to those inboxes, and one without of all', async () => {
        const filtered = await receiver();
        const all = await receiver();
        const { api } = await provision({ plugin: { webhooks: [{ url: filtered.url(), inboxes: ['alpha'] }, { url: all.url() }] } });

        await api.ingestForApi(buildMail({ to: 'beta@test.example', subject: 'to beta' }));
        await api.ingestForApi(buildMail({ to: 'alpha@test.example', subject: 'to alpha' }));
        const both = await all.waitFor(2);
        const [only] = await filtered.waitFor(1);
        expect(both.map((r) => payloadOf(r.body).email.inbox).sort()).to.equal(['alpha', 'beta']);
        expect(payloadOf(only!.body).email.inbox).to.equal('alpha');
        // One copy per inbox: a message to both inboxes is two emails, two deliveries to `all`.
        await api.ingestForApi(buildMail({ to: ['alpha@test.example', 'beta@test.example'], subject: 'to both' }));
        await all.waitFor(4);
        await filtered.waitFor(2);
        expect(filtered.received.every((r) => payloadOf(r.body).email.inbox === 'alpha')).to.be.true();
    });

    it('tells each tenant\'s target, filtered by its prefixed inbox, only of that tenant\'s mail over SMTP (docs/tenants.md)', async () => {
        const hookA = await receiver();
        const hookB = await receiver();
        const { api } = await provision({ plugin: { webhooks: [{ url: hookA.url(), inboxes: ['team-a-signup'] }, { url: hookB.url(), inboxes: ['team-b-signup'] }] } });
        const listener = createSmtpListener({ capture: api.capture, host: '127.0.0.1', port: 0, auth: { users: {} } });
        const { port } = await listener.listen();
        cleanups.push(() => listener.close());
        for (const team of ['team-a', 'team-b']) {
            const pass = (await api.capture.createSmtpUser(team, `${team}-`))!;
            const transport = Nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, auth: { user: team, pass } });
            // Both teams' applications send to the same address.
            await transport.sendMail({ envelope: { from: 'app@app.test', to: ['signup@app.test'] }, raw: `From: app@app.test\r\nTo: signup@app.test\r\nSubject: from ${team}\r\n\r\nHello.\r\n` });
            transport.close();
        }

        const [a] = await hookA.waitFor(1);
        const [b] = await hookB.waitFor(1);
        expect(payloadOf(a!.body).email.inbox).to.equal('team-a-signup');
        expect(payloadOf(b!.body).email.inbox).to.equal('team-b-signup');
        expect((payloadOf(a!.body).email as unknown as { subject: string }).subject).to.equal('from team-a');
        // Nothing else comes: each target had one email of its tenant's.
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect([hookA.received.length, hookB.received.length]).to.equal([1, 1]);
    });

    it('sends the email object with URLs under the registration prefix', async () => {
        const hook = await receiver();
        const { api } = await provision({ prefix: '/mail', plugin: { webhooks: [{ url: hook.url() }] } });

        const [view] = await api.ingestForApi(buildMail({ to: 'prefixed@test.example' }));
        const [request] = await hook.waitFor(1);
        expect(payloadOf(request!.body).email).to.equal(JSON.parse(JSON.stringify(view)) as Payload['email']);
        expect(payloadOf(request!.body).email.rawUrl).to.startWith('/mail/v1/emails/');
    });

    it('skips a delivery whose email was deleted before it was sent', async () => {
        let calls = 0;
        const hook = await startWebhookReceiver(() => ({ status: ++calls === 1 ? 500 : 200 }));
        cleanups.push(() => hook.close());
        const { api } = await provision({ plugin: { webhooks: [{ url: hook.url() }], webhookDelivery: { firstRetryMs: 300 } } });

        const [view] = await api.ingestForApi(buildMail({ to: 'deleted@test.example' }));
        await hook.waitFor(1);
        expect(await api.capture.deleteEmail(view!.messageId)).to.be.true();
        // The retry finds no email: the row goes, nothing is sent.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect(hook.received.length).to.equal(1);
    });

    it('refuses a URL that is not http(s), a duplicate URL, an inbox name the API could never hold, a timeout over 10 s and a whsec_ secret that is not base64', async () => {
        const attempts = [
            { webhooks: [{ url: 'ftp://127.0.0.1/hook' }] },
            { webhooks: [{ url: 'http://127.0.0.1/a' }, { url: 'http://127.0.0.1/a' }] },
            { webhooks: [{ url: 'http://127.0.0.1/a', inboxes: ['Not An Inbox'] }] },
            { webhooks: [{ url: 'http://127.0.0.1/a' }], webhookDelivery: { timeoutMs: 20_000 } },
            { webhooks: [{ url: 'http://127.0.0.1/a' }], webhookDelivery: { firstRetryMs: 60_000 } },
            { webhooks: [{ url: 'http://127.0.0.1/a', secret: 'whsec_AAE' }] }
        ];
        for (const plugin of attempts) {
            await expect(provisionServer({ plugin })).to.reject(/inbox-capture plugin: invalid options/);
        }
    });
});
