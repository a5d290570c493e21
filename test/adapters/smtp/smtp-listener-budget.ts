import * as Fs from 'node:fs/promises';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createSmtpListener, type SmtpListener } from '../../../adapters/smtp';
import { openEmbeddedStores } from '../../../lib/service/embedded-stores';
import { createInboxCapture, type InboxCapture } from '../../../lib/service/inbox-capture';
import { RawSmtpSession, sendRawMessage } from '../../helpers/raw-smtp';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const KIB = 1024;

/** About `bytes` of whole 78-byte text lines (no line starts with a dot). */
function textLines(bytes: number): Buffer {
    return Buffer.from(`${'x'.repeat(76)}\r\n`.repeat(Math.floor(bytes / 78)));
}

function message(subject: string, bytes: number): Buffer {
    return Buffer.concat([Buffer.from(`To: budget@example.test\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@example.test>\r\n\r\n`), textLines(bytes)]);
}

/** Opens a session and starts a transaction to budget@, with `mailArgs` after MAIL FROM; resolves with the MAIL reply too. */
async function transaction(port: number, mailArgs = ''): Promise<{ session: RawSmtpSession; mail: number }> {
    const { session } = await RawSmtpSession.open(port);
    expect((await session.command('EHLO budget.test')).code).to.equal(250);
    const mail = (await session.command(`MAIL FROM:<sender@example.test>${mailArgs}`)).code;
    return { session, mail };
}

interface Rig {
    capture: InboxCapture;
    port: number;
    subjects(): Promise<string[]>;
    cleanup(): Promise<void>;
}

/** A service whose budget is `maxMessageBytesInFlight`, and a listener on it. */
async function startRig(maxMessageBytesInFlight: number): Promise<Rig> {
    const dataDir = await tempDir('smtp-budget');
    const stores = await openEmbeddedStores({ dataDir });
    const capture = createInboxCapture({ ...stores, maxMessageBytesInFlight });
    await capture.start();
    const smtp: SmtpListener = createSmtpListener({ capture, port: 0 });
    const { port } = await smtp.listen();
    return {
        capture,
        port,
        async subjects() {
            return (await capture.listEmails({ inbox: 'budget', limit: 100 })).records.map((r) => r.subject).sort();
        },
        async cleanup() {
            await smtp.close();
            await capture.close();
            await Fs.rm(dataDir, { recursive: true, force: true });
        }
    };
}

describe('smtp listener memory budget', () => {

    it('answers 421 and closes the connection when a message no longer fits the budget mid-DATA, stores nothing of it, and accepts it once the budget is free', { timeout: 30_000 }, async () => {
        const rig = await startRig(256 * KIB);
        try {
            // The first sender holds 200 KiB of the 256 KiB budget, its DATA not ended yet.
            const first = await transaction(rig.port);
            expect((await first.session.command('RCPT TO:<budget@example.test>')).code).to.equal(250);
            expect((await first.session.command('DATA')).code).to.equal(354);
            await first.session.write(message('first', 200 * KIB));

            // A second that announces its size is refused at MAIL FROM, before sending it.
            const announced = await transaction(rig.port, ` SIZE=${100 * KIB}`);
            expect(announced.mail).to.equal(452);
            await announced.session.destroy();

            // One that does not is told 421 mid-DATA and the connection is closed: temporary.
            const second = await transaction(rig.port);
            expect(second.mail).to.equal(250);
            await second.session.command('RSET');
            const refused = await sendRawMessage(second.session, message('second', 100 * KIB), ['budget@example.test']);
            expect(refused.code).to.equal(421);
            expect(refused.text).to.contain('try again later');
            await second.session.closed;

            // The first, unaffected, is stored; the budget is all free again.
            await first.session.write('.\r\n');
            expect((await first.session.reply()).code).to.equal(250);
            expect(rig.capture.messageBudget.heldBytes).to.equal(0);

            // The retry, on a new connection, fits now.
            const retry = await transaction(rig.port);
            await retry.session.command('RSET');
            expect((await sendRawMessage(retry.session, message('second', 100 * KIB), ['budget@example.test'])).code).to.equal(250);
            await first.session.end();
            await retry.session.end();
            expect(await rig.subjects()).to.equal(['first', 'second']);
        }
        finally {
            await rig.cleanup();
        }
    });

    it('stops reading a message past the budget: the 421 comes while the client is still sending it', { timeout: 30_000 }, async () => {
        const rig = await startRig(256 * KIB);
        try {
            // Another ingest holds 200 KiB of the 256 KiB budget (alone, a message always fits).
            const held = rig.capture.messageBudget.reserve(200 * KIB)!;
            const { session } = await transaction(rig.port);
            expect((await session.command('RCPT TO:<budget@example.test>')).code).to.equal(250);
            expect((await session.command('DATA')).code).to.equal(354);

            // 32 MiB in 64 KiB pieces, each written once the socket took the one before. Read
            // to its end (the old behaviour), the reply could only follow the last piece.
            const piece = textLines(64 * KIB);
            const total = 512 * piece.length;
            let written = 0;
            let writtenAtReply = -1;
            const replied = session.reply().then((reply) => {
                writtenAtReply = written;
                void session.destroy();
                return reply;
            });
            while (writtenAtReply === -1 && written < total && !session.socket.destroyed) {
                await session.write(piece);
                written += piece.length;
            }

            if (writtenAtReply === -1) {
                await session.write('.\r\n');
            }

            const reply = await replied;
            expect(reply.code).to.equal(421);
            expect(writtenAtReply).to.be.below(total / 2);
            await session.closed;
            expect(rig.capture.messageBudget.heldBytes).to.equal(200 * KIB);
            held.release();
            expect(await rig.subjects()).to.equal([]);
        }
        finally {
            await rig.cleanup();
        }
    });

    it("uses the service's budget, so SMTP and the service's other ingests share it", { timeout: 30_000 }, async () => {
        const rig = await startRig(256 * KIB);
        try {
            const held = rig.capture.messageBudget.reserve(200 * KIB)!;
            const refused = await transaction(rig.port);
            await refused.session.command('RSET');
            expect((await sendRawMessage(refused.session, message('squeezed', 100 * KIB), ['budget@example.test'])).code).to.equal(421);
            await refused.session.closed;
            held.release();
            const { session } = await transaction(rig.port);
            await session.command('RSET');
            expect((await sendRawMessage(session, message('squeezed', 100 * KIB), ['budget@example.test'])).code).to.equal(250);
            await session.end();
            expect(await rig.subjects()).to.equal(['squeezed']);
        }
        finally {
            await rig.cleanup();
        }
    });
});
