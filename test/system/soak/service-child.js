'use strict';

// The service under soak, in a process of its own: Hapi + the plugin + the SMTP
// listener sharing one createInboxCapture() on SQLite + files, wired as
// examples/standalone.js wires them, but on ports the OS picks and with an IPC
// channel through which the soak driver (soak.ts) reads what only the inside can
// tell: waiting long-polls, notifier subscriptions, active handles, heap after a
// full GC. A process of its own so that its memory is its own and the load
// generator does not share its event loop.
//
//   node --expose-gc test/system/soak/service-child.js <dataDir> [fault,...]     (spawned by soak.ts)
//
// Faults are for the soak's own test only: each breaks one promise on purpose, so that
// the soak can show it notices (see withFaults()).
//
// It runs the compiled package (dist/, built by `npm run build`).

const Path = require('node:path');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const Hapi = require('@hapi/hapi');

const DIST = Path.join(__dirname, '..', '..', '..', 'dist');

/** Milliseconds hapi waits for requests in flight on stop (long-polls are answered at once). */
const HTTP_STOP_TIMEOUT_MS = 10_000;
/** Log lines kept verbatim for the report; the rest are only counted. */
const KEPT_LOG_LINES = 20;
/** Milliseconds after a clean stop within which the process must end by itself (no handle left). */
const EXIT_GRACE_MS = 2_000;
/** Exit code when a handle kept the process alive after a clean stop: a leak. */
const EXIT_HANDLE_LEFT = 3;
/** Full collections per measurement: one pass can leave garbage that only a second finds. */
const GC_PASSES = 3;

/** Counts of process.getActiveResourcesInfo() by type (Timeout, TCPSocketWrap, ...). */
function resourceCounts() {
    const counts = {};
    for (const type of process.getActiveResourcesInfo()) {
        counts[type] = (counts[type] || 0) + 1;
    }

    return counts;
}

/** Listener counts of an emitter, by event name. */
function listenerCounts(emitter) {
    const counts = {};
    for (const name of emitter.eventNames()) {
        counts[String(name)] = emitter.listenerCount(name);
    }

    return counts;
}

/** Heap one `retain-heap` fault keeps per message: 128 Ki small integers, 1 MiB. */
const RETAINED_ELEMENTS = 128 * 1024;
/** Milliseconds a `late-answer` fault holds an empty answer back. */
const LATE_BY_MS = 4_500;

/**
 * The faults a test may ask for, each wrapping the real service:
 * - lose-message: message 2 is stored, acknowledged, then silently removed;
 * - leak-subscription: every 10th notifier subscription is never released;
 * - late-answer: the first 3 empty long-poll answers of quiet inboxes come LATE_BY_MS late;
 * - server-error: the 5th list request fails (500);
 * - retain-heap: every message leaves 1 MiB on the heap for good;
 * - leak-timer: every list request leaves an interval running.
 */
function withFaults(capture, faults, retained) {
    const faulty = { ...capture };
    if (faults.has('lose-message')) {
        faulty.ingestRawEmail = async (raw, options) => {
            const copies = await capture.ingestRawEmail(raw, options);
            for (const copy of copies) {
                if (copy.messageId.startsWith('soak.2.')) {
                    await capture.deleteEmail(copy.messageId);
                }
            }

            return copies;
        };
    }

    if (faults.has('retain-heap')) {
        const ingest = faulty.ingestRawEmail;
        faulty.ingestRawEmail = (raw, options) => {
            retained.push(new Array(RETAINED_ELEMENTS).fill(retained.length));
            return ingest(raw, options);
        };
    }

    if (faults.has('leak-subscription')) {
        const subscribe = capture.notifier.subscribe;
        let n = 0;
        // The long-poller calls notifier.subscribe() through the object: patch it there.
        capture.notifier.subscribe = (inbox, listener) => {
            const unsubscribe = subscribe(inbox, listener);
            return ++n % 10 === 0 ? () => undefined : unsubscribe;
        };
    }

    if (faults.has('late-answer')) {
        let late = 0;
        faulty.waitForEmails = async (query, options) => {
            const page = await capture.waitForEmails(query, options);
            if (page.records.length === 0 && query.inbox.startsWith('quiet-') && late < 3) {
                late++;
                await new Promise((resolve) => setTimeout(resolve, LATE_BY_MS));
            }

            return page;
        };
    }

    let lists = 0;
    if (faults.has('server-error') || faults.has('leak-timer')) {
        faulty.listEmails = (query) => {
            lists++;
            if (faults.has('leak-timer')) {
                setInterval(() => undefined, 60_000);
            }

            if (faults.has('server-error') && lists === 5) {
                return Promise.reject(new Error('injected fault: server-error'));
            }

            return capture.listEmails(query);
        };
    }

    return faulty;
}

async function fullGc() {
    for (let i = 0; i < GC_PASSES; i++) {
        global.gc();
        // Let finalizers and weak callbacks run between passes.
        await new Promise((resolve) => setImmediate(resolve));
    }
}

