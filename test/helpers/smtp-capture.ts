import * as Nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { createSmtpListener, type SmtpListener, type SmtpListenerOptions, type SmtpTlsInfo } from '../../adapters/smtp';
import { openEmbeddedStores } from '../../lib/service/embedded-stores';
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MESSAGE_BUDGET_BYTES } from '../../lib/defaults';
import { createInboxCapture, type InboxCapture, type InboxCaptureOptions } from '../../lib/service/inbox-capture';
import { createMessageBudget } from '../../lib/util/message-budget';
import { removeDir, tempDir } from './temp-dir';

/** A real capture on SQLite + files and an SMTP listener on a free loopback port. */
export interface SmtpCapture {
    capture: InboxCapture;
    listener: SmtpListener;
    port: number;
    /** The certificate presented, when TLS is on. */
    tls?: SmtpTlsInfo;
    /** A Nodemailer transport to the listener: plain text unless `options` say otherwise (closed by `stop()`). */
    transport(options?: SMTPTransport.Options): Nodemailer.Transporter<SMTPTransport.SentMessageInfo>;
    /** Subjects of the emails stored in an inbox, newest first. */
    subjects(inbox: string): Promise<string[]>;
    /** Closes the transports, the listener and the capture; removes the data dir. */
    stop(): Promise<void>;
}

/** The service settings of a capture: the message cap and budget the listener takes from it. */
export type CaptureSettings = Pick<InboxCaptureOptions, 'maxMessageBytes' | 'maxMessageBytesInFlight' | 'parseWorkers' | 'parseTimeoutMs' | 'parseWorkerFile'>;

/**
 * Starts a capture (with `service`'s settings) and a listener with these options (host
 * 127.0.0.1, port 0 unless given).
 */
export async function startSmtpCapture(options: Partial<SmtpListenerOptions> = {}, service: CaptureSettings = {}): Promise<SmtpCapture> {
    const dataDir = await tempDir('smtp-capture');
    const capture = createInboxCapture({ ...await openEmbeddedStores({ dataDir }), ...service });
    await capture.start();
    const listener = createSmtpListener({ capture, host: '127.0.0.1', port: 0, ...options });
    const transports: Nodemailer.Transporter[] = [];
    const stop = async () => {
        transports.forEach((t) => t.close());
        await listener.close();
        await capture.close();
        await removeDir(dataDir);
    };

    try {
        const { port, tls } = await listener.listen();
        return {
            capture,
            listener,
            port,
            tls,
            transport(transportOptions = {}) {
                const transport = Nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, ...transportOptions });
                transports.push(transport);
                return transport;
            },
            async subjects(inbox) {
                const page = await capture.listEmails({ inbox, limit: 100 });
                return page.records.map((r) => r.subject);
            },
            stop
        };
    }
    catch (err) {
        await stop();
        throw err;
    }
}

/** The error Nodemailer rejects with: the SMTP reply code and text, and its own code (EAUTH, ETLS, …). */
export interface SmtpSendError extends Error {
    responseCode?: number;
    response?: string;
    code?: string;
}

/** The error `promise` (a `sendMail()`) rejects with; throws when it resolves. */
export async function sendError(promise: Promise<unknown>): Promise<SmtpSendError> {
    try {
        await promise;
    }
    catch (err) {
        return err as SmtpSendError;
    }

    throw new Error('expected sendMail to fail');
}

/** A message for `sendMail({ envelope, raw })` to `<inbox>@example.test`. */
export function mailTo(inbox: string, subject: string): { envelope: { from: string; to: string[] }; raw: string } {
    return {
        envelope: { from: 'app@example.test', to: [`${inbox}@example.test`] },
        raw: `From: app@example.test\r\nTo: ${inbox}@example.test\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '-')}-${Math.random().toString(36).slice(2)}@example.test>\r\n\r\nHello.\r\n`
    };
}

/**
 * What a listener needs of a service, around `ingestRawEmail` (default: stores nothing):
 * the service's default cap and a budget of the default size, for tests of the listener alone.
 */
export function stubCapture(ingestRawEmail: SmtpListenerOptions['capture']['ingestRawEmail'] = () => Promise.resolve([])): SmtpListenerOptions['capture'] {
    return { ingestRawEmail, maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES, messageBudget: createMessageBudget(DEFAULT_MESSAGE_BUDGET_BYTES) };
}
