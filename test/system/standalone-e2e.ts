import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { ChildProcess } from 'node:child_process';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { freePort, retryWhilePortTaken } from '../helpers/net';
import { runNode, spawnNode, waitForOutput, type RunResult } from '../helpers/child-process';
import { isolatedEnv } from '../helpers/service-env';
import { tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const STANDALONE = Path.join(ROOT, 'examples', 'standalone.js');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');

interface Service {
    child: ChildProcess;
    base: string;
    smtpPort: number;
    dataDir: string;
    stdout: () => string;
    stderr: () => string;
    exited: Promise<number | null>;
    /** Kills the process if a test left it running, removes the data dir. */
    cleanup(): Promise<void>;
}

/** Spawns `node examples/standalone.js` on free ports and a temp data dir; resolves once it listens (again on fresh ports if one was taken meanwhile). */
function startService(): Promise<Service> {
    return retryWhilePortTaken(startServiceOnce);
}

async function startServiceOnce(): Promise<Service> {
    const dataDir = await tempDir('e2e');
    const port = await freePort();
    const smtpPort = await freePort();
    const spawned = spawnNode([STANDALONE], {
        cwd: ROOT,
        env: isolatedEnv({ PORT: String(port), SMTP_PORT: String(smtpPort), INBOX_CAPTURE_DATA_DIR: dataDir })
    });
    const { child, exited } = spawned;

    const service: Service = {
        child,
        base: `http://127.0.0.1:${port}`,
        smtpPort,
        dataDir,
        stdout: spawned.stdout,
        stderr: spawned.stderr,
        exited,
        async cleanup() {
            if (child.exitCode === null && child.signalCode === null) {
                child.kill('SIGKILL');
                await exited;
            }

            await Fs.rm(dataDir, { recursive: true, force: true });
        }
    };

    try {
        await waitForOutput(spawned, /^inbox-capture listening: [^\n]*\n(?:.*\n)*create an API key: [^\n]*\n/m);
    }
    catch (err) {
        await service.cleanup();
        throw err;
    }

    return service;
}

/** Runs the built CLI against the service's data dir. */
function cli(service: Service, args: string[]): Promise<RunResult> {
    return runNode([BIN, ...args], { cwd: ROOT, env: isolatedEnv({ INBOX_CAPTURE_DATA_DIR: service.dataDir }) });
}

interface EmailJson {
    messageId: string;
    inbox: string;
    sender: string;
    recipient: string;
    subject: string;
    body: string;
    attachments: { filename: string; size: number; url: string }[];
    receivedAt: number;
    rawUrl: string;
}

interface PageJson {
    emails: EmailJson[];
    hasMore: boolean;
    nextCursor?: string;
}

/** A message built by hand, CRLF throughout, so its exact bytes are known. */
function rawMessage(subject: string, id: string): Buffer {
    return Buffer.from([
        'From: Tester <tester@example.test>',
        'To: e2e@example.test',
        `Subject: ${subject}`,
        `Message-ID: <${id}>`,
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b1"',
        '',
        '--b1',
        'Content-Type: text/plain; charset=utf-8',
        '',
        `Body of ${subject}.`,
        '.a line that starts with a dot',
        '--b1',
        'Content-Type: text/plain; name="notes.txt"',
        'Content-Disposition: attachment; filename="notes.txt"',
        '',
        'attached text',
        '--b1--',
        ''
    ].join('\r\n'), 'utf8');
}

describe('standalone example', () => {

    it('serves a whole session: CLI key, SMTP in, list, long-poll, raw download, delete, SIGTERM exit 0', async () => {
        const service = await startService();
        const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: service.smtpPort, secure: false, ignoreTLS: true });
        try {
            expect(service.stdout()).to.contain(`HTTP on ${service.base}`);
            expect(service.stdout()).to.contain(`SMTP on 127.0.0.1:${service.smtpPort}`);
            expect(service.stdout()).to.contain('keys create');

            const created = await cli(service, ['keys', 'create', 'e2e']);
            expect(created.code).to.equal(0);
            const key = created.stdout.trim();
            const auth = { authorization: `Bearer ${key}` };

            const first = rawMessage('first', 'first-e2e@example.test');
            const info = await transport.sendMail({ envelope: { from: 'tester@example.test', to: ['e2e@example.test'] }, raw: first });
            expect(info.response).to.startWith('250');

            const listed = await fetch(`${service.base}/v1/emails?inbox=e2e`, { headers: auth });
            expect(listed.status).to.equal(200);
            const page = await listed.json() as PageJson;
            expect(page.hasMore).to.be.false();
            expect(page.emails).to.have.length(1);
            const [email] = page.emails;
            expect(email.messageId).to.equal('first-e2e@example.test');
            expect(email.inbox).to.equal('e2e');
            expect(email.subject).to.equal('first');
            expect(email.sender).to.equal('tester@example.test');
            expect(email.attachments.map((a) => a.filename)).to.equal(['0-notes.txt']);
            expect(email.rawUrl).to.equal('/v1/emails/first-e2e%40example.test/raw');

            const unauthorized = await fetch(`${service.base}/v1/emails?inbox=e2e`);
            expect(unauthorized.status).to.equal(401);

            // Long-poll for a second message that arrives while the request waits.
            let answered = false;
            const waiting = fetch(`${service.base}/v1/emails?inbox=e2e&subject=second&wait=true&timeout=20`, { headers: auth }).then((res) => {
                answered = true;
                return res;
            });
            await new Promise((resolve) => setTimeout(resolve, 300));
            expect(answered).to.be.false();
            await transport.sendMail({ envelope: { from: 'tester@example.test', to: ['e2e@example.test'] }, raw: rawMessage('second', 'second-e2e@example.test') });
            const polled = await waiting;
            expect(polled.status).to.equal(200);
            expect((await polled.json() as PageJson).emails.map((e) => e.subject)).to.equal(['second']);

            // Raw download: a redirect to a signed link, whose target is the message byte for byte.
            const redirect = await fetch(`${service.base}${email.rawUrl}`, { headers: auth, redirect: 'manual' });
            expect(redirect.status).to.equal(302);
            const location = redirect.headers.get('location')!;
            expect(location).to.exist();
            const download = await fetch(new URL(location, service.base));
            expect(download.status).to.equal(200);
            expect(download.headers.get('content-type') ?? '').to.startWith('message/rfc822');
            const bytes = Buffer.from(await download.arrayBuffer());
            expect(bytes.equals(first)).to.be.true();

            const deleted = await fetch(`${service.base}/v1/emails/${encodeURIComponent(email.messageId)}`, { method: 'DELETE', headers: auth });
            expect(deleted.status).to.equal(200);
            expect(await deleted.json()).to.equal({ deleted: true, messageId: email.messageId });
            expect((await fetch(`${service.base}/v1/emails/${encodeURIComponent(email.messageId)}`, { headers: auth })).status).to.equal(404);
            expect((await fetch(new URL(location, service.base))).status).to.equal(404);
            const after = await (await fetch(`${service.base}/v1/emails?inbox=e2e`, { headers: auth })).json() as PageJson;
            expect(after.emails.map((e) => e.subject)).to.equal(['second']);

            transport.close();
            service.child.kill('SIGTERM');
            expect(await service.exited).to.equal(0);
            expect(service.stdout()).to.contain('stopped');
        }
        finally {
            transport.close();
            await service.cleanup();
        }
    });

    it('answers unknown paths with the API error shape', async () => {
        const service = await startService();
        try {
            const res = await fetch(`${service.base}/no/such/page`);
            expect(res.status).to.equal(404);
            expect(await res.json()).to.equal({ error: 'NOT_FOUND' });
            expect(res.headers.get('inbox-capture-error-detail')).to.equal('path: no endpoint at "/no/such/page"');
            expect((await fetch(`${service.base}/docs`)).status).to.equal(200);

            service.child.kill('SIGINT');
            expect(await service.exited).to.equal(0);
        }
        finally {
            await service.cleanup();
        }
    });

    it('stops at once on SIGTERM while a long-poll waits, answering it, exit 0', async () => {
        const service = await startService();
        try {
            const key = (await cli(service, ['keys', 'create', 'poller'])).stdout.trim();
            const waiting = fetch(`${service.base}/v1/emails?inbox=quiet&wait=true&timeout=28`, { headers: { authorization: `Bearer ${key}` } });
            await new Promise((resolve) => setTimeout(resolve, 300));
            service.child.kill('SIGTERM');
            const res = await waiting;
            expect(res.status).to.equal(200);
            expect((await res.json() as PageJson).emails).to.equal([]);
            expect(await service.exited).to.equal(0);
        }
        finally {
            await service.cleanup();
        }
    });

    it('refuses a bad PORT with a clear message and exit 1', async () => {
        const { code, stderr } = await runNode([STANDALONE], { cwd: ROOT, env: isolatedEnv({ PORT: 'http' }) });
        expect(code).to.equal(1);
        expect(stderr).to.contain('PORT / --port must be a port number');
    });
});
