import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Net from 'node:net';
import * as Nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { createSmtpListener, DEFAULT_MAX_RECIPIENTS, type SmtpListener, type SmtpListenerOptions } from '../../../adapters/smtp';
import type { BlobStore } from '../../../lib/blob-store/blob-store';
import { openEmbeddedStores } from '../../../lib/service/embedded-stores';
import { createInboxCapture, type InboxCapture } from '../../../lib/service/inbox-capture';
import { MAX_RECIPIENTS } from '../../../lib/identity/recipients';
import type { RecordStore } from '../../../lib/record-store/record-store';
import { RawSmtpSession } from '../../helpers/raw-smtp';
import { stubCapture, type CaptureSettings } from '../../helpers/smtp-capture';
import { readAll } from '../../helpers/streams';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

interface Provisioned {
    capture: InboxCapture;
    listener: SmtpListener;
    port: number;
    logged: { message: string; error?: unknown }[];
    transport(options?: SMTPTransport.Options): Nodemailer.Transporter<SMTPTransport.SentMessageInfo>;
    inbox(name: string): Promise<string[]>;
    cleanup(): Promise<void>;
}

interface ProvisionOptions {
    listener?: Partial<SmtpListenerOptions>;
    /** Settings of the service, which the listener takes its cap and budget from. */
    service?: CaptureSettings;
    wrapBlobStore?: (store: BlobStore) => BlobStore;
    wrapRecordStore?: (store: RecordStore) => RecordStore;
    wrapIngest?: (ingest: InboxCapture['ingestRawEmail']) => InboxCapture['ingestRawEmail'];
}

/** A real facade on SQLite + files in a fresh temp dir, and a listener on a free loopback port. */
async function provisionListener(options: ProvisionOptions = {}): Promise<Provisioned> {
    const dataDir = await tempDir('smtp');
    const stores = await openEmbeddedStores({ dataDir });
    const capture = createInboxCapture({
        recordStore: options.wrapRecordStore ? options.wrapRecordStore(stores.recordStore) : stores.recordStore,
        blobStore: options.wrapBlobStore ? options.wrapBlobStore(stores.blobStore) : stores.blobStore,
        ...options.service
    });
    await capture.start();

    const logged: Provisioned['logged'] = [];
    const ingest = capture.ingestRawEmail.bind(capture);
    const listener = createSmtpListener({
        capture: { ...capture, ingestRawEmail: options.wrapIngest ? options.wrapIngest(ingest) : ingest },
        host: '127.0.0.1',
        port: 0,
        log: (message, error) => logged.push({ message, error }),
        ...options.listener
    });
    const { port } = await listener.listen();
    const transports: Nodemailer.Transporter[] = [];

    return {
        capture,
        listener,
        port,
        logged,
        transport(transportOptions = {}) {
            const transport = Nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, ...transportOptions });
            transports.push(transport);
            return transport;
        },
        async inbox(name) {
            const page = await capture.listEmails({ inbox: name, limit: 100 });
            return page.records.map((r) => r.subject);
        },
        async cleanup() {
            transports.forEach((t) => t.close());
            await listener.close();
            await capture.close();
            await Fs.rm(dataDir, { recursive: true, force: true });
        }
    };
}

/** Every blob key in a store (to prove nothing half-written is left behind). */
async function blobKeys(store: BlobStore): Promise<string[]> {
    const keys: string[] = [];
    for await (const blob of store.listBlobs()) {
        keys.push(blob.key);
    }

    return keys;
}

/** Per-recipient refusals; nodemailer reports them, its type declarations do not. */
function rejectedCodes(info: SMTPTransport.SentMessageInfo): (number | undefined)[] {
    const errors = (info as { rejectedErrors?: SmtpSendError[] }).rejectedErrors ?? [];
    return errors.map((e) => e.responseCode);
}

/** The error nodemailer rejects with: SMTP reply code and text. */
interface SmtpSendError extends Error {
    responseCode?: number;
    response?: string;
    code?: string;
}

