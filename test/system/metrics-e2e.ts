import * as Code from '@hapi/code';
import * as Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';
import { plugin, type InboxCapturePluginOptions } from '../../adapters/hapi';
import { createSmtpListener, type SmtpListener } from '../../adapters/smtp';
import { INGEST_SECONDS_BUCKETS } from '../../adapters/metrics/service-metrics';
import { openEmbeddedStores } from '../../lib/service/embedded-stores';
import { createInboxCapture, type InboxCapture } from '../../lib/service/inbox-capture';
import { parseMetrics, sampleValue, type MetricFamily } from '../helpers/metrics-text';
import { deliverRaw, RawSmtpSession } from '../helpers/raw-smtp';
import { startStandalone } from '../helpers/standalone-service';
import { removeDir, tempDir } from '../helpers/temp-dir';
import { waitUntil } from '../helpers/wait-until';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const MAX_MESSAGE_BYTES = 20_000;

interface Service {
    capture: InboxCapture;
    server: Hapi.Server;
    listener: SmtpListener;
    smtpPort: number;
    key: string;
    metrics(headers?: Record<string, string>): Promise<{ status: number; body: string; families: Map<string, MetricFamily> }>;
    stop(): Promise<void>;
}

// The service as the standalone program builds it: one capture, the plugin on real HTTP, an SMTP listener on it.
async function startService(options: Omit<InboxCapturePluginOptions, 'capture'>): Promise<Service> {
    const dataDir = await tempDir('metrics');
    const capture = createInboxCapture({ ...await openEmbeddedStores({ dataDir }), maxMessageBytes: MAX_MESSAGE_BYTES });
    const server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false });
    await server.register({ plugin, options: { capture, ...options } });
    await server.start();
    const listener = createSmtpListener({ capture, host: '127.0.0.1', port: 0 });
    const { port: smtpPort } = await listener.listen();
    const key = await capture.createKey(`metrics-${Math.random()}`);
    return {
        capture, server, listener, smtpPort, key,
        async metrics(headers = {}) {
            const res = await fetch(`${server.info.uri}/metrics`, { headers });
            const body = await res.text();
            return { status: res.status, body, families: res.status === 200 ? parseMetrics(body) : new Map() };
        },
        async stop() {
            await listener.close();
            await server.stop();
            await capture.close();
            await removeDir(dataDir);
        }
    };
}

const message = (to: string, subject: string, bodyBytes = 10) =>
    Buffer.from(`From: app@example.test\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${subject}-${Math.random().toString(36).slice(2)}@example.test>\r\n\r\n${'x'.repeat(bodyBytes)}\r\n`);

