import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { openPostgresKnex } from '../../lib/record-store/postgres/postgres-knex';
import { runNode, stopGracefully, waitForOutput, type RunResult, type Spawned } from '../helpers/child-process';
import { startPostgres, type PostgresServer } from '../helpers/postgres';
import { tempDir } from '../helpers/temp-dir';
import { startS3, type S3Fixture } from '../helpers/s3';
import { postgresS3Env } from '../helpers/service-env';
import { spawnStandalone } from '../helpers/standalone-service';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');

/** Longest wait for a process to start, answer or stop, ms: a hang, not a speed claim. */
const PROCESS_LIMIT_MS = 30_000;

/**
 * Loaded with `node --require` into instance B only. It reports B's long-poll
 * events on stderr and makes B's inbox versions stand still, so that B's scheduled
 * checks never query (they query only when the version moved): an answer can then
 * only come from a notification, which across processes means Postgres NOTIFY.
 * Only the long-poller's view of the store is wrapped; every other request of B
 * uses the real stores. The API suites' "versions stand still" test is the control.
 */
const PROBE_SCRIPT = `'use strict';
const longPoll = require(${JSON.stringify(Path.join(ROOT, 'dist', 'lib', 'long-poll', 'poller.js'))});
const create = longPoll.createLongPoller;
const report = (event, inbox) => process.stderr.write('[probe] ' + JSON.stringify({ event, inbox }) + '\\n');
longPoll.createLongPoller = ({ recordStore, notifier }) => create({
    recordStore: { ...recordStore, inboxVersion: async () => 0 },
    notifier: {
        ...notifier,
        publish: (inbox) => notifier.publish(inbox),
        subscribe(inbox, listener) {
            // Called once the request's first query came back empty: it now waits.
            report('waiting', inbox);
            return notifier.subscribe(inbox, () => {
                report('notified', inbox);
                listener();
            });
        }
    }
});
`;

interface Instance extends Spawned {
    name: string;
    base: string;
    smtpPort: number;
}