async function sendError(promise: Promise<unknown>): Promise<SmtpSendError> {
    try {
        await promise;
    }
    catch (err) {
        return err as SmtpSendError;
    }

    throw new Error('expected sendMail to fail');
}

function message(subject: string, to = 'someone@example.test', body = 'Hello.'): string {
    return [
        'From: Sender <sender@example.test>',
        `To: ${to}`,
        `Subject: ${subject}`,
        `Message-ID: <${subject.replace(/\W/g, '-')}-${Math.random().toString(36).slice(2)}@example.test>`,
        '',
        body,
        ''
    ].join('\r\n');
}

describe('smtp listener', () => {

    describe('createSmtpListener()', () => {

        it('stores one copy per envelope recipient of one session, headers notwithstanding', async () => {
            const t = await provisionListener();
            try {
                const info = await t.transport().sendMail({
                    envelope: { from: 'sender@example.test', to: ['alice@one.test', 'Bob@two.test', 'carol@one.test'] },
                    raw: message('to three', 'alice@one.test')
                });
                expect(info.accepted).to.have.length(3);
                expect(info.response).to.startWith('250');
                expect(await t.inbox('alice')).to.equal(['to three']);
                expect(await t.inbox('bob')).to.equal(['to three']);
                expect(await t.inbox('carol')).to.equal(['to three']);

                const [copy] = (await t.capture.listEmails({ inbox: 'bob', limit: 1 })).records;
                expect(copy.recipient.toLowerCase()).to.equal('bob@two.test');
            }
            finally {
                await t.cleanup();
            }
        });

        it('answers 250 only after the message is stored', async () => {
            let saved = false;
            const t = await provisionListener({
                wrapRecordStore: (store) => ({
                    ...store,
                    async saveEmails(drafts) {
                        // Slow storage: a listener that answered before storing would answer first.
                        await new Promise((resolve) => setTimeout(resolve, 300));
                        const result = await store.saveEmails(drafts);
                        saved = true;
                        return result;
                    }
                })
            });
            try {
                const info = await t.transport().sendMail({
                    envelope: { from: 'sender@example.test', to: ['slow@example.test'] },
                    raw: message('stored first')
                });
                expect(saved).to.be.true();
                expect(info.response).to.startWith('250');
                expect(await t.inbox('slow')).to.equal(['stored first']);
            }
            finally {
                await t.cleanup();
            }
        });

        it('delivers several messages in one session', async () => {
            const t = await provisionListener();
            try {
                const { session } = await RawSmtpSession.open(t.port);
                expect((await session.command('EHLO client.test')).code).to.equal(250);
                // Twenty transactions: more commands than any per-session command limit allows unauthenticated.
                const subjects = Array.from({ length: 20 }, (_, i) => `message ${String(i).padStart(2, '0')}`);
                for (const subject of subjects) {
                    expect((await session.command('MAIL FROM:<sender@example.test>')).code).to.equal(250);
                    expect((await session.command('RCPT TO:<multi@example.test>')).code).to.equal(250);
                    expect((await session.command('DATA')).code).to.equal(354);
                    await session.write(message(subject, 'multi@example.test'));
                    expect((await session.command('.')).code).to.equal(250);
                }

                expect((await session.command('QUIT')).code).to.equal(221);
                expect((await t.inbox('multi')).sort()).to.equal(subjects);
            }
            finally {
                await t.cleanup();
            }
        });

        it('reports a port already in use as a rejected listen()', async () => {
            const t = await provisionListener();
            try {
                const second = createSmtpListener({ capture: t.capture, host: '127.0.0.1', port: t.port });
                await expect(second.listen()).to.reject(/EADDRINUSE/);
                await second.close();
            }
            finally {
                await t.cleanup();
            }
        });

        it('refuses a message over the size cap with 552, hands the core none of it and stores nothing', async () => {
            const cap = 8 * 1024;
            const handed: number[] = [];
            const t = await provisionListener({
                service: { maxMessageBytes: cap },
                wrapIngest: (ingest) => (raw, options) => {
                    // What the listener lets through to the core.
                    handed.push(Buffer.byteLength(raw as Buffer));
                    return ingest(raw, options);
                }
            });
            try {
                const big = 'x'.repeat(76) + '\r\n';
                const err = await sendError(t.transport().sendMail({
                    envelope: { from: 'sender@example.test', to: ['big@example.test'] },
                    raw: message('too big', 'big@example.test', big.repeat(20 * 1024))
                }));
                expect(err.responseCode).to.equal(552);
                // The core never saw any of a ~1.5 MiB message.
                expect(handed).to.equal([]);
                expect(await t.inbox('big')).to.equal([]);
                expect(await blobKeys(t.capture.blobStore)).to.equal([]);

                // Under the cap, the same listener accepts.
                await t.transport().sendMail({
                    envelope: { from: 'sender@example.test', to: ['big@example.test'] },
                    raw: message('small enough', 'big@example.test')
                });
                expect(await t.inbox('big')).to.equal(['small enough']);
                expect(handed).to.have.length(1);
            }
            finally {
                await t.cleanup();
            }
        });

        it('keeps the session usable after a 552 (the rest of DATA is drained, not read as commands)', async () => {
            const t = await provisionListener({ service: { maxMessageBytes: 1024 } });
            try {
                const { session } = await RawSmtpSession.open(t.port);
                await session.command('EHLO client.test');
                await session.command('MAIL FROM:<sender@example.test>');
                await session.command('RCPT TO:<drain@example.test>');
                expect((await session.command('DATA')).code).to.equal(354);
                // Lines that look like commands must stay message text.
                await session.write(message('oversized', 'drain@example.test', 'RSET\r\nQUIT\r\n'.repeat(2000)));
                expect((await session.command('.')).code).to.equal(552);

                expect((await session.command('MAIL FROM:<sender@example.test>')).code).to.equal(250);
                expect((await session.command('RCPT TO:<drain@example.test>')).code).to.equal(250);
                expect((await session.command('DATA')).code).to.equal(354);
                await session.write(message('fits', 'drain@example.test'));
                expect((await session.command('.')).code).to.equal(250);
                await session.command('QUIT');
                expect(await t.inbox('drain')).to.equal(['fits']);
            }
            finally {
                await t.cleanup();
            }
        });

        it('refuses at MAIL FROM a message announced larger than the cap (SIZE=)', async () => {
            const t = await provisionListener({ service: { maxMessageBytes: 1000 } });
            try {
                const { session } = await RawSmtpSession.open(t.port);
                const ehlo = await session.command('EHLO client.test');
                expect(ehlo.text).to.contain('SIZE 1000');
                expect((await session.command('MAIL FROM:<sender@example.test> SIZE=1001')).code).to.equal(552);
                expect((await session.command('MAIL FROM:<sender@example.test> SIZE=1000')).code).to.equal(250);
                await session.command('QUIT');
            }
            finally {
                await t.cleanup();
            }
        });

        it('answers 451 when the blob store fails, stores nothing and does not leak the cause', async () => {
            const t = await provisionListener({
                wrapBlobStore: (store) => ({
                    ...store,
                    put() {
                        return Promise.reject(new Error('disk on fire at /secret/path'));
                    },
                    // Small blobs are staged for the records' commit rather than put.
                    stage() {
                        throw new Error('disk on fire at /secret/path');
                    }
                })
            });
            try {
                const err = await sendError(t.transport().sendMail({
                    envelope: { from: 'sender@example.test', to: ['fail@example.test'] },
                    raw: message('lost?', 'fail@example.test')
                }));
                expect(err.responseCode).to.equal(451);
                expect(err.response).to.not.contain('disk');
                expect(err.response).to.not.contain('secret');
                expect(await t.inbox('fail')).to.equal([]);
                expect(t.logged).to.have.length(1);
                expect(t.logged[0].message).to.contain('451');
            }
            finally {
                await t.cleanup();
            }
        });

        it('answers 451 when the record store fails, and leaves no record and no blob', async () => {
            const t = await provisionListener({
                wrapRecordStore: (store) => ({
                    ...store,
                    saveEmails() {
                        return Promise.reject(new Error('database is locked'));
                    }
                })
            });
            try {
                const err = await sendError(t.transport().sendMail({
                    envelope: { from: 'sender@example.test', to: ['dbfail@example.test'] },
                    raw: message('no db', 'dbfail@example.test')
                }));
                expect(err.responseCode).to.equal(451);
                expect(err.response).to.not.contain('locked');
                expect(await t.inbox('dbfail')).to.equal([]);
                expect(await blobKeys(t.capture.blobStore)).to.equal([]);
            }
            finally {
                await t.cleanup();
            }
        });

        it('refuses recipients outside the allowed domains with 550 and delivers to the others', async () => {
            const t = await provisionListener({ listener: { allowedDomains: ['Allowed.test'] } });
            try {
                const err = await sendError(t.transport().sendMail({
                    envelope: { from: 'sender@example.test', to: ['nobody@other.test'] },
                    raw: message('refused')
                }));
                expect(err.responseCode).to.equal(550);

                const info = await t.transport().sendMail({
                    envelope: { from: 'sender@example.test', to: ['yes@ALLOWED.test', 'no@other.test', 'sub@x.allowed.test'] },
                    raw: message('partly')
                });
                expect(info.accepted.map((a) => String(a).toLowerCase())).to.equal(['yes@allowed.test']);
                expect(info.rejected).to.equal(['no@other.test', 'sub@x.allowed.test']);
                expect(rejectedCodes(info)).to.equal([550, 550]);
                expect(await t.inbox('yes')).to.equal(['partly']);
                expect(await t.inbox('no')).to.equal([]);
            }
            finally {
                await t.cleanup();
            }
        });

        it('answers 550 when no recipient maps to an inbox', async () => {
            const t = await provisionListener();
            try {
                const { session } = await RawSmtpSession.open(t.port);
                await session.command('EHLO client.test');
                await session.command('MAIL FROM:<sender@example.test>');
                expect((await session.command('RCPT TO:<""@example.test>')).code).to.equal(250);
                expect((await session.command('DATA')).code).to.equal(354);
                await session.write(message('nobody'));
                expect((await session.command('.')).code).to.equal(550);
                await session.command('QUIT');
                expect(t.logged).to.equal([]);
            }
            finally {
                await t.cleanup();
            }
        });

        it('refuses recipients beyond the per-message limit with 452', async () => {
            const t = await provisionListener({ listener: { maxRecipients: 2 } });
            try {
                const info = await t.transport().sendMail({
                    envelope: { from: 'sender@example.test', to: ['r1@example.test', 'r2@example.test', 'r3@example.test'] },
                    raw: message('limited')
                });
                expect(info.accepted).to.equal(['r1@example.test', 'r2@example.test']);
                expect(info.rejected).to.equal(['r3@example.test']);
                expect(rejectedCodes(info)).to.equal([452]);
                expect(await t.inbox('r2')).to.equal(['limited']);
                expect(await t.inbox('r3')).to.equal([]);
            }
            finally {
                await t.cleanup();
            }
        });

        it('refuses connections beyond the limit with 421', async () => {
            const t = await provisionListener({ listener: { maxConnections: 1 } });
            try {
                const first = await RawSmtpSession.open(t.port);
                expect(first.greeting.code).to.equal(220);
                const second = await RawSmtpSession.open(t.port);
                expect(second.greeting.code).to.equal(421);
                await second.session.closed;
                expect((await first.session.command('NOOP')).code).to.equal(250);
                await first.session.end();
            }
            finally {
                await t.cleanup();
            }
        });

        it('closes a connection idle for longer than the idle timeout', async () => {
            const t = await provisionListener({ listener: { idleTimeoutMs: 200 } });
            try {
                const { session } = await RawSmtpSession.open(t.port);
                expect((await session.reply()).code).to.equal(421);
                await session.closed;
            }
            finally {
                await t.cleanup();
            }
        });

        it('names the service in its greeting and offers neither AUTH nor STARTTLS by default', async () => {
            const t = await provisionListener();
            try {
                const { session, greeting } = await RawSmtpSession.open(t.port);
                expect(greeting.text).to.match(/^220 .*inbox-capture/);
                const ehlo = await session.command('EHLO client.test');
                expect(ehlo.text).to.not.contain('AUTH');
                expect(ehlo.text).to.not.contain('STARTTLS');
                expect((await session.command('STARTTLS')).code).to.be.at.least(500);
                await session.command('QUIT');
            }
            finally {
                await t.cleanup();
            }
        });

        it('stores the DATA bytes exactly as sent, after dot-unstuffing', async () => {
            const t = await provisionListener();
            try {
                const lines = [
                    'From: sender@example.test',
                    'To: dots@example.test',
                    'Subject: dots',
                    'Message-ID: <dots-exact@example.test>',
                    '',
                    '.leading dot',
                    '..two leading dots',
                    '.',
                    'trailing spaces   ',
                    '\tTab and caf\xe9 in latin1',
                    ''
                ];
                const expected = Buffer.from(lines.join('\r\n'), 'latin1');
                const stuffed = lines.map((l) => (l.startsWith('.') ? `.${l}` : l)).join('\r\n');

                const { session } = await RawSmtpSession.open(t.port);
                await session.command('EHLO client.test');
                await session.command('MAIL FROM:<sender@example.test>');
                await session.command('RCPT TO:<dots@example.test>');
                expect((await session.command('DATA')).code).to.equal(354);
                await session.write(Buffer.from(stuffed, 'latin1'));
                expect((await session.command('.')).code).to.equal(250);
                await session.command('QUIT');

                const record = await t.capture.getEmail('dots-exact@example.test');
                expect(record).to.exist();
                const raw = await readAll((await t.capture.blobStore.get(record!.rawKey))!);
                expect(raw.equals(expected)).to.be.true();
            }
            finally {
                await t.cleanup();
            }
        });

        it('stores nothing when the client disconnects in the middle of DATA', async () => {
            const t = await provisionListener();
            try {
                const { session } = await RawSmtpSession.open(t.port);
                await session.command('EHLO client.test');
                await session.command('MAIL FROM:<sender@example.test>');
                await session.command('RCPT TO:<gone@example.test>');
                expect((await session.command('DATA')).code).to.equal(354);
                await session.write(message('half', 'gone@example.test', 'partial body\r\n'));
                session.socket.destroy();
                await session.closed;
                // close() waits for in-flight messages: it returns only once the aborted one settled.
                await t.listener.close();
                expect(await t.inbox('gone')).to.equal([]);
            }
            finally {
                await t.cleanup();
            }
        });
    });

    describe('close()', () => {

        it('finishes a message in flight, answers it, then refuses new connections', async () => {
            let release!: () => void;
            const gate = new Promise<void>((resolve) => {
                release = resolve;
            });
            let entered!: () => void;
            const inSave = new Promise<void>((resolve) => {
                entered = resolve;
            });
            const t = await provisionListener({
                wrapRecordStore: (store) => ({
                    ...store,
                    async saveEmails(drafts) {
                        entered();
                        await gate;
                        return store.saveEmails(drafts);
                    }
                })
            });
            try {
                const idle = await RawSmtpSession.open(t.port);
                const sending = t.transport().sendMail({
                    envelope: { from: 'sender@example.test', to: ['inflight@example.test'] },
                    raw: message('in flight')
                });
                await inSave;

                let closed = false;
                const closing = t.listener.close().then(() => {
                    closed = true;
                });
                // The idle client is told at once; the busy one is not cut off.
                expect((await idle.session.reply()).code).to.equal(421);
                expect(closed).to.be.false();

                release();
                const info = await sending;
                expect(info.response).to.startWith('250');
                await closing;
                expect(await t.inbox('inflight')).to.equal(['in flight']);

                const refused = await new Promise<string>((resolve) => {
                    Net.connect(t.port, '127.0.0.1').once('error', (err: NodeJS.ErrnoException) => resolve(err.code!));
                });
                expect(refused).to.equal('ECONNREFUSED');
            }
            finally {
                release();
                await t.cleanup();
            }
        });

        it('can be called before listen() and twice', async () => {
            const dataDir = await tempDir('smtp');
            const stores = await openEmbeddedStores({ dataDir });
            const capture = createInboxCapture(stores);
            try {
                const listener = createSmtpListener({ capture, port: 0 });
                await listener.close();
                await listener.close();
            }
            finally {
                await capture.close();
                await Fs.rm(dataDir, { recursive: true, force: true });
            }
        });
    });

    describe('options', () => {

        it('rejects nonsensical limits at creation', () => {
            const capture = stubCapture();
            expect(() => createSmtpListener({ capture, maxRecipients: 1.5 })).to.throw(/maxRecipients/);
            // The core stores a message in at most MAX_RECIPIENTS inboxes: SMTP may not promise more.
            expect(() => createSmtpListener({ capture, maxRecipients: MAX_RECIPIENTS + 1 })).to.throw(/maxRecipients must be at most 100/);
            expect(DEFAULT_MAX_RECIPIENTS).to.equal(MAX_RECIPIENTS);
            expect(() => createSmtpListener({ capture, port: 70000 })).to.throw(/port/);
        });

        it("refuses a capture without the service's cap and budget (one owner for both)", () => {
            const ingestRawEmail = () => Promise.resolve([]);
            expect(() => createSmtpListener({ capture: { ingestRawEmail } as never })).to.throw(TypeError, /maxMessageBytes and messageBudget/);
            expect(() => createSmtpListener({ capture: { ...stubCapture(), maxMessageBytes: 0 } })).to.throw(TypeError, /maxMessageBytes/);
        });
    });

    describe('settings taken from the service', () => {

        it('refuses a 2 KiB message to a service of 1 KiB with 552 and that cap, advertised with SIZE', async () => {
            const t = await provisionListener({ service: { maxMessageBytes: 1024 } });
            try {
                expect(t.capture.maxMessageBytes).to.equal(1024);
                const { session } = await RawSmtpSession.open(t.port);
                expect((await session.command('EHLO client.test')).text).to.contain('SIZE 1024');
                await session.command('MAIL FROM:<sender@example.test>');
                await session.command('RCPT TO:<capped@example.test>');
                expect((await session.command('DATA')).code).to.equal(354);
                await session.write(message('two KiB', 'capped@example.test', 'x'.repeat(2048)));
                const reply = await session.command('.');
                expect(reply.code).to.equal(552);
                expect(reply.text).to.contain('1024');
                await session.command('QUIT');
                expect(await t.inbox('capped')).to.equal([]);
            }
            finally {
                await t.cleanup();
            }
        });

        it("reserves DATA from the service's own budget: what the service holds, SMTP cannot take", async () => {
            const t = await provisionListener({ service: { maxMessageBytesInFlight: 4096 } });
            try {
                expect(t.capture.messageBudget.limitBytes).to.equal(4096);
                // Held by some other ingest of the same service: a message announced at 4 KiB no longer fits.
                const held = t.capture.messageBudget.reserve(1)!;
                const { session } = await RawSmtpSession.open(t.port);
                await session.command('EHLO client.test');
                expect((await session.command('MAIL FROM:<sender@example.test> SIZE=4096')).code).to.equal(452);
                held.release();
                expect((await session.command('MAIL FROM:<sender@example.test> SIZE=4096')).code).to.equal(250);
                await session.command('QUIT');
            }
            finally {
                await t.cleanup();
            }
        });
    });
});
