/**
 * Reference SMTP servers for the smtp-ingest benchmark: they receive like ours and
 * keep nothing, so their rate is the ceiling of SMTP handling plus the load
 * generator on this machine. Each runs in a process of its own (as ours and MailDev
 * do). Run as a script, this file is that child: argv `<mode> <port>`; it speaks over
 * IPC: `{ count: true }` → `{ count: <messages answered 250> }`, `{ stop: true }` exits.
 *
 * - `bare`: smtp-server itself with the options our listener gives it; onData drains
 *   the message and answers 250. Nothing parsed, nothing stored.
 * - `listener`: our own listener (adapters/smtp, message receiver and line deadline
 *   included) in front of a core that reads the message and stores nothing: what the
 *   adapter adds on top of smtp-server.
 */
import type { Readable } from 'node:stream';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import {
    createSmtpListener,
    DEFAULT_IDLE_TIMEOUT_MS,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_RECIPIENTS,
    MAX_COMMAND_LINE_BYTES,
    SMTP_BANNER
} from '../adapters/smtp';
import { checkSmtpServerInit, greetAtOnce } from '../adapters/smtp/greet-at-once';
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MESSAGE_BUDGET_BYTES } from '../lib/defaults';
import { createMessageBudget } from '../lib/util/message-budget';
import { readBounded } from '../lib/util/read-bounded';
import { serveReferenceIpc } from './reference-child';
import { forkReferenceServer, type ReferenceServer } from './reference-server';

/** Which reference server. */
export type SinkMode = 'bare' | 'listener';

/** A running reference server; count() is messages answered 250. */
export type SmtpSink = ReferenceServer;

/**
 * Starts a reference server in a child process on a free loopback port. `greet`: the bare
 * one greets at once (greet-at-once.ts, as our listener does), for benches that open a
 * connection per message; otherwise after smtp-server's 100 ms.
 */
export async function startSmtpSink(mode: SinkMode, greet = false): Promise<SmtpSink> {
    return forkReferenceServer(`SMTP sink (${mode})`, __filename, 1, ([smtpPort]) => [mode, String(smtpPort), ...(greet ? ['greet'] : [])]);
}

/** The options createSmtpListener gives smtp-server by default (no AUTH, no TLS), for a reference server's own onData. */
export function listenerDefaults(): SMTPServerOptions {
    return {
        banner: SMTP_BANNER,
        logger: false,
        disableReverseLookup: true,
        size: DEFAULT_MAX_MESSAGE_BYTES,
        maxRecipients: DEFAULT_MAX_RECIPIENTS,
        maxClients: DEFAULT_MAX_CONNECTIONS,
        socketTimeout: DEFAULT_IDLE_TIMEOUT_MS,
        maxCommandLength: MAX_COMMAND_LINE_BYTES,
        disabledCommands: ['AUTH', 'STARTTLS'],
        authOptional: true
    };
}

/** The child: listens, counts, answers the parent. */
async function serve(mode: SinkMode, port: number, greet: boolean): Promise<void> {
    let count = 0;
    if (mode === 'bare') {
        const server = new SMTPServer({
            ...listenerDefaults(),
            onData(stream, _session, callback) {
                stream.on('data', () => undefined);
                stream.once('end', () => {
                    count++;
                    callback(null, 'OK: message drained');
                });
            }
        });
        if (greet) {
            checkSmtpServerInit();
            greetAtOnce(server);
        }

        await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    }
    else {
        const listener = createSmtpListener({
            port,
            capture: {
                // The service's default cap and budget, as createInboxCapture() would give them.
                maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
                messageBudget: createMessageBudget(DEFAULT_MESSAGE_BUDGET_BYTES),
                // Reads the message as the core does (readBounded), stores nothing.
                async ingestRawEmail(raw) {
                    await readBounded(raw as Readable | Buffer, DEFAULT_MAX_MESSAGE_BYTES);
                    count++;
                    return [];
                }
            }
        });
        await listener.listen();
    }

    serveReferenceIpc(() => count);
}

if (require.main === module) {
    const [mode, port, greet] = process.argv.slice(2);
    serve(mode as SinkMode, Number(port), greet === 'greet').catch((err: unknown) => {
        console.error(err);
        process.exit(1);
    });
}
