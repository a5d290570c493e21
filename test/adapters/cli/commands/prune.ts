import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { createS3BlobStore } from '../../../../lib/blob-store/s3-blob-store';
import { createInboxCapture, type InboxCapture } from '../../../../lib/service/inbox-capture';
import { createKnexRecordStore } from '../../../../lib/record-store/knex-record-store';
import { openPostgresKnex } from '../../../../lib/record-store/postgres/postgres-knex';
import { blobKeys } from '../../../helpers/blob-contents';
import { runNode, type RunResult } from '../../../helpers/child-process';
import { withEmbeddedCapture } from '../../../helpers/embedded-capture';
import { buildMail } from '../../../helpers/mail';
import { startPostgres } from '../../../helpers/postgres';
import { startS3 } from '../../../helpers/s3';
import { isolatedEnv, postgresS3Env } from '../../../helpers/service-env';
import { tempDir } from '../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, beforeEach, afterEach } = exports.lab = Lab.script();

/** The built executable: prune is tested as cron runs it (`npm test` builds first). */
const BIN = Path.join(__dirname, '..', '..', '..', '..', 'dist', 'adapters', 'cli', 'bin.js');
const DAY = 86_400_000;

/** Stores `count` emails (with an attachment each) in `inbox`, received `ageMs` ago, 1 ms apart. */
async function ingest(capture: InboxCapture, inbox: string, count: number, ageMs: number): Promise<void> {
    for (let n = 0; n < count; ++n) {
        const raw = buildMail({ to: `${inbox}@test.example`, subject: `${inbox} ${n}`, attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'a' }] });
        await capture.ingestRawEmail(raw, { receivedAt: Date.now() - ageMs + n });
    }
}

/** How many emails each inbox holds, by name. */
async function counts(capture: InboxCapture): Promise<Record<string, number>> {
    const page = await capture.listInboxes({ limit: 100 });
    return Object.fromEntries(page.inboxes.map((i) => [i.name, i.count]));
}