describe('metrics end to end: real SMTP mail, a waiting long-poll and a failing webhook, read with a Prometheus text parser', () => {
    let service: Service;
    let other: Service;
    let receiver: WebhookReceiver;

    before(async () => {
        // The first POST fails (500), every later one succeeds: one failure, then one success per email.
        receiver = await startWebhookReceiver((index) => ({ status: index === 0 ? 500 : 200 }));
        service = await startService({ metrics: 'on', webhooks: [{ url: receiver.url('/hook') }], webhookDelivery: { firstRetryMs: 20, pollIntervalMs: 50 } });
        other = await startService({ metrics: 'on' });
    });

    after(async () => {
        await service?.stop();
        await other?.stop();
        await receiver?.close();
    });

    it('counts accepted and refused messages, open sessions, waiting long-polls, ingest latency, webhook results and requests exactly', async () => {
        const before = await service.metrics();
        expect(before.status).to.equal(200);
        expect(sampleValue(before.families, 'inbox_capture_messages_received_total', { transport: 'smtp' })).to.equal(0);

        // Three accepted, one over the size cap (552), one refused by a fault rule at DATA (554).
        for (const i of [1, 2, 3]) {
            expect((await deliverRaw(service.smtpPort, message('alpha@example.test', `ok-${i}`), ['alpha@example.test'])).code).to.equal(250);
        }

        expect((await deliverRaw(service.smtpPort, message('alpha@example.test', 'big', MAX_MESSAGE_BYTES + 1), ['alpha@example.test'])).code).to.equal(552);
        await service.capture.faults.create({ stage: 'data', match: { recipient: 'refused@example.test' }, reply: { code: 554, message: 'no' } });
        expect((await deliverRaw(service.smtpPort, message('refused@example.test', 'ruled'), ['refused@example.test'])).code).to.equal(554);

        // One sent over HTTP, one refused there (over the cap).
        const send = (text: string) => fetch(`${service.server.info.uri}/v1/emails`, {
            method: 'POST', headers: { authorization: `Bearer ${service.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ from: 'app@example.test', to: 'alpha@example.test', subject: 'over http', text })
        });
        expect((await send('hi')).status).to.equal(201);
        expect((await send('x'.repeat(MAX_MESSAGE_BYTES))).status).to.equal(413);

        // A long-poll waits on an empty inbox while the figures are read.
        const waiting = new AbortController();
        const poll = fetch(`${service.server.info.uri}/v1/emails?inbox=nobody&wait=true&timeout=28`, { headers: { authorization: `Bearer ${service.key}` }, signal: waiting.signal }).catch(() => undefined);
        await waitUntil('the long-poll waits', () => service.capture.longPoller.waiterCount() === 1);
        // Two SMTP sessions held open past their greeting.
        const open = await Promise.all([RawSmtpSession.open(service.smtpPort), RawSmtpSession.open(service.smtpPort)]);
        // The four webhooks: the first attempt failed, each email then went through.
        await receiver.waitFor(5);
        await waitUntil('the webhook results are counted', async () => sampleValue((await service.metrics()).families, 'inbox_capture_webhook_deliveries_total', { result: 'success' }) === 4);

        const { families, body } = await service.metrics();
        expect(families.get('inbox_capture_messages_received_total')!.type).to.equal('COUNTER');
        expect(sampleValue(families, 'inbox_capture_messages_received_total', { transport: 'smtp' })).to.equal(3);
        expect(sampleValue(families, 'inbox_capture_messages_received_total', { transport: 'http' })).to.equal(1);
        expect(sampleValue(families, 'inbox_capture_messages_rejected_total', { reason: 'too_large' })).to.equal(2);
        expect(sampleValue(families, 'inbox_capture_messages_rejected_total', { reason: 'fault' })).to.equal(1);
        expect(families.get('inbox_capture_smtp_sessions')!.type).to.equal('GAUGE');
        expect(sampleValue(families, 'inbox_capture_smtp_sessions')).to.equal(2);
        expect(sampleValue(families, 'inbox_capture_long_polls_waiting')).to.equal(1);
        expect(sampleValue(families, 'inbox_capture_webhook_deliveries_total', { result: 'failure' })).to.equal(1);
        expect(sampleValue(families, 'inbox_capture_webhook_deliveries_total', { result: 'success' })).to.equal(4);

        expect(sampleValue(families, 'inbox_capture_http_requests_total', { route: 'POST /v1/emails', status: '201' })).to.equal(1);
        // The histogram: one observation per stored message, in buckets from half a millisecond up.
        const histogram = families.get('inbox_capture_ingest_seconds')!;
        expect(histogram.type).to.equal('HISTOGRAM');
        expect(histogram.samples[0]!.count).to.equal(4);
        expect(Object.keys(histogram.samples[0]!.buckets!).sort((a, b) => Number(a) - Number(b))).to.equal([...INGEST_SECONDS_BUCKETS.map(String), '+Inf']);
        expect(histogram.samples[0]!.buckets!['+Inf']).to.equal(4);

        // Requests by route template and status: the long-poll is still open, so not yet counted.
        expect(sampleValue(families, 'inbox_capture_http_requests_total', { route: 'GET /metrics', status: '200' })).to.be.at.least(2);
        expect(families.get('inbox_capture_http_requests_total')!.samples.some((s) => s.labels.route === 'GET /v1/emails')).to.be.false();

        // prom-client's process metrics, from this service's own registry.
        expect(families.has('process_cpu_user_seconds_total')).to.be.true();
        expect(families.has('nodejs_eventloop_lag_seconds')).to.be.true();
        expect(body).to.contain('# TYPE inbox_capture_ingest_seconds histogram');

        waiting.abort();
        await poll;
        await Promise.all(open.map(({ session }) => session.destroy()));
        await waitUntil('the sessions and the long-poll are gone', async () => {
            const after = (await service.metrics()).families;
            return sampleValue(after, 'inbox_capture_smtp_sessions') === 0 && sampleValue(after, 'inbox_capture_long_polls_waiting') === 0;
        });
        await waitUntil('the long-poll is counted', async () => sampleValue((await service.metrics()).families, 'inbox_capture_http_requests_total', { route: 'GET /v1/emails' }) === 1);
        const unauthorised = await fetch(`${service.server.info.uri}/v1/emails?inbox=nobody`);
        expect(unauthorised.status).to.equal(401);
        await waitUntil('the 401 is counted', async () => sampleValue((await service.metrics()).families, 'inbox_capture_http_requests_total', { route: 'GET /v1/emails', status: '401' }) === 1);

        // Per service: the other one in this process counted none of it.
        const others = (await other.metrics()).families;
        expect(sampleValue(others, 'inbox_capture_messages_received_total', { transport: 'smtp' })).to.equal(0);
        expect(sampleValue(others, 'inbox_capture_messages_rejected_total', { reason: 'too_large' })).to.equal(0);
        expect(sampleValue(others, 'inbox_capture_webhook_deliveries_total', { result: 'failure' })).to.equal(0);
    });

    it('counts N parallel SMTP sessions\' messages as exactly N', async () => {
        const start = sampleValue((await other.metrics()).families, 'inbox_capture_messages_received_total', { transport: 'smtp' });
        const n = 40;
        const replies = await Promise.all(Array.from({ length: n }, (_, i) => deliverRaw(other.smtpPort, message(`par-${i}@example.test`, `par-${i}`), [`par-${i}@example.test`])));
        expect(replies.map((r) => r.code)).to.equal(Array(n).fill(250));
        const families = (await other.metrics()).families;
        expect(sampleValue(families, 'inbox_capture_messages_received_total', { transport: 'smtp' }) - start).to.equal(n);
        expect(families.get('inbox_capture_ingest_seconds')!.samples[0]!.count).to.equal(start + n);
    });
});

describe('metrics access', () => {

    it('is off by default (404), public with "on", and behind any valid key with "key"', async () => {
        const off = await startService({});
        const keyed = await startService({ metrics: 'key' });
        try {
            expect((await off.metrics()).status).to.equal(404);
            expect((await keyed.metrics()).status).to.equal(401);
            expect((await keyed.metrics({ authorization: 'Bearer wrong' })).status).to.equal(401);
            const readOnly = await keyed.capture.createKey('reader', { readOnly: true, inboxPrefix: 'team-' });
            const res = await keyed.metrics({ authorization: `Bearer ${readOnly}` });
            expect(res.status).to.equal(200);
            expect(res.families.has('inbox_capture_messages_received_total')).to.be.true();
            // Metrics off: an SMTP listener on that service counts nothing anywhere, and fails nothing.
            expect((await deliverRaw(off.smtpPort, message('alpha@example.test', 'quiet'), ['alpha@example.test'])).code).to.equal(250);
        }
        finally {
            await off.stop();
            await keyed.stop();
        }
    });
});

describe('metrics of the standalone program', () => {

    it('INBOX_CAPTURE_METRICS=on serves /metrics, counting the mail of its own SMTP listener', async () => {
        const service = await startStandalone({ env: { INBOX_CAPTURE_METRICS: 'on' } });
        try {
            expect((await deliverRaw(service.smtpPort, message('standalone@example.test', 'standalone'), ['standalone@example.test'])).code).to.equal(250);
            const res = await fetch(`${service.baseUrl}/metrics`);
            expect(res.status).to.equal(200);
            const families = parseMetrics(await res.text());
            expect(sampleValue(families, 'inbox_capture_messages_received_total', { transport: 'smtp' })).to.equal(1);
        }
        finally {
            await service.stop();
        }
    });
});
