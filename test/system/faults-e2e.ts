import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Nodemailer from 'nodemailer';
import { InboxCaptureClient, type InboxCaptureApiError } from '../../adapters/client';
import { createSmtpListener, type SmtpListener } from '../../adapters/smtp';
import { createInboxCapture, type InboxCapture } from '../../lib/service/inbox-capture';
import { provisionServer, type ProvisionedServer } from '../helpers/provision-server';
import { RawSmtpSession } from '../helpers/raw-smtp';
import { postgresFsStores, sqliteFsStores, type StoreFactory, type TestStores } from '../helpers/test-stores';
import { waitUntil } from '../helpers/wait-until';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

interface Instance {
    capture: InboxCapture;
    listener: SmtpListener;
    port: number;
}

async function startInstance(stores: { recordStore: TestStores['recordStore']; blobStore: TestStores['blobStore'] }, faultRefreshMs?: number): Promise<Instance> {
    const capture = createInboxCapture({ ...stores, ...(faultRefreshMs ? { faultRefreshMs } : {}) });
    await capture.start();
    const listener = createSmtpListener({ capture, host: '127.0.0.1', port: 0 });
    const { port } = await listener.listen();
    return { capture, listener, port };
}

/** nodemailer's sendMail with a retry on temporary (4xx) replies: what docs/api.md's "Testing retries with faults" shows. */
async function sendWithRetry(transport: Nodemailer.Transporter, mail: Nodemailer.SendMailOptions, attempts: number): Promise<{ tries: number; codes: number[] }> {
    const codes: number[] = [];
    for (let tries = 1; ; tries++) {
        try {
            await transport.sendMail(mail);
            return { tries, codes };
        }
        catch (err) {
            const code = (err as { responseCode?: number }).responseCode ?? 0;
            codes.push(code);
            if (code < 400 || code >= 500 || tries === attempts) {
                throw err;
            }
        }
    }
}

