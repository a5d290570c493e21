import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { Webhook } from 'standardwebhooks';
import { runNode } from '../helpers/child-process';
import { buildMail } from '../helpers/mail';
import { freePort } from '../helpers/net';
import { startPostgres, type PostgresServer } from '../helpers/postgres';
import { startS3, type S3Fixture } from '../helpers/s3';
import { isolatedEnv, postgresS3Env } from '../helpers/service-env';
import { spawnStandalone, type ListeningService } from '../helpers/standalone-service';
import { removeDir, tempDir } from '../helpers/temp-dir';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver';

const { expect } = Code;
const { describe, it, afterEach } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');
/** Longest wait for a process to start or a request to arrive, ms: a hang, not a speed claim. */
const LIMIT_MS = 30_000;
/**
 * The dispatcher's poll interval, ms (INBOX_CAPTURE_WEBHOOK_POLL_MS, a fifth of the default):
 * a retry goes out at the first poll after its wait, and waiting two polls shows that
 * nothing more is coming.
 */
const POLL_MS = 200;

type Service = ListeningService;

/** The standalone service with `env`, stopped by the test's afterEach. */
async function startService(env: NodeJS.ProcessEnv): Promise<Service> {
    const service = await spawnStandalone(env, LIMIT_MS);
    running.push(service);
    return service;
}

async function createKey(env: NodeJS.ProcessEnv): Promise<string> {
    const created = await runNode([BIN, 'keys', 'create', `k${Date.now()}${Math.random()}`], { cwd: ROOT, env });
    expect(created.code, created.stderr).to.equal(0);
    return created.stdout.trim();
}

/** Sends one message over SMTP; resolves on the 250. */
async function sendMail(service: Service, to: string, subject = 'webhook test'): Promise<void> {
    const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: service.smtpPort, secure: false, ignoreTLS: true });
    try {
        const info = await transport.sendMail({ envelope: { from: 'sender@test.example', to: [to] }, raw: buildMail({ to, subject, text: 'Your code is 482913.' }) });
        expect(info.response).to.startWith('250');
    }
    finally {
        transport.close();
    }
}

async function kill(service: Service): Promise<void> {
    if (service.child.exitCode === null && service.child.signalCode === null) {
        service.child.kill('SIGKILL');
        await service.exited;
    }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const deliveryIds = (requests: ReceivedWebhook[]) => requests.map((r) => r.headers['webhook-id']);

/** What a receiver checks with the standardwebhooks library: the payload, or the library's error. */
function verified(verifier: Webhook, request: Pick<ReceivedWebhook, 'body' | 'headers'>): unknown {
    try {
        return verifier.verify(request.body.toString('utf8'), request.headers as Record<string, string>);
    }
    catch (err) {
        return err;
    }
}

const running: Service[] = [];
const receivers: WebhookReceiver[] = [];
const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];

async function receiver(...args: Parameters<typeof startWebhookReceiver>): Promise<WebhookReceiver> {
    const started = await startWebhookReceiver(...args);
    receivers.push(started);
    return started;
}

async function sqliteEnv(vars: Record<string, string>): Promise<NodeJS.ProcessEnv> {
    const dataDir = await tempDir('webhooks');
    dirs.push(dataDir);
    return isolatedEnv({ INBOX_CAPTURE_DATA_DIR: dataDir, INBOX_CAPTURE_WEBHOOK_POLL_MS: String(POLL_MS), ...vars });
}