/** Spawns `node examples/standalone.js` on free ports; resolves once it listens. */
async function startInstance(name: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<Instance> {
    // On free ports, started again if one was taken meanwhile.
    return { name, ...await spawnStandalone(env, PROCESS_LIMIT_MS, nodeArgs) };
}

/** Runs the built CLI with the shared configuration. */
function cli(env: NodeJS.ProcessEnv, args: string[]): Promise<RunResult> {
    return runNode([BIN, ...args], { cwd: ROOT, env });
}

/** SIGTERM, then the exit code (or a kill after the limit). */
async function stopInstance(instance: Instance): Promise<number | null> {
    return stopGracefully(instance, PROCESS_LIMIT_MS);
}

const ATTACHMENT = Buffer.from('%PDF-1.4\n\u0000\u00ff\u0080 binary bytes of the attached report\r\n', 'latin1');

/** The message, built by hand (CRLF, a dot-led line SMTP must stuff and unstuff), so its exact bytes are known. */
function rawMessage(id: string): Buffer {
    return Buffer.from([
        'From: Tester <tester@example.test>',
        'To: two-instances@example.test',
        'Subject: Delivered to A, read through B',
        `Message-ID: <${id}>`,
        'Date: Sat, 21 Nov 2026 10:00:00 +0000',
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b1"',
        '',
        '--b1',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'The code is 424242.',
        '.a line that starts with a dot',
        '..and one with two',
        '--b1',
        'Content-Type: application/pdf; name="report.pdf"',
        'Content-Disposition: attachment; filename="report.pdf"',
        'Content-Transfer-Encoding: base64',
        '',
        ATTACHMENT.toString('base64'),
        '--b1--',
        ''
    ].join('\r\n'), 'utf8');
}

interface EmailJson {
    messageId: string;
    inbox: string;
    subject: string;
    body: string;
    attachments: { filename: string; contentType: string; size: number; url: string; contentId: string }[];
    rawUrl: string;
}

describe('two service instances on one Postgres and one S3 bucket', () => {
    let postgres: PostgresServer;
    let s3: S3Fixture;
    const dirs: string[] = [];
    const instances: Instance[] = [];

    before(async () => {
        postgres = await startPostgres();
        s3 = await startS3();
    });

    after(async () => {
        for (const instance of instances) {
            if (instance.child.exitCode === null && instance.child.signalCode === null) {
                instance.child.kill('SIGKILL');
                await instance.exited;
            }
        }

        await Promise.all(dirs.map((dir) => Fs.rm(dir, { recursive: true, force: true })));
        await s3?.stop();
        await postgres?.stop();
    });

    it('serves mail delivered by SMTP to A through B: list, long-poll woken by NOTIFY, get, downloads, delete; both exit 0 on SIGTERM', async () => {
        const databaseUrl = postgres.connectionString;
        const dataDirA = await tempDir('two-a');
        const dataDirB = await tempDir('two-b');
        dirs.push(dataDirA, dataDirB);

        // Deploy step: migrate once, before any instance starts.
        const migrated = await cli(postgresS3Env(databaseUrl, s3), ['migrate']);
        expect(migrated.code, migrated.stderr).to.equal(0);

        const probeDir = await tempDir('two-probe');
        dirs.push(probeDir);
        const probe = Path.join(probeDir, 'long-poll-probe.js');
        await Fs.writeFile(probe, PROBE_SCRIPT);
        const started = await Promise.allSettled([
            startInstance('A', postgresS3Env(databaseUrl, s3, { INBOX_CAPTURE_DATA_DIR: dataDirA })),
            startInstance('B', postgresS3Env(databaseUrl, s3, { INBOX_CAPTURE_DATA_DIR: dataDirB }), ['--require', probe])
        ]);
        for (const result of started) {
            if (result.status === 'fulfilled') {
                instances.push(result.value);
            }
            else {
                throw result.reason;
            }
        }

        const [a, b] = instances as [Instance, Instance];
        for (const instance of [a, b]) {
            expect(instance.stdout()).to.contain(`records in Postgres (DATABASE_URL), files in S3 bucket ${s3.bucket}`);
        }

        // Each instance listens on a connection of its own.
        const admin = openPostgresKnex(databaseUrl);
        try {
            const listening = await admin.raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'") as { rows: { n: number }[] };
            expect(listening.rows[0]!.n).to.equal(2);
        }
        finally {
            await admin.destroy();
        }

        // Keys live in Postgres: one created by the CLI works on every instance.
        const created = await cli(postgresS3Env(databaseUrl, s3), ['keys', 'create', 'two-instances']);
        expect(created.code, created.stderr).to.equal(0);
        const auth = { authorization: `Bearer ${created.stdout.trim()}` };

        // B waits for mail that is not there yet ...
        const waited = fetch(`${b.base}/v1/emails?inbox=two-instances&wait=true&timeout=28`, { headers: auth });
        await waitForOutput(b, '[probe] {"event":"waiting","inbox":"two-instances"}', { stream: 'stderr', timeoutMs: PROCESS_LIMIT_MS });

        // ... and A receives it over SMTP.
        const raw = rawMessage('two-instances-1@example.test');
        const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: a.smtpPort, secure: false, ignoreTLS: true });
        let stored: number;
        try {
            const info = await transport.sendMail({ envelope: { from: 'tester@example.test', to: ['two-instances@example.test'] }, raw });
            // 250 only after the message is stored (records and blobs).
            expect(info.response).to.startWith('250');
            stored = performance.now();
        }
        finally {
            transport.close();
        }

        const woken = await waited;
        const latency = performance.now() - stored;
        expect(woken.status).to.equal(200);
        const wokenPage = await woken.json() as { emails: EmailJson[]; hasMore: boolean };
        // Not the empty page of the timeout: the mail itself.
        expect(wokenPage.emails.map((e) => e.messageId)).to.equal(['two-instances-1@example.test']);
        // B's scheduled checks could not have answered (versions stand still): B's notifier heard A's NOTIFY.
        expect(b.stderr()).to.contain('[probe] {"event":"notified","inbox":"two-instances"}');
        // A figure for the report, not an assertion: speed belongs in bench/.
        console.log(`\n[two instances] B's long-poll answered ${latency.toFixed(1)} ms after A's SMTP 250`);

        // List on B.
        const listed = await fetch(`${b.base}/v1/emails?inbox=two-instances`, { headers: auth });
        expect(listed.status).to.equal(200);
        const page = await listed.json() as { emails: EmailJson[]; hasMore: boolean };
        expect(page.hasMore).to.be.false();
        expect(page.emails).to.have.length(1);
        const [email] = page.emails;
        expect(email).to.equal(wokenPage.emails[0]);
        expect(email.subject).to.equal('Delivered to A, read through B');
        expect(email.body).to.equal('The code is 424242.\n.a line that starts with a dot\n..and one with two');
        expect(email.attachments).to.equal([{
            filename: '0-report.pdf',
            contentType: 'application/pdf',
            size: ATTACHMENT.length,
            url: '/v1/emails/two-instances-1%40example.test/attachments/0-report.pdf',
            contentId: ''
        }]);

        // One email on B.
        const one = await fetch(`${b.base}${email.rawUrl.replace(/\/raw$/, '')}`, { headers: auth });
        expect(one.status).to.equal(200);
        expect(await one.json()).to.equal(email);

        // Downloads on B: a 302 to a presigned URL of the shared bucket, followed without a key.
        const download = async (url: string, contentType: string) => {
            const res = await fetch(`${b.base}${url}`, { headers: auth, redirect: 'manual' });
            expect(res.status).to.equal(302);
            expect(res.headers.get('cache-control')).to.equal('no-store');
            const location = new URL(res.headers.get('location')!);
            expect(location.origin).to.equal(s3.endpoint);
            expect(location.pathname).to.startWith(`/${s3.bucket}/`);
            expect(location.searchParams.get('X-Amz-Expires')).to.equal('900');
            expect(location.searchParams.get('response-content-type')).to.equal(contentType);
            expect(location.searchParams.get('response-content-disposition') ?? '').to.startWith('attachment');
            const followed = await fetch(location);
            expect(followed.status).to.equal(200);
            expect(followed.headers.get('content-type')).to.equal(contentType);
            expect(followed.headers.get('content-disposition') ?? '').to.startWith('attachment');
            return { location, body: Buffer.from(await followed.arrayBuffer()) };
        };

        // The raw message is the DATA as A received it after dot-unstuffing: the bytes we built.
        const rawDownload = await download(email.rawUrl, 'message/rfc822');
        expect(rawDownload.body.equals(raw)).to.be.true();
        const attachmentDownload = await download(email.attachments[0]!.url, 'application/pdf');
        expect(attachmentDownload.body.equals(ATTACHMENT)).to.be.true();

        // Delete on B; A no longer has it.
        const deleted = await fetch(`${b.base}/v1/emails/two-instances-1%40example.test`, { method: 'DELETE', headers: auth });
        expect(deleted.status).to.equal(200);
        expect(await deleted.json()).to.equal({ deleted: true, messageId: 'two-instances-1@example.test' });
        const gone = await fetch(`${a.base}/v1/emails/two-instances-1%40example.test`, { headers: auth });
        expect(gone.status).to.equal(404);
        expect(await gone.json()).to.equal({ error: 'NOT_FOUND' });
        const goneRaw = await fetch(`${a.base}${email.rawUrl}`, { headers: auth, redirect: 'manual' });
        expect(goneRaw.status).to.equal(404);
        // The blobs went too: the links handed out before now find nothing in the bucket.
        for (const { location } of [rawDownload, attachmentDownload]) {
            expect((await fetch(location)).status).to.equal(404);
        }

        // Both stop gracefully.
        const [codeA, codeB] = await Promise.all([stopInstance(a), stopInstance(b)]);
        expect(codeA, a.stderr()).to.equal(0);
        expect(codeB, b.stderr()).to.equal(0);
        expect(a.stdout()).to.contain('inbox-capture: stopped');
        expect(b.stdout()).to.contain('inbox-capture: stopped');
        // Stateless: with Postgres and S3 an instance keeps nothing on its own disk.
        expect(await Fs.readdir(dataDirA)).to.equal([]);
        expect(await Fs.readdir(dataDirB)).to.equal([]);
    });
});