describe('prune (the CLI command, as a child process)', () => {

    describe('on SQLite and files', () => {
        let dataDir: string;

        const cli = (args: string[], env: Record<string, string> = {}): Promise<RunResult> =>
            runNode([BIN, ...args], { cwd: dataDir, env: isolatedEnv({ INBOX_CAPTURE_DATA_DIR: dataDir, ...env }) });

        const withCapture = <T>(fn: (capture: InboxCapture) => Promise<T>): Promise<T> => withEmbeddedCapture(dataDir, fn);

        beforeEach(async () => {
            dataDir = await tempDir('cli-prune');
        });

        afterEach(async () => {
            await Fs.rm(dataDir, { recursive: true, force: true });
        });

        it('refuses a bad flag or variable with exit 1 and a message that names it', async () => {
            expect(await cli(['prune', '--max-age', '7 days'])).to.equal({
                code: 1,
                stdout: '',
                stderr: 'inbox-capture: prune: --max-age must be a duration such as 90s, 30m, 12h, 7d, or a number of milliseconds, from 1s to 36500d, got "7 days"\n'
            });
            expect((await cli(['prune', '--max-per-inbox', '0'])).stderr).to.equal('inbox-capture: prune: --max-per-inbox must be a whole number of emails from 1 to 1000000000, got "0"\n');
            expect((await cli(['prune'], { INBOX_CAPTURE_RETENTION_MAX_AGE: 'soon' })).stderr).to.startWith('inbox-capture: configuration: INBOX_CAPTURE_RETENTION_MAX_AGE must be a duration');
            expect((await cli(['prune', 'extra'])).code).to.equal(1);
            expect((await cli(['prune', '--max-agee', '1d'])).stderr).to.include('Unknown option \'--max-agee\'');
        });

        it('is listed in --help and has help of its own', async () => {
            expect((await cli(['--help'])).stdout).to.contain('  prune [--max-age D] [--max-per-inbox N]');
            const help = await cli(['help', 'prune']);
            expect(help.code).to.equal(0);
            expect(help.stdout).to.startWith('Usage: inbox-capture prune [--max-age D] [--max-per-inbox N]\n');
        });

        // Only these tests read or delete mail: the others get an empty data directory.
        describe('with mail in three inboxes', () => {

            beforeEach(async () => {
                await withCapture(async (capture) => {
                    await ingest(capture, 'old', 3, 2 * DAY);
                    await ingest(capture, 'mixed', 2, 2 * DAY);
                    await ingest(capture, 'mixed', 4, 0);
                });
            });

            it('--max-age deletes the older emails and their files, printing only the number', async () => {
                expect(await cli(['prune', '--max-age', '1d'])).to.equal({ code: 0, stdout: '5\n', stderr: '' });
                await withCapture(async (capture) => {
                    expect(await counts(capture)).to.equal({ mixed: 4 });
                    // One raw message and one attachment per email left, nothing of the deleted ones.
                    const records = (await capture.listEmails({ inbox: 'mixed', limit: 10 })).records;
                    expect(await blobKeys(capture.blobStore)).to.equal(records.flatMap((r) => [r.rawKey, ...r.attachments.map((a) => a.blobKey)]).sort());
                });
                expect(await cli(['prune', '--max-age', '1d'])).to.equal({ code: 0, stdout: '0\n', stderr: '' });
            });

            it('--max-per-inbox keeps the newest N of each inbox', async () => {
                expect(await cli(['prune', '--max-per-inbox', '2'])).to.equal({ code: 0, stdout: '5\n', stderr: '' });
                await withCapture(async (capture) => {
                    expect(await counts(capture)).to.equal({ mixed: 2, old: 2 });
                    expect((await capture.listEmails({ inbox: 'mixed', limit: 10 })).records.map((r) => r.subject)).to.equal(['mixed 3', 'mixed 2']);
                });
            });

            it('applies the environment\'s rules without flags, and only the flags with one', async () => {
                const env = { INBOX_CAPTURE_RETENTION_MAX_AGE: '1d', INBOX_CAPTURE_RETENTION_MAX_PER_INBOX: '3' };
                expect(await cli(['prune', '--max-per-inbox', '6'], env)).to.equal({ code: 0, stdout: '0\n', stderr: '' });
                expect(await cli(['prune'], env)).to.equal({ code: 0, stdout: '6\n', stderr: '' });
                await withCapture(async (capture) => {
                    expect(await counts(capture)).to.equal({ mixed: 3 });
                });
            });

            it('is a usage error (exit 1, one line on stderr) without any rule, and deletes nothing', async () => {
                const result = await cli(['prune']);
                expect(result).to.equal({
                    code: 1,
                    stdout: '',
                    stderr: 'inbox-capture: usage: prune needs --max-age D, --max-per-inbox N, or INBOX_CAPTURE_RETENTION_MAX_AGE / INBOX_CAPTURE_RETENTION_MAX_PER_INBOX (see inbox-capture help prune)\n'
                });
                expect((await cli(['prune'], { INBOX_CAPTURE_RETENTION_INTERVAL: '1s' })).stderr).to.startWith('inbox-capture: configuration: INBOX_CAPTURE_RETENTION_INTERVAL is set, but neither');
                await withCapture(async (capture) => {
                    expect(await counts(capture)).to.equal({ mixed: 6, old: 3 });
                });
            });
        });
    });

    describe('on Postgres and S3', () => {

        it('prunes the shared stores, printing only the number', async () => {
            const postgres = await startPostgres();
            const s3 = await startS3();
            const dir = await tempDir('cli-prune-pg');
            try {
                const url = await postgres.createDatabase();
                const capture = createInboxCapture({
                    recordStore: createKnexRecordStore({ knex: openPostgresKnex(url), destroyKnexOnClose: true }),
                    blobStore: createS3BlobStore({ client: s3.createClient(), bucket: s3.bucket })
                });
                try {
                    await capture.recordStore.migrate();
                    await ingest(capture, 'pg', 4, 2 * DAY);
                    await ingest(capture, 'pg', 3, 0);
                    const result = await runNode([BIN, 'prune', '--max-age', '36h', '--max-per-inbox', '2'], { cwd: dir, env: postgresS3Env(url, s3, { INBOX_CAPTURE_DATA_DIR: dir }) });
                    // stderr may carry the AWS SDK's warning about the Node version: stdout is the contract.
                    expect([result.code, result.stdout]).to.equal([0, '5\n']);
                    const left = (await capture.listEmails({ inbox: 'pg', limit: 10 })).records;
                    expect(left.map((r) => r.subject)).to.equal(['pg 2', 'pg 1']);
                    expect(await blobKeys(capture.blobStore)).to.equal(left.flatMap((r) => [r.rawKey, ...r.attachments.map((a) => a.blobKey)]).sort());
                }
                finally {
                    await capture.close();
                }
            }
            finally {
                await Promise.all([postgres.stop(), s3.stop()]);
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });
    });
});
