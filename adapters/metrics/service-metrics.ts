/**
 * The metrics of one service (docs/operations.md, "Metrics"): a prom-client registry of
 * its own, never the global one, so that several services in one process (a host with two
 * registrations, the tests) keep their own counts. The core knows nothing of it: the
 * adapters that see a message, a session or a request count it here.
 */

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { isInboxCaptureError } from '../../lib/errors';

/**
 * Buckets of `inbox_capture_ingest_seconds`, seconds: a small message on SQLite is stored
 * in well under a millisecond to a few, a large one or a slow blob store takes seconds.
 */
export const INGEST_SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** How a message came in. */
export type Transport = 'smtp' | 'http';

/** Why a message was refused (the label `reason`). */
export type RejectReason = 'too_large' | 'busy' | 'no_recipient' | 'too_many_recipients' | 'fault' | 'out_of_scope' | 'store_failed';

/** The counters and gauges of one service, and the registry that answers `/metrics`. */
export class ServiceMetrics {
    readonly registry = new Registry();
    private readonly received: Counter<'transport'>;
    private readonly rejected: Counter<'reason'>;
    private readonly sessions: Gauge;
    private readonly ingestSeconds: Histogram;
    private readonly webhooks: Counter<'result'>;
    private readonly requests: Counter<'route' | 'status'>;

    constructor(waitingLongPolls: () => number) {
        const registers = [this.registry];
        collectDefaultMetrics({ register: this.registry });
        this.received = new Counter({ name: 'inbox_capture_messages_received_total', help: 'Messages stored, by the way they came in.', labelNames: ['transport'], registers });
        this.rejected = new Counter({ name: 'inbox_capture_messages_rejected_total', help: 'Messages refused, by reason.', labelNames: ['reason'], registers });
        this.sessions = new Gauge({ name: 'inbox_capture_smtp_sessions', help: 'SMTP sessions open now.', registers });
        new Gauge({
            name: 'inbox_capture_long_polls_waiting',
            help: 'Long-polls (list with wait, MCP wait_for_email) waiting now.',
            registers,
            collect() {
                this.set(waitingLongPolls());
            }
        });
        this.ingestSeconds = new Histogram({
            name: 'inbox_capture_ingest_seconds',
            help: 'Seconds from a whole message received to its copies stored (SMTP: to the 250 reply).',
            buckets: INGEST_SECONDS_BUCKETS,
            registers
        });
        this.webhooks = new Counter({ name: 'inbox_capture_webhook_deliveries_total', help: 'Webhook POST attempts, by result.', labelNames: ['result'], registers });
        this.requests = new Counter({ name: 'inbox_capture_http_requests_total', help: 'HTTP requests to the plugin\'s routes, by route and status.', labelNames: ['route', 'status'], registers });
        // Every series that has a known label set shows from the start, at 0.
        this.received.labels('smtp');
        this.received.labels('http');
        this.webhooks.labels('success');
        this.webhooks.labels('failure');
    }

    /** A message stored, `seconds` after it was whole. */
    messageStored(transport: Transport, seconds: number): void {
        this.received.inc({ transport });
        this.ingestSeconds.observe(seconds);
    }

    /** A message refused. */
    messageRejected(reason: RejectReason): void {
        this.rejected.inc({ reason });
    }

    /** An SMTP session opened (+1) or closed (-1). */
    smtpSession(delta: 1 | -1): void {
        this.sessions.inc(delta);
    }

    /** One webhook attempt ended. */
    webhookAttempt(ok: boolean): void {
        this.webhooks.inc({ result: ok ? 'success' : 'failure' });
    }

    /** One HTTP request answered. */
    httpRequest(route: string, status: number): void {
        this.requests.inc({ route, status: String(status) });
    }
}

/** The reason label of an ingest's failure. */
export function rejectReasonOf(err: unknown): RejectReason {
    if (isInboxCaptureError(err)) {
        switch (err.code) {
            case 'TOO_LARGE':
                return 'too_large';
            case 'BUSY':
                return 'busy';
            case 'NO_RECIPIENT':
                return 'no_recipient';
            case 'TOO_MANY_RECIPIENTS':
                return 'too_many_recipients';
            case 'OUT_OF_SCOPE':
                return 'out_of_scope';
            default:
                break;
        }
    }

    return 'store_failed';
}

// A service's metrics, by the service object: the plugin turns them on, and the SMTP
// listener and webhook sender built on the same service find them without being told.
const byService = new WeakMap<object, ServiceMetrics>();

/** Turns metrics on for `service` (once; later calls answer the same ones). */
export function enableMetrics(service: object, waitingLongPolls: () => number): ServiceMetrics {
    let metrics = byService.get(service);
    if (!metrics) {
        metrics = new ServiceMetrics(waitingLongPolls);
        byService.set(service, metrics);
    }

    return metrics;
}

/** The metrics of `service`, or undefined while they are off: nothing is counted then. */
export function metricsOf(service: object): ServiceMetrics | undefined {
    return byService.get(service);
}

/** Seconds since `start` (a `process.hrtime.bigint()` reading). */
export function secondsSince(start: bigint): number {
    return Number(process.hrtime.bigint() - start) / 1e9;
}
