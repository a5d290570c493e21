import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { deliverRaw } from '../helpers/raw-smtp';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';
import { waitUntil } from '../helpers/wait-until';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const { expect } = Code;
const { describe, it, afterEach } = exports.lab = Lab.script();

// docs/api.md, "Auto-relay": a relay that routes the allowed domain back to the service (a
// plausible staging set-up) had each captured copy relayed again for ever, with a webhook
// POST each time. A message is relayed at most once per recipient, and never past 50 hops.

/** How long nothing more must happen for the loop to count as stopped: many relay round trips here. */
const QUIET_MS = 3_000;

describe('auto-relay through a relay that sends the mail back (standalone service)', () => {
    let service: StandaloneService | undefined;
    let relay: SmtpSink | undefined;
    let hooks: WebhookReceiver | undefined;

    afterEach(async () => {
        await service?.stop();
        await relay?.close();
        await hooks?.close();
        service = relay = hooks = undefined;
    });

    /**
     * A relay that hands every message back to the service's SMTP port, as is or with a
     * Received field of its own on top, and the service relaying `*@loop.test` to it with
     * auto-relay on `subject:loop` and a webhook.
     */
    async function loop(addReceived: boolean): Promise<{ relay: SmtpSink; hooks: WebhookReceiver; service: StandaloneService }> {
        let smtpPort = 0;
        relay = await startSmtpSink({
            onMessage(message) {
                const raw = addReceived ? Buffer.concat([Buffer.from(`Received: from inbox-capture by loop-relay.test; ${new Date().toUTCString()}\r\n`), message.raw]) : message.raw;
                void deliverRaw(smtpPort, raw, message.to).catch(() => undefined);
            }
        });
        hooks = await startWebhookReceiver();
        service = await startStandalone({
            env: {
                INBOX_CAPTURE_RELAY_URL: relay.url(),
                INBOX_CAPTURE_RELAY_ALLOW: '*@loop.test',
                INBOX_CAPTURE_RELAY_AUTO_MATCH: 'subject:loop',
                INBOX_CAPTURE_WEBHOOK_URL: hooks.url('/hook')
            }
        });
        smtpPort = service.smtpPort;
        return { relay, hooks, service };
    }

    /** Waits until neither the relay nor the webhook receiver saw anything for QUIET_MS; answers their counts. */
    async function settled(sink: SmtpSink, receiver: WebhookReceiver): Promise<{ relayed: number; posts: number }> {
        let last = { relayed: -1, posts: -1, at: Date.now() };
        await waitUntil('the loop stops', () => {
            const now = { relayed: sink.received.length, posts: receiver.received.length, at: Date.now() };
            if (now.relayed !== last.relayed || now.posts !== last.posts) {
                last = now;
            }

            return now.at - last.at >= QUIET_MS;
        }, { limitMs: 60_000 });
        return { relayed: last.relayed, posts: last.posts };
    }

    const message = (messageId: string | null) => Buffer.from([
        'From: app@shop.test',
        'To: x@loop.test',
        'Subject: loop 1',
        ...(messageId ? [`Message-ID: <${messageId}>`] : []),
        '',
        'Relay me once.',
        ''
    ].join('\r\n'));

    it('relays a message that comes back as it went only once: one relay, two captures, two webhook POSTs', async () => {
        const { relay: sink, hooks: receiver, service: svc } = await loop(false);
        expect((await deliverRaw(svc.smtpPort, message('loop-direct@shop.test'), ['x@loop.test'])).code).to.equal(250);
        await waitUntil('the relay got it', () => sink.received.length === 1, { limitMs: 10_000 });
        expect(await settled(sink, receiver)).to.equal({ relayed: 1, posts: 2 });
        expect(svc.spawned.stderr()).to.include('that message was relayed to that recipient before (a relay loop?)');
    });

    it('relays a message that comes back through a server adding a Received field only once, known by its Message-ID', async () => {
        const { relay: sink, hooks: receiver, service: svc } = await loop(true);
        expect((await deliverRaw(svc.smtpPort, message('loop-mta@shop.test'), ['x@loop.test'])).code).to.equal(250);
        await waitUntil('the relay got it', () => sink.received.length === 1, { limitMs: 10_000 });
        expect(await settled(sink, receiver)).to.equal({ relayed: 1, posts: 2 });
        const listed = await fetch(`${svc.baseUrl}/v1/emails?inbox=x`, { headers: { authorization: `Bearer ${svc.apiKey}` } });
        expect(((await listed.json()) as { emails: unknown[] }).emails).to.have.length(2);
    });

    it('stops a message without Message-ID that comes back changed at 50 hops (RFC 5321 section 6.3)', { timeout: 120_000 }, async () => {
        const { relay: sink, hooks: receiver, service: svc } = await loop(true);
        expect((await deliverRaw(svc.smtpPort, message(null), ['x@loop.test'])).code).to.equal(250);
        const { relayed, posts } = await settled(sink, receiver);
        // Sent with 0..49 Received fields; the copy with 50 is captured and not sent on.
        expect(relayed).to.equal(50);
        expect(posts).to.equal(51);
        expect(svc.spawned.stderr()).to.include('has 50 or more Received fields: a loop, not relayed');
    });
});
