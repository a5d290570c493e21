import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { openEmbeddedStores } from '../../lib/service/embedded-stores';
import { BLOBS_SQLITE_FILENAME } from '../../lib/defaults';
import { createInboxCapture } from '../../lib/service/inbox-capture';
import { openSqliteKnex } from '../../lib/sqlite/knex';
import { runNode, stopGracefully } from '../helpers/child-process';
import { buildMail } from '../helpers/mail';
import { startPostgres } from '../helpers/postgres';
import { startS3 } from '../helpers/s3';
import { isolatedEnv, postgresS3Env } from '../helpers/service-env';
import { spawnStandalone, type ListeningService } from '../helpers/standalone-service';
import { tempDir } from '../helpers/temp-dir';
import { waitUntil } from '../helpers/wait-until';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const STANDALONE = Path.join(ROOT, 'examples', 'standalone.js');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');
/** Longest wait for a process to start, answer or stop, ms: a hang, not a speed claim. */
const PROCESS_LIMIT_MS = 30_000;
const DAY = 86_400_000;

type Service = ListeningService;

const startService = (env: NodeJS.ProcessEnv) => spawnStandalone(env, PROCESS_LIMIT_MS);

/** SIGTERM, then the exit code (or a kill after the limit). */
async function stopService(service: Service): Promise<number | null> {
    return stopGracefully(service, PROCESS_LIMIT_MS);
}

/** Sends one message over real SMTP to `inbox`, with `subject`. */
async function send(service: Service, inbox: string, subject: string): Promise<void> {
    const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: service.smtpPort, secure: false, ignoreTLS: true });
    try {
        const info = await transport.sendMail({ envelope: { from: 'tester@example.test', to: [`${inbox}@example.test`] }, raw: buildMail({ to: `${inbox}@example.test`, subject }) });
        expect(info.response).to.startWith('250');
    }
    finally {
        transport.close();
    }
}

/** GET `path` with the key; the JSON body. */
async function getJson<T>(service: Service, key: string, path: string): Promise<T> {
    const res = await fetch(`${service.base}${path}`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).to.equal(200);
    return await res.json() as T;
}

/** The subjects GET /v1/emails lists for `inbox`, newest first. */
async function subjects(service: Service, key: string, inbox: string): Promise<string[]> {
    return (await getJson<{ emails: { subject: string }[] }>(service, key, `/v1/emails?inbox=${inbox}`)).emails.map((e) => e.subject);
}

