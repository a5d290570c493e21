import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createSmtpListener } from '../../../adapters/smtp';
import { openEmbeddedStores } from '../../../lib/service/embedded-stores';
import { createInboxCapture } from '../../../lib/service/inbox-capture';
import { RawSmtpSession, type SmtpReply } from '../../helpers/raw-smtp';
import { removeDir, tempDir } from '../../helpers/temp-dir';
import { startSmtpCapture, type SmtpCapture } from '../../helpers/smtp-capture';

const { expect } = Code;
const { describe, it, beforeEach, afterEach } = exports.lab = Lab.script();

/** MAIL, RCPT for each address and DATA of a one-line message; answers each reply (stops at the first refusal of MAIL or DATA). */
async function send(session: RawSmtpSession, from: string, to: string[], subject: string): Promise<{ mail: SmtpReply; rcpt: SmtpReply[]; data?: SmtpReply }> {
    const mail = await session.command(`MAIL FROM:<${from}>`);
    const rcpt: SmtpReply[] = [];
    for (const address of to) {
        rcpt.push(await session.command(`RCPT TO:<${address}>`));
    }

    if (mail.code !== 250 || !rcpt.some((r) => r.code === 250)) {
        await session.command('RSET');
        return { mail, rcpt };
    }

    const go = await session.command('DATA');
    expect(go.code).to.equal(354);
    const data = await session.command(`From: ${from}\r\nTo: ${to.join(', ')}\r\nSubject: ${subject}\r\n\r\nHello.\r\n.`);
    return { mail, rcpt, data };
}

async function open(port: number): Promise<{ session: RawSmtpSession; greeting: SmtpReply }> {
    const opened = await RawSmtpSession.open(port);
    if (opened.greeting.code === 220) {
        expect((await opened.session.command('EHLO client.test')).code).to.equal(250);
    }

    return opened;
}