describe('faults end to end', () => {

    describe('through the client and nodemailer (SQLite)', () => {
        let p: ProvisionedServer;
        let listener: SmtpListener;
        let client: InboxCaptureClient;
        let transport: Nodemailer.Transporter;

        before(async () => {
            p = await provisionServer({ listen: true });
            listener = createSmtpListener({ capture: p.api.capture, host: '127.0.0.1', port: 0 });
            const { port } = await listener.listen();
            client = new InboxCaptureClient({ baseUrl: p.server.info.uri, apiKey: p.apiKey });
            transport = Nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
        });

        after(async () => {
            transport.close();
            await listener.close();
            await p.cleanup();
        });

        it('two 451s at RCPT, then the application\'s retry gets the mail through once', async () => {
            const rule = await client.createFault({ stage: 'rcpt', match: { inbox: 'retry-test' }, reply: { code: 451, message: 'Greylisted, try again' }, times: 2 });
            expect(rule.remaining).to.equal(2);
            expect((await client.listFaults()).map((f) => f.id)).to.equal([rule.id]);

            const sent = await sendWithRetry(transport, { from: 'app@shop.test', to: 'retry-test@example.test', subject: 'Your receipt', text: 'Thanks.' }, 5);
            expect(sent).to.equal({ tries: 3, codes: [451, 451] });
            const email = await client.waitForEmail({ inbox: 'retry-test', timeoutMs: 10_000 });
            expect(email.subject).to.equal('Your receipt');
            const page = await client.listEmails({ inbox: 'retry-test' });
            expect(page.emails.length).to.equal(1);
            expect(await client.listFaults()).to.equal([]);
        });

        it('a permanent 550 at DATA fails the send at once and stores nothing; deleteFault and deleteFaults clean up', async () => {
            const rule = await client.createFault({ stage: 'data', match: { recipient: 'bounce-test@' }, reply: { code: 550, message: 'Mailbox unavailable' } });
            const err: unknown = await sendWithRetry(transport, { from: 'app@shop.test', to: 'bounce-test@example.test', subject: 'Bounced', text: 'x' }, 5).catch((e: unknown) => e);
            expect((err as { responseCode?: number }).responseCode).to.equal(550);
            expect((await client.listEmails({ inbox: 'bounce-test' })).emails).to.equal([]);

            await client.deleteFault(rule.id);
            const missing = await client.deleteFault(rule.id).catch((e: unknown) => e as InboxCaptureApiError);
            expect(missing).to.include({ status: 404, code: 'NOT_FOUND' });
            await client.createFault({ stage: 'connect', delayMs: 1 });
            expect(await client.deleteFaults()).to.equal(1);
        });
    });

    describe('two instances on one Postgres database', () => {
        let stores: TestStores;
        let second: Awaited<ReturnType<TestStores['connectAgain']>>;
        let a: Instance;
        let b: Instance;

        before(async () => {
            stores = await postgresFsStores().create();
            second = await stores.connectAgain();
            a = await startInstance(stores);
            b = await startInstance(second);
        });

        after(async () => {
            for (const instance of [a, b]) {
                await instance?.listener.close();
            }

            // The captures share the stores with the test: close the listeners, then the stores once.
            await second?.close();
            await stores?.cleanup();
        });

        it('200 concurrent creates split between the instances at 990 rules leave exactly 1,000', async () => {
            // 99 at a time (each create waits out the refresh before it answers): 990 at once
            // outwaited the Postgres pool's acquire timeout on a loaded two-core machine.
            for (let start = 0; start < 990; start += 99) {
                await Promise.all(Array.from({ length: 99 }, (_, i) => a.capture.faults.create({ stage: 'data', match: { recipient: `filler-${start + i}` }, reply: { code: 451 } })));
            }

            const burst = await Promise.all(Array.from({ length: 200 }, (_, i) => [a, b][i % 2]!.capture.faults.create({ stage: 'data', match: { recipient: `burst-${i}` }, reply: { code: 451 } })
                .then(() => 'made', (err: { code?: string }) => err.code)));
            expect(burst.filter((m) => m === 'made').length).to.equal(10);
            expect(burst.filter((m) => m === 'LIMIT_REACHED').length).to.equal(190);
            expect((await b.capture.faults.list()).length).to.equal(1_000);
            expect(await a.capture.faults.deleteAll()).to.equal(1_000);
        });

        it('`times: 5` faults exactly 5 of 40 concurrent deliveries split between the instances, then the rule is gone from both', async () => {
            const rule = await a.capture.faults.create({ stage: 'rcpt', match: { inbox: 'burst' }, reply: { code: 451, message: 'Rate limited' }, times: 5 });
            await waitUntil('the second instance sees the rule', async () => (await b.capture.faults.list()).some((r) => r.id === rule.id) && b.capture.faults.armed('rcpt'));

            const transports = [a, b].map((i) => Nodemailer.createTransport({ host: '127.0.0.1', port: i.port, secure: false, ignoreTLS: true, pool: true, maxConnections: 10 }));
            try {
                const outcomes = await Promise.all(Array.from({ length: 40 }, (_, n) =>
                    transports[n % 2]!.sendMail({ from: 'app@shop.test', to: 'burst@example.test', subject: `burst ${n}`, text: 'x', messageId: `<burst-${n}@shop.test>` })
                        .then(() => 'stored', (err: { responseCode?: number }) => `refused ${err.responseCode}`)));
                expect(outcomes.filter((o) => o === 'refused 451').length).to.equal(5);
                expect(outcomes.filter((o) => o === 'stored').length).to.equal(35);
            }
            finally {
                transports.forEach((t) => t.close());
            }

            const page = await a.capture.listEmails({ inbox: 'burst', limit: 100 });
            expect(page.records.length).to.equal(35);
            expect(await a.capture.faults.list()).to.equal([]);
            expect(await b.capture.faults.list()).to.equal([]);
        });
    });

    for (const [name, factory] of [['SQLite', sqliteFsStores], ['Postgres', postgresFsStores]] as Array<[string, () => StoreFactory]>) {
        describe(`two instances on one ${name} store: a rule made or deleted through either applies to the very next command of both`, () => {
            let stores: TestStores;
            let second: Awaited<ReturnType<TestStores['connectAgain']>>;
            let a: Instance;
            let b: Instance;
            const sessions: RawSmtpSession[] = [];

            before(async () => {
                stores = await factory().create();
                second = await stores.connectAgain();
                // The default refresh: what is exact must not depend on a short one.
                a = await startInstance(stores);
                b = await startInstance(second);
            });

            after(async () => {
                await Promise.all(sessions.map((s) => s.destroy()));
                for (const instance of [a, b]) {
                    await instance?.listener.close();
                }

                await second?.close();
                await stores?.cleanup();
            });

            /** A session at `instance` past MAIL FROM, whose RCPTs answer with their code. */
            const session = async (instance: Instance) => {
                const { session: opened } = await RawSmtpSession.open(instance.port);
                sessions.push(opened);
                await opened.command('EHLO client.example.test');
                await opened.command('MAIL FROM:<app@shop.test>');
                return async (to: string) => (await opened.command(`RCPT TO:<${to}>`)).code;
            };

            it('times: 2 made through A faults B then A, and no more, whichever answers; a rule deleted through B is gone from A', async () => {
                const [rcptA, rcptB] = [await session(a), await session(b)];
                // Both have just read the rule set (none): a copy kept for a while would miss what comes next.
                expect([await rcptA('warm@example.test'), await rcptB('warm@example.test')]).to.equal([250, 250]);

                await a.capture.faults.create({ stage: 'rcpt', match: { inbox: 'exact' }, reply: { code: 450 }, times: 2 });
                expect([await rcptB('exact@example.test'), await rcptA('exact@example.test'), await rcptB('exact@example.test'), await rcptA('exact@example.test')]).to.equal([450, 450, 250, 250]);

                const forever = await b.capture.faults.create({ stage: 'rcpt', match: { inbox: 'forever' }, reply: { code: 451 } });
                expect([await rcptA('forever@example.test'), await rcptB('forever@example.test')]).to.equal([451, 451]);
                expect(await b.capture.faults.delete(forever.id)).to.be.true();
                expect([await rcptA('forever@example.test'), await rcptB('forever@example.test')]).to.equal([250, 250]);
            });
        });
    }
});
