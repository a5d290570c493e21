/**
 * Runs MailDev in a process of its own (as our service runs in its own), on
 * loopback, with the web UI and every outgoing feature off, storing under the
 * given directory. argv: <port> <mail directory>. Speaks over IPC:
 * `{ count: true }` → `{ count: <messages MailDev stored> }`, `{ stop: true }` exits.
 */
import { createRequire } from 'node:module';

interface MailDevServer {
    listen(): Promise<void>;
    store: unknown[];
}

// maildev ships no types; it is a dev dependency of the bench only.
const createMailDev = createRequire(__filename)('maildev') as (config: Record<string, unknown>) => MailDevServer;

const [port, mailDirectory] = process.argv.slice(2);
const maildev = createMailDev({
    smtp: Number(port),
    ip: '127.0.0.1',
    mailDirectory,
    // No web UI, no relay (no outgoing host, no auto-relay): capture only.
    disableWeb: true,
    silent: true
});

maildev.listen().then(() => process.send!({ listening: true }), (err: unknown) => {
    console.error(err);
    process.exit(1);
});

process.on('message', (message: { count?: boolean; stop?: boolean }) => {
    if (message.count) {
        process.send!({ count: maildev.store.length });
    }

    if (message.stop) {
        process.exit(0);
    }
});
process.on('disconnect', () => process.exit(0));