async function main() {
    if (typeof global.gc !== 'function' || typeof process.send !== 'function') {
        console.error('service-child: run with --expose-gc as a child with an IPC channel (soak.ts does this)');
        process.exit(2);
    }

    const dataDir = process.argv[2];
    const faults = new Set((process.argv[3] || '').split(',').filter(Boolean));
    const retained = [];
    const { createInboxCapture } = require(Path.join(DIST, 'lib', 'service', 'inbox-capture'));
    const { openEmbeddedStores } = require(Path.join(DIST, 'lib', 'service', 'embedded-stores'));
    const { inboxCapturePlugin } = require(Path.join(DIST, 'adapters', 'hapi'));
    const { createSmtpListener } = require(Path.join(DIST, 'adapters', 'smtp'));

    const logs = { count: 0, lines: [] };
    const log = (message, error) => {
        logs.count++;
        if (logs.lines.length < KEPT_LOG_LINES) {
            logs.lines.push(`${message}${error ? `: ${error.stack || error}` : ''}`);
        }
    };

    const statuses = {};
    let clientErrors = 0;
    const requestErrors = { count: 0, lines: [] };
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();

    const stores = await openEmbeddedStores({ dataDir });
    const capture = createInboxCapture({ ...stores, log });
    const server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false });
    server.events.on({ name: 'request', channels: 'error' }, (request, event) => {
        requestErrors.count++;
        if (requestErrors.lines.length < KEPT_LOG_LINES) {
            requestErrors.lines.push(`${request.method.toUpperCase()} ${request.path}: ${event.error && (event.error.stack || event.error)}`);
        }
    });
    server.events.on('response', (request) => {
        const response = request.response;
        const status = response && typeof response.statusCode === 'number' ? String(response.statusCode) : 'none';
        statuses[status] = (statuses[status] || 0) + 1;
    });
    server.events.on('log', (event, tags) => {
        if (tags.client) {
            // A client that reset its connection (the soak abandons some long-polls on purpose).
            clientErrors++;
            return;
        }

        if (tags.error || tags.warning) {
            const data = event.data || event.error;
            log(`server log [${event.tags.join(',')}] ${data && data.message ? data.message : JSON.stringify(data)}`, data && data.error);
        }
    });

    const served = faults.size > 0 ? withFaults(capture, faults, retained) : capture;
    await server.register({ plugin: inboxCapturePlugin, options: { capture: served } });
    await server.start();
    const smtp = createSmtpListener({ capture: served, host: '127.0.0.1', port: 0, log });
    const { port: smtpPort } = await smtp.listen();
    const apiKey = await capture.createKey('soak');

    // What the driver can only learn from inside; `gc` first when measuring memory.
    const snapshot = async (gc) => {
        if (gc) {
            await fullGc();
        }

        return {
            waiters: capture.longPoller.waiterCount(),
            subscribers: capture.notifier.subscriberCount(),
            resources: resourceCounts(),
            memory: process.memoryUsage(),
            httpListeners: listenerCounts(server.listener),
            processListeners: listenerCounts(process),
            statuses: { ...statuses },
            requestErrors: { count: requestErrors.count, lines: [...requestErrors.lines] },
            logs: { count: logs.count, lines: [...logs.lines] },
            clientErrors,
            loopDelayMs: { max: lag.max / 1e6, p99: lag.percentile(99) / 1e6, mean: lag.mean / 1e6 }
        };
    };

    // Every blob must belong to a stored email: deletes remove their files.
    const audit = async () => {
        const keys = [];
        for await (const blob of capture.blobStore.listBlobs()) {
            keys.push(blob.key);
        }

        let referenced = 0;
        for (let i = 0; i < keys.length; i += 500) {
            referenced += (await capture.recordStore.referencedBlobKeys(keys.slice(i, i + 500))).size;
        }

        return { blobs: keys.length, orphanBlobs: keys.length - referenced };
    };

    const stop = async () => {
        await Promise.all([server.stop({ timeout: HTTP_STOP_TIMEOUT_MS }), smtp.close()]);
        await capture.close();
        lag.disable();
    };

    let stopping = false;
    process.on('message', (message) => {
        const reply = (body) => process.send({ ...body, id: message.id });
        const fail = (err) => reply({ type: 'error', error: String(err && err.stack || err) });
        switch (message.type) {
            case 'stats':
                snapshot(Boolean(message.gc)).then((stats) => reply({ type: 'stats', stats }), fail);
                break;
            case 'reset-lag':
                lag.reset();
                reply({ type: 'reset-lag' });
                break;
            case 'audit':
                audit().then((result) => reply({ type: 'audit', ...result }), fail);
                break;
            case 'stop':
                stopping = true;
                stop().then(() => {
                    reply({ type: 'stopped' });
                    // The IPC channel is the last handle: closing it lets the process end by itself.
                    process.disconnect();
                }, fail);
                break;
            default:
                fail(new Error(`unknown message ${message.type}`));
        }
    });

    process.on('disconnect', () => {
        if (!stopping) {
            // The driver is gone (killed): do not outlive it.
            process.exit(1);
        }

        // Unref'd: it fires only if something else still keeps the process alive.
        setTimeout(() => {
            console.error(`service-child: still running ${EXIT_GRACE_MS} ms after stop: ${JSON.stringify(resourceCounts())}`);
            process.exit(EXIT_HANDLE_LEFT);
        }, EXIT_GRACE_MS).unref();
    });

    process.send({ type: 'ready', httpPort: server.info.port, smtpPort, apiKey, pid: process.pid });
}

if (require.main === module) {
    main().catch((err) => {
        console.error(`service-child: ${err.stack || err}`);
        process.exit(1);
    });
}
