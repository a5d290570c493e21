import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { autoMatcher } from '../../../adapters/relay/auto-match';
import { startAutoRelay, type AutoRelayMatcher } from '../../../adapters/relay/auto-relay';
import { parseSearchQuery } from '../../../lib/search/parse-query';
import { createRelay } from '../../../adapters/relay/relay-options';
import type { OutboxDispatcher } from '../../../lib/outbox/outbox-dispatcher';
import { createInboxCapture } from '../../../lib/service/inbox-capture';
import type { EmailRecord } from '../../../lib/types';
import { startSmtpCapture, type SmtpCapture } from '../../helpers/smtp-capture';
import { startSmtpSink, startTlsAuthSink, type SmtpSink } from '../../helpers/smtp-sink';
import { readAll } from '../../helpers/streams';
import { sqliteFsStores } from '../../helpers/test-stores';
import { waitUntil } from '../../helpers/wait-until';

const { expect } = Code;
const { describe, it, before, after, afterEach } = exports.lab = Lab.script();

/** A matcher of the tests' own: the subject says whether to relay (the search language has its test below). */
const subjectSaysRelease: AutoRelayMatcher = (record) => Promise.resolve(record.subject.includes('[release]'));

function message(subject: string, to: string): { envelope: { from: string; to: string[] }; raw: Buffer } {
    const id = `${subject.replace(/\W/g, '-')}-${Math.random().toString(36).slice(2)}@shop.test`;
    return {
        envelope: { from: 'orders@shop.test', to: [to] },
        raw: Buffer.from(`From: orders@shop.test\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${id}>\r\n\r\n.leading dot\r\nGr\xfc\xdfe\r\n`, 'latin1')
    };
}

async function storedRaw(smtp: SmtpCapture, inbox: string): Promise<{ record: EmailRecord; raw: Buffer }> {
    const [record] = (await smtp.capture.listEmails({ inbox, limit: 1 })).records;
    return { record: record!, raw: await readAll((await smtp.capture.blobStore.get(record!.rawKey))!) };
}