describe('retention end to end (the standalone service, real SMTP)', () => {

    it('on SQLite: sweeps by age and by count every second, and the orphan blobs of a crash at start', async () => {
        const dataDir = await tempDir('retention-e2e');
        let service: Service | undefined;
        try {
            // Before the service starts: an email two days old, and an orphan blob an hour old (what a crash leaves).
            const seeded = createInboxCapture(await openEmbeddedStores({ dataDir }));
            let key: string;
            try {
                await seeded.recordStore.migrate();
                await seeded.ingestRawEmail(buildMail({ to: 'aged@example.test', subject: 'two days old' }), { receivedAt: Date.now() - 2 * DAY });
                key = await seeded.createKey('e2e');
                await seeded.blobStore.put('orphan-e2e/raw.eml', Buffer.from('nobody references me'), 'message/rfc822');
            }
            finally {
                await seeded.close();
            }

            const blobs = openSqliteKnex(Path.join(dataDir, BLOBS_SQLITE_FILENAME));
            try {
                expect(await blobs('blobs').where('key', 'orphan-e2e/raw.eml').update({ modified_at: Date.now() - 3_600_000 })).to.equal(1);
                service = await startService(isolatedEnv({
                    INBOX_CAPTURE_DATA_DIR: dataDir,
                    INBOX_CAPTURE_RETENTION_MAX_AGE: '1d',
                    INBOX_CAPTURE_RETENTION_MAX_PER_INBOX: '2',
                    INBOX_CAPTURE_RETENTION_INTERVAL: '1s'
                }));
                const live = service;
                await waitUntil('the two-day-old email is swept', async () => (await subjects(live, key, 'aged')).length === 0);
                await waitUntil('the orphan blob is swept', async () => (await blobs('blobs').where('key', 'orphan-e2e/raw.eml')).length === 0);
            }
            finally {
                await blobs.destroy();
            }

            for (let n = 0; n < 5; ++n) {
                await send(service, 'kept', `message ${n}`);
            }

            const live = service;
            await waitUntil('the inbox is down to its newest two', async () => (await subjects(live, key, 'kept')).length === 2);
            expect(await subjects(service, key, 'kept')).to.equal(['message 4', 'message 3']);
            const inboxes = await getJson<{ inboxes: { name: string; count: number }[] }>(service, key, '/v1/inboxes');
            expect(inboxes.inboxes.map((i) => [i.name, i.count])).to.equal([['kept', 2]]);

            expect(await stopService(service)).to.equal(0);
            expect(service.stderr()).to.not.include('failed');
        }
        finally {
            if (service) {
                await stopService(service);
            }

            await Fs.rm(dataDir, { recursive: true, force: true });
        }
    });

    it('refuses to start on a bad retention variable, exit 1 with a message naming it', async () => {
        const dataDir = await tempDir('retention-e2e-bad');
        try {
            const result = await runNode([STANDALONE], { cwd: ROOT, env: isolatedEnv({ INBOX_CAPTURE_DATA_DIR: dataDir, PORT: '0', SMTP_PORT: '0', INBOX_CAPTURE_RETENTION_MAX_PER_INBOX: 'lots' }) });
            expect(result.code).to.equal(1);
            expect(result.stderr).to.equal('inbox-capture: configuration: INBOX_CAPTURE_RETENTION_MAX_PER_INBOX must be a whole number of emails from 1 to 1000000000, got "lots"\n');
        }
        finally {
            await Fs.rm(dataDir, { recursive: true, force: true });
        }
    });

    it('on Postgres + S3: two instances sweeping the same inbox every second keep exactly its newest three', async () => {
        const postgres = await startPostgres();
        const s3 = await startS3();
        const dataDir = await tempDir('retention-e2e-pg');
        const services: Service[] = [];
        try {
            const env = postgresS3Env(await postgres.createDatabase(), s3, {
                INBOX_CAPTURE_DATA_DIR: dataDir,
                INBOX_CAPTURE_RETENTION_MAX_PER_INBOX: '3',
                INBOX_CAPTURE_RETENTION_INTERVAL: '1s'
            });
            services.push(await startService(env));
            services.push(await startService(env));
            const [a, b] = services as [Service, Service];
            const created = await runNode([BIN, 'keys', 'create', 'e2e'], { cwd: ROOT, env });
            expect(created.code).to.equal(0);
            const key = created.stdout.trim();

            for (let n = 0; n < 12; ++n) {
                await send(n % 2 === 0 ? a : b, 'shared', `message ${n}`);
            }

            await waitUntil('the inbox is down to its newest three', async () => (await subjects(b, key, 'shared')).length === 3);
            expect(await subjects(a, key, 'shared')).to.equal(['message 11', 'message 10', 'message 9']);
            const inboxes = await getJson<{ inboxes: { name: string; count: number }[] }>(a, key, '/v1/inboxes');
            expect(inboxes.inboxes.map((i) => [i.name, i.count])).to.equal([['shared', 3]]);

            for (const service of services) {
                expect(await stopService(service)).to.equal(0);
                expect(service.stderr()).to.not.include('retention pass failed');
            }
        }
        finally {
            await Promise.all(services.map(stopService));
            await Promise.all([postgres.stop(), s3.stop()]);
            await Fs.rm(dataDir, { recursive: true, force: true });
        }
    });
});
