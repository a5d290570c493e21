import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { runNode } from '../helpers/child-process';
import { startPostgres, type PostgresServer } from '../helpers/postgres';
import { startS3, type S3Fixture } from '../helpers/s3';
import { isolatedEnv, s3Env } from '../helpers/service-env';
import { spawnStandalone, type ListeningService } from '../helpers/standalone-service';
import { tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');
/** Longest wait for a child to start or stop, ms. */
const PROCESS_LIMIT_MS = 30_000;

interface InboxPageJson {
    inboxes: { name: string; count: number; lastReceivedAt: number }[];
    hasMore: boolean;
    nextCursor?: string;
}

/**
 * GET /v1/inboxes against `node examples/standalone.js`: mail in by SMTP, inboxes listed,
 * paged and filtered over real HTTP, deletes followed; the process exits 0 on SIGTERM.
 */
async function session(vars: Record<string, string>): Promise<void> {
    const dataDir = await tempDir('inboxes-e2e');
    const env = isolatedEnv({ INBOX_CAPTURE_DATA_DIR: dataDir, ...vars });
    let service: ListeningService | undefined;
    let transport: Nodemailer.Transporter | undefined;
    try {
        const created = await runNode([BIN, 'keys', 'create', 'inboxes-e2e'], { cwd: ROOT, env });
        expect(created.code, created.stderr).to.equal(0);
        const auth = { authorization: `Bearer ${created.stdout.trim()}` };

        // On free ports, started again if one was taken meanwhile.
        service = await spawnStandalone(env, PROCESS_LIMIT_MS);
        const { base } = service;
        const smtp = Nodemailer.createTransport({ host: '127.0.0.1', port: service.smtpPort, secure: false, ignoreTLS: true });
        transport = smtp;
        const get = async (query: string) => {
            const res = await fetch(`${base}/v1/inboxes?${query}`, { headers: auth });
            expect(res.status, query).to.equal(200);
            return await res.json() as InboxPageJson;
        };

        // One message to three run-scoped inboxes and one elsewhere, then a second to one of them.
        const send = (to: string[], id: string) => smtp.sendMail({
            envelope: { from: 'tester@example.test', to },
            raw: `From: tester@example.test\r\nTo: ${to.join(', ')}\r\nSubject: ${id}\r\nMessage-ID: <${id}@example.test>\r\n\r\nBody\r\n`
        });
        await send(['run1-a@example.test', 'run1-b@example.test', 'run1-c@example.test', 'other@example.test'], 'first');
        await new Promise((resolve) => setTimeout(resolve, 5));
        await send(['run1-b@example.test'], 'second');

        const all = await get('');
        expect(all.inboxes.map((i) => [i.name, i.count])).to.equal([['run1-b', 2], ['other', 1], ['run1-a', 1], ['run1-c', 1]]);
        expect(all.hasMore).to.be.false();
        expect(all.inboxes[0]!.lastReceivedAt).to.be.above(all.inboxes[1]!.lastReceivedAt);

        // Page by page with a prefix, the cursor passed back as given (URL-encoded).
        const first = await get('prefix=run1-&limit=2');
        expect(first.inboxes.map((i) => i.name)).to.equal(['run1-b', 'run1-a']);
        expect(first.hasMore).to.be.true();
        const rest = await get(`prefix=run1-&limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`);
        expect(rest).to.equal({ inboxes: [{ name: 'run1-c', count: 1, lastReceivedAt: all.inboxes[3]!.lastReceivedAt }], hasMore: false });

        expect((await fetch(`${base}/v1/inboxes?limit=0`)).status).to.equal(401);
        const bad = await fetch(`${base}/v1/inboxes?limit=0&prefix=X`, { headers: auth });
        expect(bad.status).to.equal(400);
        expect(await bad.json()).to.equal({ error: 'INVALID_LIMIT' });

        // Deleting the newest email of run1-b makes it fall back; emptying run1-a removes it.
        const newest = await fetch(`${base}/v1/emails/second%40example.test`, { method: 'DELETE', headers: auth });
        expect(newest.status).to.equal(200);
        const emptied = await fetch(`${base}/v1/emails?inbox=run1-a`, { method: 'DELETE', headers: auth });
        expect(await emptied.json()).to.equal({ deleted: 1 });
        const after = await get('prefix=run1-');
        expect(after.inboxes.map((i) => [i.name, i.count])).to.equal([['run1-b', 1], ['run1-c', 1]]);
        expect(after.inboxes[0]!.lastReceivedAt).to.equal(all.inboxes[1]!.lastReceivedAt);

        smtp.close();
        service.child.kill('SIGTERM');
        expect(await service.exited).to.equal(0);
    }
    finally {
        transport?.close();
        if (service && service.child.exitCode === null && service.child.signalCode === null) {
            service.child.kill('SIGKILL');
            await service.exited;
        }

        await Fs.rm(dataDir, { recursive: true, force: true });
    }
}

describe('GET /v1/inboxes end to end (standalone service)', () => {

    it('lists, pages, filters and follows deletes on SQLite', async () => {
        await session({});
    });

    describe('on Postgres + S3', () => {
        let postgres: PostgresServer;
        let s3: S3Fixture;

        before(async () => {
            postgres = await startPostgres();
            s3 = await startS3();
        });

        after(async () => {
            await s3?.stop();
            await postgres?.stop();
        });

        it('lists, pages, filters and follows deletes', async () => {
            await session({ DATABASE_URL: await postgres.createDatabase(), ...s3Env(s3) });
        });
    });
});
