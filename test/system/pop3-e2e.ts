import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { InboxCaptureClient } from '../../adapters/client';
import { run, runNode } from '../helpers/child-process';
import { freePort, retryWhilePortTaken } from '../helpers/net';
import { poplib, retrieved } from '../helpers/pop3';
import { serviceBackends } from '../helpers/service-backends';
import { spawnStandalone } from '../helpers/standalone-service';
import { removeDir, tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');
const FETCHMAIL = '/usr/bin/fetchmail';
const CRLF = '\r\n';

/** A message whose body has lines that start with a dot, as sent and as it must come back. */
const RAW = ['From: Shop <shop@example.test>', 'To: box@inbox-capture.test', 'Subject: Your order', 'Message-ID: <order-pop3@example.test>', '',
    'Thanks for your order.', '.a line that starts with a dot', '.', '..', 'bye', ''].join(CRLF);

/**
 * Fetches the inbox with fetchmail (STLS, a self-signed certificate not checked, DELE after
 * each message); answers what it delivered and its exit code.
 */
async function fetchWithFetchmail(port: number, key: string): Promise<{ code: number | null; delivered: string; transcript: string }> {
    const home = await tempDir('fetchmail');
    try {
        const delivered = Path.join(home, 'delivered.txt');
        const rc = Path.join(home, 'fetchmailrc');
        Fs.writeFileSync(rc, `poll 127.0.0.1 port ${port} protocol pop3\n  user "box" password "${key}" mda "/bin/sh -c 'cat >> ${delivered}'" sslproto "tls1.2+" no sslcertck\n`, { mode: 0o600 });
        const result = await run(FETCHMAIL, ['-f', rc, '-v', '--nokeep'], { cwd: home, env: { ...process.env, HOME: home } });
        return { code: result.code, delivered: Fs.existsSync(delivered) ? Fs.readFileSync(delivered, 'latin1') : '', transcript: result.stdout + result.stderr };
    }
    finally {
        await removeDir(home);
    }
}

describe('POP3 end to end (standalone service, SMTP in, poplib and fetchmail out)', () => {
    for (const [name, env] of serviceBackends({ before, after })) {
        it(`serves mail sent over SMTP to poplib over STLS, RETR as the raw download, with SMTP's certificate, on ${name}`, async () => {
            // On fresh ports, started again if one was taken meanwhile: spawnStandalone() kills a
            // start that fails, and each attempt has a store of its own (the backends' after() removes
            // them). A POP3 port taken makes spawnStandalone() try its own ports again first, in vain;
            // then this takes a fresh POP3 port.
            const { pop3Port, vars, service } = await retryWhilePortTaken(async () => {
                const pop3Port = await freePort();
                const vars = { ...await env(), SMTP_TLS: 'starttls', INBOX_CAPTURE_POP3_PORT: String(pop3Port) };
                return { pop3Port, vars, service: await spawnStandalone(vars) };
            });
            const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: service.smtpPort, secure: false, ignoreTLS: true });
            try {
                // One certificate for both: the fingerprints in the start lines agree.
                const prints = [...service.stdout().matchAll(/SHA-256 ([0-9A-F:]{95})/g)].map((m) => m[1]);
                expect(service.stdout()).to.contain(`POP3 on 127.0.0.1:${pop3Port} (STLS, SHA-256`);
                expect(prints).to.have.length(2);
                expect(prints[0]).to.equal(prints[1]);

                const created = await runNode([BIN, 'keys', 'create', 'pop3'], { cwd: ROOT, env: vars });
                expect(created.code, created.stderr).to.equal(0);
                const key = created.stdout.trim();
                await transport.sendMail({ envelope: { from: 'shop@example.test', to: ['box@inbox-capture.test'] }, raw: RAW });
                const client = new InboxCaptureClient({ baseUrl: service.base, apiKey: key });
                const email = await client.waitForEmail({ inbox: 'box', timeoutMs: 20_000 });
                const raw = Buffer.from(await client.downloadRaw(email.messageId));

                const session = await poplib(pop3Port, [['capa'], ['user', 'box'], ['pass_', key], ['uidl'], ['retr', 1], ['quit']], 'stls');
                expect(session.stls!).to.startWith('+OK');
                expect(session.steps[2]!.resp!).to.equal('+OK box has 1 messages (' + raw.length + ' octets)');
                expect(session.steps[3]!.lines).to.equal([`1 ${email.messageId}`]);
                expect(retrieved(session.steps[4]!).equals(raw)).to.be.true();
                expect(retrieved(session.steps[4]!).toString('latin1')).to.contain(`${CRLF}.a line that starts with a dot${CRLF}.${CRLF}..${CRLF}`);

                // A real mail fetcher, where the machine has one: it fetches, and its DELE takes the mail away at QUIT.
                if (Fs.existsSync(FETCHMAIL)) {
                    const fetched = await fetchWithFetchmail(pop3Port, key);
                    expect(fetched.code, fetched.transcript).to.equal(0);
                    expect(fetched.delivered).to.contain(`Subject: Your order\n`);
                    expect(fetched.delivered).to.contain(`\n.a line that starts with a dot\n.\n..\nbye\n`);
                    expect(fetched.transcript).to.contain('POP3> QUIT');
                    expect((await client.listEmails({ inbox: 'box' })).emails).to.equal([]);
                }
            }
            finally {
                transport.close();
                service.child.kill('SIGKILL');
                await service.exited;
            }
        });
    }
});