describe('auto-relay', () => {

    describe('to a plain relay', () => {
        let sink: SmtpSink;
        let smtp: SmtpCapture;
        let auto: OutboxDispatcher;

        before(async () => {
            sink = await startSmtpSink();
            smtp = await startSmtpCapture();
            auto = startAutoRelay(smtp.capture, {
                // Pooled, as the plugin's auto-relay is (start-relay.ts).
                relay: createRelay({ url: sink.url(), allow: ['*@example.org'] }, { maxConnections: 2, maxMessages: 100 }),
                matches: subjectSaysRelease,
                firstRetryMs: 50,
                pollIntervalMs: 50
            });
        });

        after(async () => {
            await auto?.close();
            await smtp?.stop();
            await sink?.close();
        });

        afterEach(() => {
            sink.received.length = 0;
        });

        it('relays a matching email with an allowed recipient, byte for byte, its sender as MAIL FROM', async () => {
            const mail = message('Receipt [release]', 'alice@example.org');
            await smtp.transport().sendMail(mail);
            await waitUntil('the relay received it', () => sink.received.length === 1);
            const { record, raw } = await storedRaw(smtp, 'alice');
            expect(sink.received[0]!.from).to.equal(record.sender);
            expect(sink.received[0]!.to).to.equal(['alice@example.org']);
            expect(sink.received[0]!.raw.equals(raw)).to.be.true();
            expect(raw.equals(mail.raw)).to.be.true();
        });

        it('relays neither an email that does not match nor one whose recipient is not allowed, and leaves no delivery behind', async () => {
            await smtp.transport().sendMail(message('Receipt', 'bob@example.org'));
            await smtp.transport().sendMail(message('Receipt [release]', 'carol@example.net'));
            // The allowed one's delivery is claimed and found not to match; the other never had one.
            await waitUntil('the outbox is empty', async () => (await smtp.capture.recordStore.claimDeliveries!('relay', ['relay'], 10, 60_000)).length === 0);
            await smtp.transport().sendMail(message('Later [release]', 'dave@example.org'));
            await waitUntil('the relay received the later one', () => sink.received.length === 1);
            expect(sink.received.map((m) => m.to)).to.equal([['dave@example.org']]);
        });

        it('relays no copy whose recipient routes onwards (percent hack, bang path) at an allowed domain', async () => {
            await smtp.transport().sendMail(message('Route [release]', 'evil%evil.test@example.org'));
            await smtp.transport().sendMail(message('Bang [release]', 'evil!evil.test@example.org'));
            await waitUntil('the outbox is empty', async () => (await smtp.capture.recordStore.claimDeliveries!('relay', ['relay'], 10, 60_000)).length === 0);
            await smtp.transport().sendMail(message('Plain [release]', 'frank@example.org'));
            await waitUntil('the relay received the plain one', () => sink.received.length === 1);
            expect(sink.received.map((m) => m.to)).to.equal([['frank@example.org']]);
        });

        it('retries with backoff when the relay refuses, until it takes the message', async () => {
            sink.refuseNext(451, 2);
            await smtp.transport().sendMail(message('Retry [release]', 'erin@example.org'));
            await waitUntil('the relay took it on the third attempt', () => sink.received.length === 1, { limitMs: 20_000 });
            expect(sink.received[0]!.to).to.equal(['erin@example.org']);
        });
    });

    it('matches with the search language through the store: only mail the same q finds on GET /v1/emails is relayed', async () => {
        const sink = await startSmtpSink();
        const smtp = await startSmtpCapture();
        const query = 'subject:receipt body:"order 4242" -tag:hold';
        const auto = startAutoRelay(smtp.capture, {
            relay: createRelay({ url: sink.url(), allow: ['*@example.org'] }, { maxConnections: 1, maxMessages: 10 }),
            matches: autoMatcher(query, smtp.capture.recordStore),
            firstRetryMs: 50,
            pollIntervalMs: 50
        });
        try {
            const send = (subject: string, body: string, headers = '') => smtp.transport().sendMail({
                envelope: { from: 'orders@shop.test', to: ['frank@example.org'] },
                raw: Buffer.from(`From: orders@shop.test\r\nTo: frank@example.org\r\nSubject: ${subject}\r\n${headers}Message-ID: <${Math.random().toString(36).slice(2)}@shop.test>\r\n\r\n${body}\r\n`)
            });
            await send('Your receipt', 'Thanks for order 4242.');
            await send('Your receipt', 'Thanks for order 4243.');
            await send('Your receipt', 'Thanks for order 4242.', 'X-Tags: hold\r\n');
            await send('Newsletter', 'Order 4242 is on its way.');
            await waitUntil('every delivery was claimed', async () => (await smtp.capture.recordStore.claimDeliveries!('relay', ['relay'], 10, 60_000)).length === 0 && sink.received.length >= 1);
            // The store's own search agrees: one email of the four.
            const found = await smtp.capture.listEmails({ inbox: 'frank', limit: 10, q: parseSearchQuery(query) });
            expect(found.records.map((r) => r.body.trim())).to.equal(['Thanks for order 4242.']);
            // And the matcher, asked of each stored copy, says the same (newest first: the two after the match do not).
            const all = (await smtp.capture.listEmails({ inbox: 'frank', limit: 10 })).records;
            const matches = autoMatcher(query, smtp.capture.recordStore);
            expect(await Promise.all(all.map((r) => matches(r)))).to.equal([false, false, false, true]);
            expect(sink.received.length).to.equal(1);
            const raw = await readAll((await smtp.capture.blobStore.get(found.records[0]!.rawKey))!);
            expect(sink.received[0]!.raw.equals(raw)).to.be.true();
        }
        finally {
            await auto.close();
            await smtp.stop();
            await sink.close();
        }
    });

    it('refuses a malformed query at start, naming the setting', () => {
        expect(() => autoMatcher('subject:"unclosed', { listEmails: () => Promise.reject(new Error('never asked')) })).to.throw(TypeError, /INBOX_CAPTURE_RELAY_AUTO_MATCH/);
    });

    it('records the delivery in the email\'s commit: a service that starts later sends what an earlier one stored', async () => {
        const sink = await startSmtpSink();
        const stores = await sqliteFsStores().create();
        try {
            const relay = createRelay({ url: sink.url(), allow: ['*@example.org'] });
            // The first service routes relay deliveries but never sends (it "crashes" after the commit).
            const first = createInboxCapture({ recordStore: { ...stores.recordStore, close: () => Promise.resolve() }, blobStore: stores.blobStore });
            await first.start();
            first.routeDeliveries('relay', { targetsFor: (d) => (relay.allow.allows(d.recipient) ? ['relay'] : []), wake: () => undefined, close: () => Promise.resolve() });
            const mail = message('Stored [release]', 'frank@example.org');
            await first.ingestRawEmail(mail.raw, { recipients: mail.envelope.to });
            await first.close();

            const again = await stores.connectAgain();
            const second = createInboxCapture({ recordStore: again.recordStore, blobStore: again.blobStore });
            await second.start();
            const auto = startAutoRelay(second, { relay, matches: subjectSaysRelease, pollIntervalMs: 50 });
            try {
                await waitUntil('the second service relayed it', () => sink.received.length === 1);
                expect(sink.received[0]!.raw.equals(mail.raw)).to.be.true();
            }
            finally {
                await auto.close();
                await second.close();
            }
        }
        finally {
            await stores.cleanup();
            await sink.close();
        }
    });

    describe('to a relay that needs STARTTLS and AUTH', () => {
        let sink: SmtpSink & { ca: Buffer };
        let smtp: SmtpCapture;
        let auto: OutboxDispatcher;

        before(async () => {
            sink = await startTlsAuthSink({ user: 'staging', pass: 's3cret' });
            smtp = await startSmtpCapture();
            auto = startAutoRelay(smtp.capture, {
                relay: createRelay({ url: sink.url('staging', 's3cret'), allow: ['qa@example.org'], tls: { ca: sink.ca } }),
                matches: subjectSaysRelease,
                pollIntervalMs: 50
            });
        });

        after(async () => {
            await auto?.close();
            await smtp?.stop();
            await sink?.close();
        });

        it('logs in inside TLS and delivers the same bytes', async () => {
            const mail = message('Secure [release]', 'qa@example.org');
            await smtp.transport().sendMail(mail);
            await waitUntil('the relay received it', () => sink.received.length === 1);
            expect(sink.received[0]).to.include({ secure: true, user: 'staging' });
            expect(sink.received[0]!.raw.equals((await storedRaw(smtp, 'qa')).raw)).to.be.true();
        });
    });
});
