import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Tls from 'node:tls';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Nodemailer from 'nodemailer';
import { createSmtpListener, DEFAULT_MAX_RECIPIENTS, MAX_COMMAND_LINE_BYTES, type SmtpListenerOptions } from '../../../adapters/smtp';
import * as MessageReceiver from '../../../adapters/smtp/message-receiver';
import { openEmbeddedStores } from '../../../lib/service/embedded-stores';
import { createInboxCapture, type InboxCapture } from '../../../lib/service/inbox-capture';
import { RawSmtpSession } from '../../helpers/raw-smtp';
import { stubCapture, type CaptureSettings } from '../../helpers/smtp-capture';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** Size cap of the oversized-DATA case, bytes. */
const CAP_BYTES = 1024 * 1024;
/** What the oversized client sends, bytes: fifty times the cap. */
const FLOOD_BYTES = 50 * 1024 * 1024;
/**
 * Most the listener may hold of an oversized message: the cap plus one chunk of the
 * data stream (smtp-server hands DATA on in socket-sized pieces, 64 KiB at most).
 */
const HELD_SLACK_BYTES = 64 * 1024;

/** A listener on SQLite + files in a fresh temp dir, with what it received and handed to the core. */
interface Rig {
    capture: InboxCapture;
    port: number;
    /** Every message the listener read, as its receiver reported it. */
    received: MessageReceiver.ReceivedMessage[];
    /** Size of every message handed to the core, bytes. */
    handed: number[];
    logged: string[];
    /** Sends one small message with nodemailer, as a well-behaved application would; resolves with the reply. */
    goodSend(subject: string): Promise<string>;
    inbox(name: string): Promise<string[]>;
    cleanup(): Promise<void>;
}

async function startRig(listener: Partial<SmtpListenerOptions> = {}, service: CaptureSettings = {}): Promise<Rig> {
    const dataDir = await tempDir('smtp-limits');
    const stores = await openEmbeddedStores({ dataDir });
    const capture = createInboxCapture({ ...stores, ...service });
    await capture.start();
    const received: MessageReceiver.ReceivedMessage[] = [];
    const handed: number[] = [];
    const logged: string[] = [];
    // The real receiver, wrapped to keep what it reports (put back in cleanup()).
    const receiveMessage = MessageReceiver.receiveMessage;
    const spied = (MessageReceiver as { receiveMessage: typeof receiveMessage });
    spied.receiveMessage = async (stream, maxBytes, reservation) => {
        const result = await receiveMessage(stream, maxBytes, reservation);
        received.push(result);
        return result;
    };
    const smtp = createSmtpListener({
        capture: {
            ...capture,
            ingestRawEmail: (raw, options) => {
                handed.push(Buffer.byteLength(raw as Buffer));
                return capture.ingestRawEmail(raw, options);
            }
        },
        port: 0,
        log: (message, error) => logged.push(`${message}: ${String(error)}`),
        ...listener
    });
    const { port } = await smtp.listen();
    const transports: Nodemailer.Transporter[] = [];
    return {
        capture,
        port,
        received,
        handed,
        logged,
        async goodSend(subject) {
            const transport = Nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
            transports.push(transport);
            const info = await transport.sendMail({ from: 'app@example.test', to: 'good@example.test', subject, text: 'well-behaved' });
            return info.response;
        },
        async inbox(name) {
            return (await capture.listEmails({ inbox: name, limit: 100 })).records.map((r) => r.subject);
        },
        async cleanup() {
            spied.receiveMessage = receiveMessage;
            transports.forEach((t) => t.close());
            await smtp.close();
            await capture.close();
            await Fs.rm(dataDir, { recursive: true, force: true });
        }
    };
}

/** About `bytes` of whole 78-byte text lines, ready to write as DATA (no line starts with a dot). */
function textLines(bytes: number): Buffer {
    return Buffer.from(`${'x'.repeat(76)}\r\n`.repeat(Math.floor(bytes / 78)));
}