describe('SMTP listener with fault rules', () => {

    let smtp: SmtpCapture;

    beforeEach(async () => {
        smtp = await startSmtpCapture();
    });

    afterEach(() => smtp.stop());

    it('connect: the rule\'s reply replaces the greeting and closes the connection, `times: 1` only once', async () => {
        await smtp.capture.faults.create({ stage: 'connect', reply: { code: 421, message: 'Too busy, come back later' }, times: 1 });
        const refused = await RawSmtpSession.open(smtp.port);
        expect(refused.greeting.code).to.equal(421);
        expect(refused.greeting.text).to.contain('Too busy, come back later');
        await refused.session.closed;

        const next = await open(smtp.port);
        expect(next.greeting.code).to.equal(220);
        expect(await smtp.capture.faults.list()).to.equal([]);
        await next.session.end();
    });

    it('connect: a disconnect without a reply closes the connection before any greeting', async () => {
        await smtp.capture.faults.create({ stage: 'connect', disconnect: true, times: 1 });
        const socket = await import('node:net').then((Net) => Net.connect({ port: smtp.port, host: '127.0.0.1' }));
        let received = '';
        socket.on('data', (d: Buffer) => {
            received += d.toString('latin1');
        });
        await new Promise<void>((resolve) => socket.once('close', () => resolve()));
        expect(received).to.equal('');
    });

    it('mail: a rule on the sender answers MAIL FROM instead; other senders are unaffected and nothing of the refused message is stored', async () => {
        await smtp.capture.faults.create({ stage: 'mail', match: { sender: 'NOREPLY@' }, reply: { code: 451, message: 'Try again later' } });
        const { session } = await open(smtp.port);
        const refused = await send(session, 'noreply@shop.test', ['orders@example.test'], 'refused at MAIL');
        expect(refused.mail.code).to.equal(451);
        expect(refused.mail.text).to.contain('Try again later');

        const passed = await send(session, 'billing@shop.test', ['orders@example.test'], 'accepted');
        expect(passed.data!.code).to.equal(250);
        await session.end();
        expect(await smtp.subjects('orders')).to.equal(['accepted']);
    });

    it('rcpt: exactly the next `times` matching recipients get the reply; the other recipients of the message are unaffected; then the rule is gone', async () => {
        const rule = await smtp.capture.faults.create({ stage: 'rcpt', match: { inbox: 'flaky' }, reply: { code: 450, message: 'Mailbox busy' }, times: 2 });
        expect(rule.remaining).to.equal(2);
        const { session } = await open(smtp.port);
        const first = await send(session, 'app@shop.test', ['flaky@example.test', 'steady@example.test'], 'one');
        expect(first.rcpt.map((r) => r.code)).to.equal([450, 250]);
        expect(first.data!.code).to.equal(250);
        expect((await smtp.capture.faults.list())[0]!.remaining).to.equal(1);

        const second = await send(session, 'app@shop.test', ['flaky@example.test'], 'two');
        expect(second.rcpt.map((r) => r.code)).to.equal([450]);
        const third = await send(session, 'app@shop.test', ['flaky@example.test'], 'three');
        expect(third.rcpt.map((r) => r.code)).to.equal([250]);
        await session.end();

        expect(await smtp.capture.faults.list()).to.equal([]);
        expect(await smtp.subjects('flaky')).to.equal(['three']);
        expect(await smtp.subjects('steady')).to.equal(['one']);
    });

    it('data: a rule matching any recipient answers the end of DATA and nothing of the message is stored, in any of its inboxes', async () => {
        await smtp.capture.faults.create({ stage: 'data', match: { recipient: 'SIGNUP+' }, reply: { code: 554, message: 'Rejected for testing' } });
        const { session } = await open(smtp.port);
        const refused = await send(session, 'app@shop.test', ['ops@example.test', 'signup+42@example.test'], 'refused at DATA');
        expect(refused.rcpt.map((r) => r.code)).to.equal([250, 250]);
        expect(refused.data!.code).to.equal(554);
        expect(refused.data!.text).to.contain('Rejected for testing');

        const passed = await send(session, 'app@shop.test', ['ops@example.test'], 'stored');
        expect(passed.data!.code).to.equal(250);
        await session.end();
        expect(await smtp.subjects('ops')).to.equal(['stored']);
        expect(await smtp.subjects('signup')).to.equal([]);
    });

    it('data: a disconnect drops the connection after the message, unanswered and not stored', async () => {
        await smtp.capture.faults.create({ stage: 'data', match: { sender: 'app@' }, disconnect: true });
        const { session } = await open(smtp.port);
        await session.command('MAIL FROM:<app@shop.test>');
        await session.command('RCPT TO:<lost@example.test>');
        await session.command('DATA');
        session.socket.write('Subject: lost\r\n\r\nHello.\r\n.\r\n');
        await session.closed;
        expect(await smtp.subjects('lost')).to.equal([]);
    });

    it('a reply with a disconnect sends the reply, then closes', async () => {
        await smtp.capture.faults.create({ stage: 'rcpt', match: { recipient: 'gone@' }, reply: { code: 421, message: 'Closing now' }, disconnect: true });
        const { session } = await open(smtp.port);
        await session.command('MAIL FROM:<app@shop.test>');
        const reply = await session.command('RCPT TO:<gone@example.test>');
        expect(reply.code).to.equal(421);
        await session.closed;
    });

    it('delayMs waits before the normal reply when the rule gives none', async () => {
        await smtp.capture.faults.create({ stage: 'mail', delayMs: 1_500, times: 1 });
        const { session } = await open(smtp.port);
        const started = Date.now();
        const reply = await session.command('MAIL FROM:<app@shop.test>');
        // A lower bound only: a timer never fires early by more than a millisecond.
        expect(Date.now() - started).to.be.at.least(1_450);
        expect(reply.code).to.equal(250);
        await session.end();
    });

    it('probability 0 never applies, and a rule with `times` is not used up by the commands it spares', async () => {
        await smtp.capture.faults.create({ stage: 'rcpt', reply: { code: 550 }, times: 1, probability: 0 });
        const { session } = await open(smtp.port);
        const sent = await send(session, 'app@shop.test', ['lucky@example.test'], 'kept');
        expect(sent.data!.code).to.equal(250);
        await session.end();
        expect((await smtp.capture.faults.list())[0]!.remaining).to.equal(1);
    });

    it('a rule made or deleted through the service applies to the very next command, not after the refresh', async () => {
        const { session } = await open(smtp.port);
        // The first command reads the (empty) rule set; the cache is fresh from then on.
        expect((await send(session, 'app@shop.test', ['fresh@example.test'], 'before')).data!.code).to.equal(250);
        const rule = await smtp.capture.faults.create({ stage: 'rcpt', match: { inbox: 'fresh' }, reply: { code: 450 } });
        expect((await send(session, 'app@shop.test', ['fresh@example.test'], 'during')).rcpt[0]!.code).to.equal(450);
        await smtp.capture.faults.delete(rule.id);
        expect((await send(session, 'app@shop.test', ['fresh@example.test'], 'after')).data!.code).to.equal(250);
        await session.end();
    });

    it('a reply without a message says it was injected', async () => {
        await smtp.capture.faults.create({ stage: 'rcpt', reply: { code: 452 } });
        const { session } = await open(smtp.port);
        await session.command('MAIL FROM:<app@shop.test>');
        const reply = await session.command('RCPT TO:<any@example.test>');
        expect(reply.code).to.equal(452);
        expect(reply.text).to.contain('Fault injected by inbox-capture');
        await session.end();
    });

    it('reads the rules from the store once per refresh, not once per command', async () => {
        const dataDir = await tempDir('faults-reads');
        const stores = await openEmbeddedStores({ dataDir });
        let reads = 0;
        const listFaultRules = stores.recordStore.listFaultRules!.bind(stores.recordStore);
        const recordStore = { ...stores.recordStore, listFaultRules: () => (reads++, listFaultRules()) };
        const capture = createInboxCapture({ recordStore, blobStore: stores.blobStore, faultRefreshMs: 60_000 });
        await capture.start();
        const listener = createSmtpListener({ capture, host: '127.0.0.1', port: 0 });
        try {
            const { port } = await listener.listen();
            const { session } = await open(port);
            for (let n = 0; n < 10; n++) {
                expect((await send(session, 'app@shop.test', ['quiet@example.test', 'calm@example.test'], `mail ${n}`)).data!.code).to.equal(250);
            }

            await session.end();
            // Ten messages, forty commands at three stages: one read, at the first.
            expect(reads).to.equal(1);
        }
        finally {
            await listener.close();
            await capture.close();
            await removeDir(dataDir);
        }
    });
});