// docs/api.md, "Webhooks", end to end.
describe('webhooks against the standalone service', () => {

    afterEach(async () => {
        await Promise.all(running.splice(0).map(kill));
        await Promise.all(receivers.splice(0).map((r) => r.close()));
        await Promise.all(dirs.splice(0).map(removeDir));
        for (const cleanup of cleanups.splice(0)) {
            await cleanup();
        }
    });

    it('POSTs each stored email once to the URL as given: the exact body, the headers, a signature that verifies', async () => {
        const hook = await receiver();
        // A plain-text secret: the key is its UTF-8 bytes.
        const secret = 'a webhook secret for tests';
        const env = await sqliteEnv({ INBOX_CAPTURE_WEBHOOK_URL: hook.url('/hooks/mail?team=qa&x=1'), INBOX_CAPTURE_WEBHOOK_SECRET: secret });
        const service = await startService(env);
        const key = await createKey(env);

        await sendMail(service, 'signup@test.example', 'Welcome aboard');
        const [request] = await hook.waitFor(1, LIMIT_MS);
        expect(request!.method).to.equal('POST');
        expect(request!.url).to.equal('/hooks/mail?team=qa&x=1');
        expect(request!.headers['content-type']).to.equal('application/json');
        expect(request!.headers['x-inbox-capture-event']).to.equal('email.received');
        expect(request!.headers['webhook-id']).to.match(/^[0-9a-f-]{36}$/);
        expect(Math.abs(Number(request!.headers['webhook-timestamp']) - Date.now() / 1000)).to.be.below(60);
        expect(request!.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]{43}=$/);
        // The receiver verifies with the Standard Webhooks library, over the bytes it got.
        expect(verified(new Webhook(Buffer.from(secret), { format: 'raw' }), request!)).to.equal(JSON.parse(request!.body.toString('utf8')));
        expect(verified(new Webhook(Buffer.from('another secret'), { format: 'raw' }), request!)).to.be.an.error('No matching signature found');

        const payload = JSON.parse(request!.body.toString('utf8')) as { event: string; email: { messageId: string } };
        expect(Object.keys(payload)).to.equal(['event', 'email']);
        expect(payload.event).to.equal('email.received');
        const got = await fetch(`${service.base}/v1/emails/${encodeURIComponent(payload.email.messageId)}`, { headers: { authorization: `Bearer ${key}` } });
        expect(got.status).to.equal(200);
        expect(payload.email).to.equal(await got.json() as typeof payload.email);
        expect((payload.email as unknown as { codes: string[] }).codes).to.equal(['482913']);

        // After the 2xx nothing more is sent.
        await sleep(2 * POLL_MS);
        expect(hook.received.length).to.equal(1);
    });

    it('signs with a whsec_ secret from `inbox-capture webhook-secret`: every attempt verifies with a new timestamp; a replay with another id or a stale timestamp does not', async () => {
        const made = await runNode([BIN, 'webhook-secret'], { cwd: ROOT, env: isolatedEnv() });
        expect(made.code, made.stderr).to.equal(0);
        const secret = made.stdout.trim();
        expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
        const verifier = new Webhook(secret);
        // The receiver verifies each POST itself; the first two answers are 500s, so the service retries.
        const outcomes: unknown[] = [];
        const hook = await receiver((i, request) => {
            outcomes.push(verified(verifier, request));
            return { status: i < 2 ? 500 : 200 };
        });
        const env = await sqliteEnv({ INBOX_CAPTURE_WEBHOOK_URL: hook.url(), INBOX_CAPTURE_WEBHOOK_SECRET: secret, INBOX_CAPTURE_WEBHOOK_FIRST_RETRY_MS: '1000' });
        const service = await startService(env);

        await sendMail(service, 'replay@test.example');
        const attempts = await hook.waitFor(3, LIMIT_MS);
        outcomes.forEach((outcome) => expect(outcome).to.not.be.an.error());
        expect(new Set(deliveryIds(attempts)).size).to.equal(1);
        // Signed when sent: a retry a second or more later carries a later timestamp.
        expect(Number(attempts[2]!.headers['webhook-timestamp'])).to.be.above(Number(attempts[0]!.headers['webhook-timestamp']));

        // A captured POST replayed as a new delivery, so that de-duplication would let it through.
        const [captured] = attempts;
        expect(verified(verifier, { body: captured!.body, headers: { ...captured!.headers, 'webhook-id': 'another-delivery' } })).to.be.an.error('No matching signature found');
        // ... or with its timestamp moved to now: the timestamp is signed too.
        const now = String(Math.floor(Date.now() / 1000));
        expect(verified(verifier, { body: captured!.body, headers: { ...captured!.headers, 'webhook-timestamp': now } })).to.be.an.error('No matching signature found');
        // ... or as it was, once its timestamp is older than the library's five minutes.
        const { now: clock } = Date;
        Date.now = () => clock() + 6 * 60_000;
        try {
            expect(verified(verifier, captured!)).to.be.an.error('Message timestamp too old');
        }
        finally {
            Date.now = clock;
        }
    });

    it('refuses to start with a whsec_ secret that is not base64', async () => {
        const env = await sqliteEnv({ INBOX_CAPTURE_WEBHOOK_URL: 'http://127.0.0.1:9/hook', INBOX_CAPTURE_WEBHOOK_SECRET: 'whsec_not base64' });
        const started = await runNode([BIN, 'serve'], { cwd: ROOT, env: { ...env, PORT: '0', SMTP_PORT: '0' } });
        expect(started.code).to.equal(1);
        expect(started.stderr).to.include('INBOX_CAPTURE_WEBHOOK_SECRET: a secret starting with whsec_ must be base64 after it');
    });

    it('sends no signature header without a secret, and one delivery per URL with ids of its own', async () => {
        const first = await receiver();
        const second = await receiver();
        const env = await sqliteEnv({ INBOX_CAPTURE_WEBHOOK_URL: `${first.url()}, ${second.url('/other')}` });
        const service = await startService(env);

        await sendMail(service, 'plain@test.example');
        const [a] = await first.waitFor(1, LIMIT_MS);
        const [b] = await second.waitFor(1, LIMIT_MS);
        for (const request of [a!, b!]) {
            expect(request.headers).to.not.include('webhook-signature');
            expect(request.headers['webhook-timestamp']).to.match(/^\d+$/);
            expect(request.headers['x-inbox-capture-event']).to.equal('email.received');
        }

        expect(a!.headers['webhook-id']).to.not.equal(b!.headers['webhook-id']);
        expect(a!.body.equals(b!.body)).to.be.true();
    });

    it('mail stored by `inbox-capture ingest` (an MTA pipe) is delivered by the running service', async () => {
        const hook = await receiver();
        const env = await sqliteEnv({ INBOX_CAPTURE_WEBHOOK_URL: hook.url() });
        await startService(env);

        const ingested = await runNode([BIN, 'ingest', '--recipient=piped@test.example'], { cwd: ROOT, env, input: buildMail({ to: 'piped@test.example', subject: 'through the pipe' }) });
        expect(ingested.code, ingested.stderr).to.equal(0);
        const [request] = await hook.waitFor(1, LIMIT_MS);
        const payload = JSON.parse(request!.body.toString('utf8')) as { email: { messageId: string; subject: string } };
        expect([payload.email.messageId, payload.email.subject]).to.equal([ingested.stdout.trim(), 'through the pipe']);
    });

    it('retries after a 500, a timeout and a refused connection, never follows a 3xx, with the same delivery id; nothing after the 2xx', async () => {
        const failing = await receiver((i) => ({ status: i < 2 ? 500 : 204 }));
        const slow = await receiver((i) => (i === 0 ? 'hold' : { status: 200 }));
        const target = await receiver();
        const redirecting = await receiver((i) => (i < 2 ? { status: i === 0 ? 302 : 307, headers: { location: target.url('/moved') } } : { status: 200 }));
        const refusedPort = await freePort();
        const env = await sqliteEnv({
            INBOX_CAPTURE_WEBHOOK_URL: [failing.url(), slow.url(), redirecting.url(), `http://127.0.0.1:${refusedPort}/hook`].join(','),
            INBOX_CAPTURE_WEBHOOK_TIMEOUT_MS: '500',
            INBOX_CAPTURE_WEBHOOK_FIRST_RETRY_MS: '200'
        });
        const service = await startService(env);

        await sendMail(service, 'retries@test.example');
        // The four first attempts are claimed together: once one arrived, the refused one was made too.
        await failing.waitFor(1, LIMIT_MS);
        const refused = await receiver(undefined, refusedPort);

        const failed = await failing.waitFor(3, LIMIT_MS);
        const timedOut = await slow.waitFor(2, LIMIT_MS);
        const redirected = await redirecting.waitFor(3, LIMIT_MS);
        const late = await refused.waitFor(1, LIMIT_MS);
        for (const requests of [failed, timedOut, redirected]) {
            expect(new Set(deliveryIds(requests)).size).to.equal(1);
            expect(requests.every((r) => r.body.equals(requests[0]!.body))).to.be.true();
        }

        await sleep(2 * POLL_MS);
        expect(failing.received.length).to.equal(3);
        expect(slow.received.length).to.equal(2);
        expect(redirecting.received.length).to.equal(3);
        expect(refused.received.length).to.equal(1);
        expect(late[0]!.body.equals(failed[0]!.body)).to.be.true();
        // Redirects are not followed.
        expect(target.received.length).to.equal(0);
    });

    it('backs off exponentially: never before the planned wait, the last far longer than the first two', async () => {
        const failing = await receiver(() => ({ status: 503 }));
        const env = await sqliteEnv({ INBOX_CAPTURE_WEBHOOK_URL: failing.url(), INBOX_CAPTURE_WEBHOOK_FIRST_RETRY_MS: '200' });
        const service = await startService(env);

        await sendMail(service, 'backoff@test.example');
        const attempts = await failing.waitFor(6, LIMIT_MS);
        expect(new Set(deliveryIds(attempts)).size).to.equal(1);
        const waits = attempts.slice(1).map((r, i) => r.at - attempts[i]!.at);
        // Planned 200, 400, 800, 1600, 3200 ms plus the work of each attempt: growth, not exact times.
        // (The doubling itself is lib/util/backoff.ts's, tested there; a loaded machine only adds to each wait.)
        const shown = `waits ${waits.join(', ')} ms`;
        waits.forEach((wait, i) => expect(wait, shown).to.be.at.least(200 * 2 ** i - 5));
        // Planned 3200 against 600 ms: a constant wait fails here, a stall of a second or two does not.
        expect(waits[4]!, shown).to.be.above(waits[0]! + waits[1]!);
    });

    it('delivers after a kill -9 between the 250 and the answer: same delivery id, after the restart', async () => {
        const hook = await receiver((i) => (i === 0 ? 'hold' : { status: 200 }));
        const env = await sqliteEnv({ INBOX_CAPTURE_WEBHOOK_URL: hook.url(), INBOX_CAPTURE_WEBHOOK_TIMEOUT_MS: '1000' });
        const first = await startService(env);

        await sendMail(first, 'restart@test.example');
        await hook.waitFor(1, LIMIT_MS);
        // The receiver holds the first POST: the process dies with it unanswered.
        await kill(first);
        const second = await startService(env);
        const requests = await hook.waitFor(2, LIMIT_MS);
        expect(requests[1]!.headers['webhook-id']).to.equal(requests[0]!.headers['webhook-id']);
        expect(requests[1]!.body.equals(requests[0]!.body)).to.be.true();
        await sleep(2 * POLL_MS);
        expect(hook.received.length).to.equal(2);
        await kill(second);
    });

    it('a receiver that never answers does not hold up ingest: every message gets its 250 and is listed', async () => {
        const dead = await receiver(() => 'hold');
        const env = await sqliteEnv({ INBOX_CAPTURE_WEBHOOK_URL: dead.url() });
        const service = await startService(env);
        const key = await createKey(env);

        const count = 40;
        const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: service.smtpPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 4 });
        try {
            const sent = await Promise.all(Array.from({ length: count }, (_, i) =>
                transport.sendMail({ envelope: { from: 'load@test.example', to: ['dead-hook@test.example'] }, raw: buildMail({ to: 'dead-hook@test.example', subject: `m${i}` }) })));
            expect(sent.every((info) => info.response.startsWith('250'))).to.be.true();
        }
        finally {
            transport.close();
        }

        const listed = await fetch(`${service.base}/v1/emails?inbox=dead-hook&limit=100`, { headers: { authorization: `Bearer ${key}` } });
        expect(((await listed.json()) as { emails: unknown[] }).emails.length).to.equal(count);
        // The receiver holds every POST: at most the dispatcher's concurrency are open at once.
        expect(dead.received.length).to.be.above(0);
        expect(dead.maxOpen()).to.be.at.most(8);
    });

    it('two instances on Postgres + S3 send each delivery once', { timeout: 120_000 }, async () => {
        const postgres: PostgresServer = await startPostgres();
        cleanups.push(() => postgres.stop());
        const s3: S3Fixture = await startS3();
        cleanups.push(() => s3.stop());
        const databaseUrl = await postgres.createDatabase();
        const hook = await receiver();
        const shared = { INBOX_CAPTURE_WEBHOOK_URL: hook.url(), INBOX_CAPTURE_WEBHOOK_SECRET: 'shared secret', INBOX_CAPTURE_WEBHOOK_POLL_MS: String(POLL_MS) };
        const migrated = await runNode([BIN, 'migrate'], { cwd: ROOT, env: postgresS3Env(databaseUrl, s3) });
        expect(migrated.code, migrated.stderr).to.equal(0);

        const dirA = await tempDir('webhooks-a');
        const dirB = await tempDir('webhooks-b');
        dirs.push(dirA, dirB);
        const [a, b] = await Promise.all([
            startService(postgresS3Env(databaseUrl, s3, { ...shared, INBOX_CAPTURE_DATA_DIR: dirA })),
            startService(postgresS3Env(databaseUrl, s3, { ...shared, INBOX_CAPTURE_DATA_DIR: dirB }))
        ]);

        const count = 60;
        await Promise.all(Array.from({ length: count }, (_, i) => sendMail(i % 2 === 0 ? a : b, `pair${i % 3}@test.example`, `m${i}`)));
        const requests = await hook.waitFor(count, LIMIT_MS);
        await sleep(2 * POLL_MS);
        expect(hook.received.length).to.equal(count);
        expect(new Set(deliveryIds(requests)).size).to.equal(count);
        const messageIds = requests.map((r) => (JSON.parse(r.body.toString('utf8')) as { email: { messageId: string } }).email.messageId);
        expect(new Set(messageIds).size).to.equal(count);
    });
});