/** Opens a session, greets and starts a transaction for `inbox`, ready for DATA. */
async function openTransaction(port: number, inbox: string): Promise<RawSmtpSession> {
    const { session, greeting } = await RawSmtpSession.open(port);
    expect(greeting.code).to.equal(220);
    expect((await session.command('EHLO limits.test')).code).to.equal(250);
    expect((await session.command('MAIL FROM:<sender@example.test>')).code).to.equal(250);
    expect((await session.command(`RCPT TO:<${inbox}@example.test>`)).code).to.equal(250);
    return session;
}

/** Sends `text` one byte at a time, `everyMs` apart, until the connection closes; resolves with the bytes sent. */
async function trickle(session: RawSmtpSession, text: string, everyMs: number): Promise<number> {
    let sent = 0;
    while (!session.socket.destroyed && !session.socket.writableEnded) {
        session.socket.write(text[sent % text.length]);
        sent++;
        const closed = await Promise.race([session.closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), everyMs))]);
        if (closed) {
            break;
        }
    }

    return sent;
}

describe('smtp listener limits', () => {

    describe('message size', () => {

        it('answers 552 to 50 MB of DATA over a 1 MB cap, keeping no more than the cap, while a well-behaved client gets 250', { timeout: 120_000 }, async () => {
            const rig = await startRig({}, { maxMessageBytes: CAP_BYTES });
            try {
                const session = await openTransaction(rig.port, 'flood');
                expect((await session.command('DATA')).code).to.equal(354);

                const sending = (async () => {
                    const chunk = textLines(1024 * 1024);
                    for (let sent = 0; sent < FLOOD_BYTES; sent += chunk.length) {
                        await session.write(chunk);
                    }

                    await session.write('.\r\n');
                    return session.reply();
                })();

                expect(await rig.goodSend('served during the flood')).to.startWith('250');
                const reply = await sending;
                // The reply came after the terminator: every byte of the 50 MB was read, none was kept.
                expect(reply.code).to.equal(552);

                const flood = rig.received.filter((r) => r.tooLarge);
                expect(flood).to.have.length(1);
                const [oversized] = flood;
                // Read to its end (counted), but held no further than the cap, and never handed to the core.
                expect(oversized.bytes).to.be.at.least(FLOOD_BYTES);
                expect(oversized.peakHeldBytes, 'bytes held at once').to.be.at.most(CAP_BYTES + HELD_SLACK_BYTES);
                expect(oversized.raw).to.be.null();
                expect(Math.max(...rig.handed)).to.be.at.most(CAP_BYTES);

                // The session is still usable, and the flood stored nothing.
                expect((await session.command('NOOP')).code).to.equal(250);
                await session.end();
                expect(await rig.inbox('flood')).to.equal([]);
                expect(await rig.inbox('good')).to.equal(['served during the flood']);
                expect(rig.logged).to.equal([]);
            }
            finally {
                await rig.cleanup();
            }
        });
    });

    describe('command line length', () => {

        it('answers 421 to a 1 MB command line and closes, while a well-behaved client gets 250', { timeout: 30_000 }, async () => {
            const rig = await startRig();
            try {
                const { session, greeting } = await RawSmtpSession.open(rig.port);
                expect(greeting.code).to.equal(220);
                void session.write(`EHLO ${'a'.repeat(1024 * 1024)}\r\n`);
                const [reply, good] = await Promise.all([session.reply(), rig.goodSend('served during the long line')]);
                expect(reply.code).to.equal(421);
                expect(reply.text).to.include('too long');
                await session.closed;
                expect(good).to.startWith('250');
                expect(await rig.inbox('good')).to.equal(['served during the long line']);
            }
            finally {
                await rig.cleanup();
            }
        });

        it('accepts a command line of the full allowed length', async () => {
            const rig = await startRig();
            try {
                const { session } = await RawSmtpSession.open(rig.port);
                // `EHLO ` + name + CRLF: the line without its CRLF is exactly the limit. The name is
                // refused as a host name (501), but the line is read, not cut off.
                const reply = await session.command(`EHLO ${'a'.repeat(MAX_COMMAND_LINE_BYTES - 5)}`);
                expect(reply.code).to.not.equal(421);
                expect((await session.command('NOOP')).code).to.equal(250);
                await session.end();
            }
            finally {
                await rig.cleanup();
            }
        });
    });

    describe('recipients', () => {

        it('answers 452 to recipients beyond the cap, and delivers to the others, while a well-behaved client gets 250', { timeout: 30_000 }, async () => {
            const rig = await startRig();
            try {
                const session = await openTransaction(rig.port, 'r-0');
                for (let i = 1; i < DEFAULT_MAX_RECIPIENTS; i++) {
                    expect((await session.command(`RCPT TO:<r-${i}@example.test>`)).code).to.equal(250);
                }

                const [extra, good] = await Promise.all([
                    session.command(`RCPT TO:<r-${DEFAULT_MAX_RECIPIENTS}@example.test>`),
                    rig.goodSend('served during the recipient flood')
                ]);
                expect(extra.code).to.equal(452);
                expect(good).to.startWith('250');

                expect((await session.command('DATA')).code).to.equal(354);
                await session.write('Subject: many\r\n\r\nto many\r\n.\r\n');
                const stored = await session.reply();
                expect(stored.code).to.equal(250);
                expect(stored.text).to.include(`${DEFAULT_MAX_RECIPIENTS} copies`);
                await session.end();
                expect(await rig.inbox(`r-${DEFAULT_MAX_RECIPIENTS - 1}`)).to.equal(['many']);
                expect(await rig.inbox(`r-${DEFAULT_MAX_RECIPIENTS}`)).to.equal([]);
            }
            finally {
                await rig.cleanup();
            }
        });
    });

    describe('connections', () => {

        it('answers 421 to connections beyond the cap; refused ones hold no slot, so a well-behaved client is served next', { timeout: 30_000 }, async () => {
            const cap = 3;
            const rig = await startRig({ maxConnections: cap });
            try {
                const holders: RawSmtpSession[] = [];
                for (let i = 0; i < cap; i++) {
                    const { session, greeting } = await RawSmtpSession.open(rig.port);
                    expect(greeting.code).to.equal(220);
                    holders.push(session);
                }

                // Twenty more at once, kept open on our side: every one is refused.
                const flood = await Promise.all(Array.from({ length: 20 }, () => RawSmtpSession.open(rig.port)));
                for (const { greeting } of flood) {
                    expect(greeting.code).to.equal(421);
                }

                // The holders are unaffected; one leaves, and with the whole flood still
                // connected on our side, the next well-behaved client gets its slot.
                expect((await holders[0].command('NOOP')).code).to.equal(250);
                expect((await holders[0].command('QUIT')).code).to.equal(221);
                await holders[0].closed;
                expect(await rig.goodSend('served after the connection flood')).to.startWith('250');
                expect(await rig.inbox('good')).to.equal(['served after the connection flood']);

                await Promise.all([...holders.slice(1).map((s) => s.end()), ...flood.map(({ session }) => session.destroy())]);
            }
            finally {
                await rig.cleanup();
            }
        });
    });

    describe('slow clients', () => {

        it('answers 421 to a client that stays silent past the idle timeout, while a well-behaved client gets 250', { timeout: 30_000 }, async () => {
            const rig = await startRig({ idleTimeoutMs: 1000 });
            try {
                const { session, greeting } = await RawSmtpSession.open(rig.port);
                expect(greeting.code).to.equal(220);
                const [reply, good] = await Promise.all([session.reply(), rig.goodSend('served next to an idle client')]);
                expect(reply.code).to.equal(421);
                expect(reply.text).to.include('Timeout');
                await session.closed;
                expect(good).to.startWith('250');
            }
            finally {
                await rig.cleanup();
            }
        });

        it('answers 421 to a command trickled a byte at a time, which the idle timeout never catches, while a well-behaved client gets 250', { timeout: 30_000 }, async () => {
            // One byte every 100 ms keeps a 60 s idle timeout from ever firing; the 1 s line deadline does.
            const rig = await startRig({ idleTimeoutMs: 60_000, lineTimeoutMs: 1000 });
            try {
                const { session, greeting } = await RawSmtpSession.open(rig.port);
                expect(greeting.code).to.equal(220);
                const trickling = trickle(session, 'EHLO slow.example.test', 100);
                const [reply, good] = await Promise.all([session.reply(), rig.goodSend('served next to a trickling client')]);
                expect(reply.code).to.equal(421);
                expect(reply.text).to.include('line not completed in time');
                await session.closed;
                expect(await trickling).to.be.above(3);
                expect(good).to.startWith('250');
            }
            finally {
                await rig.cleanup();
            }
        });

        it('answers 421 to a message trickled a byte at a time and stores nothing of it', { timeout: 30_000 }, async () => {
            const rig = await startRig({ idleTimeoutMs: 60_000, lineTimeoutMs: 1000 });
            try {
                const session = await openTransaction(rig.port, 'trickle');
                expect((await session.command('DATA')).code).to.equal(354);
                await session.write('Subject: trickled\r\n\r\n');
                const trickling = trickle(session, 'one byte at a time', 100);
                const [reply, good] = await Promise.all([session.reply(), rig.goodSend('served next to a trickled message')]);
                expect(reply.code).to.equal(421);
                await session.closed;
                await trickling;
                expect(good).to.startWith('250');
                expect(await rig.inbox('trickle')).to.equal([]);
                expect(rig.logged).to.equal([]);
            }
            finally {
                await rig.cleanup();
            }
        });

        it('answers 421 to a command trickled a byte at a time inside TLS, after STARTTLS', { timeout: 30_000 }, async () => {
            const dir = await tempDir('smtp-limits-tls');
            execFileSync('openssl', [
                'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
                '-keyout', Path.join(dir, 'key.pem'), '-out', Path.join(dir, 'cert.pem'),
                '-days', '1', '-subj', '/CN=localhost'
            ], { stdio: 'ignore' });
            const tls = { key: await Fs.readFile(Path.join(dir, 'key.pem')), cert: await Fs.readFile(Path.join(dir, 'cert.pem')) };
            const rig = await startRig({ idleTimeoutMs: 60_000, lineTimeoutMs: 1000, tls });
            try {
                const { session } = await RawSmtpSession.open(rig.port);
                expect((await session.command('EHLO tls.test')).code).to.equal(250);
                expect((await session.command('STARTTLS')).code).to.equal(220);
                const socket = Tls.connect({ socket: session.socket, ca: [tls.cert], servername: 'localhost' });
                await once(socket, 'secureConnect');
                const secure = RawSmtpSession.wrap(socket);
                const trickling = trickle(secure, 'EHLO slow.example.test', 100);
                const reply = await secure.reply();
                expect(reply.code).to.equal(421);
                expect(reply.text).to.include('line not completed in time');
                await secure.closed;
                await trickling;
            }
            finally {
                await rig.cleanup();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });

        it('serves a slow client whose every line ends within the line deadline, however long the session', { timeout: 30_000 }, async () => {
            const rig = await startRig({ idleTimeoutMs: 60_000, lineTimeoutMs: 1000 });
            try {
                const { session } = await RawSmtpSession.open(rig.port);
                // Each line in two halves 400 ms apart: well within 1 s a line, ~3 s in all.
                const slowLine = async (line: string) => {
                    await session.write(line.slice(0, 4));
                    await new Promise((resolve) => setTimeout(resolve, 400));
                    await session.write(`${line.slice(4)}\r\n`);
                };
                const slowCommand = async (line: string) => {
                    await slowLine(line);
                    return session.reply();
                };

                expect((await slowCommand('EHLO slow.example.test')).code).to.equal(250);
                expect((await slowCommand('MAIL FROM:<sender@example.test>')).code).to.equal(250);
                expect((await slowCommand('RCPT TO:<patient@example.test>')).code).to.equal(250);
                expect((await slowCommand('DATA')).code).to.equal(354);
                await slowLine('Subject: patient');
                await slowLine('');
                await slowLine('slow but steady');
                await session.write('.\r\n');
                expect((await session.reply()).code).to.equal(250);
                await session.end();
                expect(await rig.inbox('patient')).to.equal(['patient']);
            }
            finally {
                await rig.cleanup();
            }
        });
    });

    describe('options', () => {

        it('rejects a line deadline that is not a positive integer', () => {
            const capture = stubCapture();
            expect(() => createSmtpListener({ capture, lineTimeoutMs: 0 })).to.throw(TypeError, /lineTimeoutMs/);
            expect(() => createSmtpListener({ capture, lineTimeoutMs: 1.5 })).to.throw(TypeError, /lineTimeoutMs/);
        });
    });
});
