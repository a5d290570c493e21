import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import * as Sqlite3 from 'sqlite3';
import { run } from '../../../adapters/cli/cli';
import { openEmbeddedStores } from '../../../lib/service/embedded-stores';
import { BLOBS_DIRNAME, BLOBS_SQLITE_FILENAME, SQLITE_FILENAME } from '../../../lib/defaults';
import { createInboxCapture, type InboxCapture } from '../../../lib/service/inbox-capture';
import { hashApiKey } from '../../../lib/service/keys';
import { MAX_RECIPIENTS } from '../../../lib/identity/recipients';
import { manyRecipientsMessage } from '../../helpers/many-recipients';
import { readAll } from '../../helpers/streams';
import { runNode, type RunResult } from '../../helpers/child-process';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, beforeEach, afterEach } = exports.lab = Lab.script();

/** The built executable: the CLI is tested as users run it (`npm test` builds first). */
const BIN = Path.join(__dirname, '..', '..', '..', 'dist', 'adapters', 'cli', 'bin.js');

let dataDir: string;

/** The environment of one CLI run: the temp data dir, none of the service's variables unless `env` sets them. */
function cliEnv(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    const merged: NodeJS.ProcessEnv = { ...process.env, INBOX_CAPTURE_DATA_DIR: dataDir, ...env };
    for (const name of ['DATABASE_URL', 'S3_BUCKET', 'PORT', 'HOST', 'SMTP_PORT', 'INBOX_CAPTURE_SIGNING_SECRET']) {
        if (!env || !(name in env)) {
            delete merged[name];
        }
    }

    return merged;
}

/** Runs the built CLI in a fresh process with the temp data dir, feeding `input` on stdin: as users run it. */
function binary(args: string[], options: { input?: string | Buffer; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
    return runNode([BIN, ...args], { cwd: dataDir, env: cliEnv(options.env), input: options.input ?? '' });
}

/** A stream that keeps what is written to it, as text. */
function collector(): { stream: Writable; text: () => string } {
    const chunks: Buffer[] = [];
    const stream = new Writable({
        write(chunk: Buffer, _encoding, callback) {
            chunks.push(Buffer.from(chunk));
            callback();
        }
    });
    return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/**
 * Runs the CLI's run() in this process, with the same arguments, environment, stdin and
 * working directory as binary(): the same code behind the same entry point, without the
 * half second of CPU a node process takes to start and load it. The tests of the
 * executable itself (its exit code, a real stdin pipe, the start-up) use binary().
 */
async function cli(args: string[], options: { input?: string | Buffer; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
    const stdin = new PassThrough();
    stdin.end(Buffer.from(options.input ?? ''));
    const stdout = collector();
    const stderr = collector();
    const code = await run(args, { stdin, stdout: stdout.stream, stderr: stderr.stream, env: cliEnv(options.env), cwd: dataDir });
    return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** The stores the CLI wrote, opened in-process to check what it did. */
async function withCapture<T>(fn: (capture: InboxCapture) => Promise<T>): Promise<T> {
    const capture = createInboxCapture(await openEmbeddedStores({ dataDir }));
    try {
        return await fn(capture);
    }
    finally {
        await capture.close();
    }
}

/** Runs one statement on the SQLite file `filename`, on a connection of its own. */
async function sqlite(filename: string, sql: string, params: unknown[] = []): Promise<void> {
    const db = await new Promise<Sqlite3.Database>((resolve, reject) => {
        const opened = new Sqlite3.Database(filename, (err) => (err ? reject(err) : resolve(opened)));
    });
    try {
        await new Promise<void>((resolve, reject) => db.run(sql, params, (err) => (err ? reject(err) : resolve())));
    }
    finally {
        await new Promise<void>((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
    }
}

/** What a command says on stderr when it had to create the store in `dir`. */
function newStoreNotice(dir: string): string {
    return `inbox-capture: created a new store, ${Path.join(dir, SQLITE_FILENAME)} (there was none; a service started in another directory has its own: run the CLI where the service runs, or give both the same INBOX_CAPTURE_DATA_DIR)\n`;
}

/** The store in the temp data dir, as a service that ran there would have left it. */
async function existingStore(): Promise<void> {
    await withCapture(async () => undefined);
}

/** One line on stderr: what "a clear message" means for a failure. */
function expectOneLine(stderr: string): void {
    expect(stderr).to.match(/^inbox-capture: [^\n]+\n$/);
}

before(async () => {
    try {
        await Fs.access(BIN);
    }
    catch {
        throw new Error(`${BIN} is missing: run npm run build first (npm test does)`);
    }
});

beforeEach(async () => {
    dataDir = await tempDir('cli');
});

afterEach(async () => {
    await Fs.rm(dataDir, { recursive: true, force: true });
});

describe('cli', () => {

    describe('bin', () => {

        it('is an executable node script', async () => {
            const source = await Fs.readFile(BIN, 'utf8');
            expect(source).to.startWith('#!/usr/bin/env node\n');
            const { mode } = await Fs.stat(BIN);
            expect(mode & 0o111).to.equal(0o111);
        });
    });

    describe('keys create', () => {

        it('prints only the new key on stdout, and the key works', async () => {
            await existingStore();
            const result = await binary(['keys', 'create', 'ci']);
            expect(result.code).to.equal(0);
            expect(result.stderr).to.equal('');
            expect(result.stdout).to.match(/^ic_[A-Za-z0-9_-]{43}\n$/);

            const key = result.stdout.trim();
            const info = await withCapture((capture) => capture.verifyKey(key));
            expect(info).to.exist();
            expect(info!.name).to.equal('ci');
        });

        it('says on stderr that it created a store where there was none, with its path, once', async () => {
            // The CLI run in another directory than the service's: its key would be of another store.
            const elsewhere = Path.join(dataDir, 'elsewhere');
            await Fs.mkdir(elsewhere);
            const env = { ...process.env };
            delete env.INBOX_CAPTURE_DATA_DIR;
            const first = await runNode([BIN, 'keys', 'create', 'ci'], { cwd: elsewhere, env });
            expect(first.code).to.equal(0);
            expect(first.stdout).to.match(/^ic_\S+\n$/);
            expect(first.stderr).to.equal(newStoreNotice(Path.join(elsewhere, 'data')));
            const again = await runNode([BIN, 'keys', 'create', 'cd'], { cwd: elsewhere, env });
            expect(again.stderr).to.equal('');
        });

        it('refuses a duplicate name with exit 1 and one line on stderr', async () => {
            expect((await cli(['keys', 'create', 'ci'])).code).to.equal(0);
            const result = await cli(['keys', 'create', 'ci']);
            expect(result.code).to.equal(1);
            expect(result.stdout).to.equal('');
            expectOneLine(result.stderr);
            expect(result.stderr).to.contain('"ci" already exists');
        });

        it('gives a key the scope of --inbox-prefix and --read-only, and none without them', async () => {
            const scoped = (await cli(['keys', 'create', 'agent', '--inbox-prefix', 'agent-', '--read-only'])).stdout.trim();
            const prefixOnly = (await cli(['keys', 'create', 'team', '--inbox-prefix', 'team-a.'])).stdout.trim();
            const readOnly = (await cli(['keys', 'create', 'viewer', '--read-only'])).stdout.trim();
            const full = (await cli(['keys', 'create', 'ci'])).stdout.trim();
            await withCapture(async (capture) => {
                expect(await capture.verifyKey(scoped)).to.include({ name: 'agent', inboxPrefix: 'agent-', readOnly: true });
                expect(await capture.verifyKey(prefixOnly)).to.include({ inboxPrefix: 'team-a.', readOnly: false });
                expect(await capture.verifyKey(readOnly)).to.include({ inboxPrefix: null, readOnly: true });
                expect(await capture.verifyKey(full)).to.include({ inboxPrefix: null, readOnly: false });
            });
        });

        it('refuses an --inbox-prefix that cannot start an inbox name, creating nothing', async () => {
            for (const prefix of ['', 'Agent-', 'a b', 'a/b', 'x'.repeat(65)]) {
                const result = await cli(['keys', 'create', 'agent', `--inbox-prefix=${prefix}`]);
                expect(result.code).to.equal(1);
                expect(result.stdout).to.equal('');
                expectOneLine(result.stderr);
                expect(result.stderr).to.contain('--inbox-prefix');
            }

            expect((await cli(['keys', 'list'])).stdout).to.equal('');
        });

        it('refuses a missing or unprintable name with exit 1', async () => {
            for (const args of [['keys', 'create'], ['keys', 'create', 'a b'], ['keys', 'create', 'a', 'b']]) {
                const result = await cli(args);
                expect(result.code).to.equal(1);
                expect(result.stdout).to.equal('');
                expectOneLine(result.stderr);
            }
        });
    });

    describe('start-up', () => {

        it('loads neither the service (Hapi, SMTP server, OpenAPI) nor the MCP SDK for a command that needs neither', async () => {
            // They are most of what the CLI could load: a second each command, for every script that makes keys.
            const loadedFile = Path.join(dataDir, 'loaded.txt');
            const result = await runNode(['--require', Path.join(__dirname, '..', '..', 'fixtures', 'cli', 'record-packages.js'), BIN, 'keys', 'list'], {
                cwd: dataDir,
                env: { ...process.env, INBOX_CAPTURE_DATA_DIR: dataDir, INBOX_CAPTURE_TEST_LOADED: loadedFile },
                input: ''
            });
            expect(result.code, result.stderr).to.equal(0);
            const loaded = (await Fs.readFile(loadedFile, 'utf8')).split('\n');
            expect(loaded).to.include(['knex', 'sqlite3']);
            expect(loaded).to.not.include(['@hapi/hapi', 'smtp-server', 'hapi-swagger', '@modelcontextprotocol/sdk', 'zod']);
        });

        it('loads no package for help: none of the stores, the parser or the validation', async () => {
            // Help is what a user runs first, and a script's mistake ends in one line: neither opens a store.
            const loadedFile = Path.join(dataDir, 'loaded.txt');
            const result = await runNode(['--require', Path.join(__dirname, '..', '..', 'fixtures', 'cli', 'record-packages.js'), BIN, '--help'], {
                cwd: dataDir,
                env: { ...process.env, INBOX_CAPTURE_DATA_DIR: dataDir, INBOX_CAPTURE_TEST_LOADED: loadedFile },
                input: ''
            });
            expect(result.code, result.stderr).to.equal(0);
            expect(result.stdout).to.startWith('Usage: inbox-capture <command>');
            const loaded = (await Fs.readFile(loadedFile, 'utf8')).split('\n').filter((name) => name !== '');
            expect(loaded).to.equal([]);
        });
    });

    describe('keys list', () => {

        it('prints name, ISO creation time and state, one line a key, never a key or hash', async () => {
            const first = (await cli(['keys', 'create', 'first'])).stdout.trim();
            const second = (await cli(['keys', 'create', 'second'])).stdout.trim();
            expect((await cli(['keys', 'revoke', 'first'])).code).to.equal(0);

            const result = await cli(['keys', 'list']);
            expect(result.code).to.equal(0);
            expect(result.stderr).to.equal('');
            const lines = result.stdout.split('\n');
            expect(lines).to.have.length(3);
            expect(lines[2]).to.equal('');
            expect(lines[0]).to.match(/^first\t\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\trevoked\tall\tread-write$/);
            expect(lines[1]).to.match(/^second\t\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\tactive\tall\tread-write$/);
            for (const secret of [first, second, hashApiKey(first), hashApiKey(second)]) {
                expect(result.stdout).to.not.contain(secret);
            }
        });

        it('shows each key\'s scope: its inbox prefix and whether it is read-only', async () => {
            await cli(['keys', 'create', 'agent', '--inbox-prefix', 'agent-', '--read-only']);
            await cli(['keys', 'create', 'team', '--inbox-prefix', 'team-']);
            await cli(['keys', 'create', 'viewer', '--read-only']);
            const lines = (await cli(['keys', 'list'])).stdout.trim().split('\n').map((line) => line.split('\t'));
            expect(lines.map((fields) => [fields[0], ...fields.slice(3)])).to.equal([
                ['agent', 'prefix=agent-', 'read-only'],
                ['team', 'prefix=team-', 'read-write'],
                ['viewer', 'all', 'read-only']
            ]);
        });

        it('prints nothing when there are no keys', async () => {
            await existingStore();
            const result = await cli(['keys', 'list']);
            expect(result).to.equal({ code: 0, stdout: '', stderr: '' });
        });
    });

    describe('keys revoke', () => {

        it('revokes a key so that it stops working', async () => {
            const key = (await cli(['keys', 'create', 'old'])).stdout.trim();
            const result = await cli(['keys', 'revoke', 'old']);
            expect(result.code).to.equal(0);
            expect(await withCapture((capture) => capture.verifyKey(key))).to.be.null();
        });

        it('fails with exit 1 for an unknown or already revoked name', async () => {
            await existingStore();
            const unknown = await cli(['keys', 'revoke', 'nobody']);
            expect(unknown.code).to.equal(1);
            expectOneLine(unknown.stderr);
            expect(unknown.stderr).to.contain('nobody');

            await cli(['keys', 'create', 'twice']);
            expect((await cli(['keys', 'revoke', 'twice'])).code).to.equal(0);
            expect((await cli(['keys', 'revoke', 'twice'])).code).to.equal(1);
        });
    });

    describe('migrate', () => {

        it('creates the schema in a fresh data dir, saying so once, and can run again', async () => {
            const fresh = Path.join(dataDir, 'nested', 'data');
            for (let i = 0; i < 2; ++i) {
                const result = await cli(['migrate'], { env: { INBOX_CAPTURE_DATA_DIR: fresh } });
                expect(result.code).to.equal(0);
                expect(result.stdout).to.equal('schema is up to date\n');
                expect(result.stderr).to.equal(i === 0 ? newStoreNotice(fresh) : '');
            }

            await Fs.access(Path.join(fresh, 'inbox-capture.sqlite'));
        });
    });

    describe('ingest', () => {

        beforeEach(existingStore);

        const raw = [
            'From: Sender <sender@example.test>',
            'To: header@example.test',
            'Subject: piped',
            'Message-ID: <piped-1@example.test>',
            '',
            'Delivered by a pipe.',
            ''
        ].join('\r\n');

        it('records an auto-relay delivery for each copy whose recipient the allow-list names, for a running service to send', async () => {
            const env = { INBOX_CAPTURE_RELAY_URL: 'smtp://127.0.0.1:1', INBOX_CAPTURE_RELAY_ALLOW: '*@allowed.test', INBOX_CAPTURE_RELAY_AUTO_MATCH: 'tag:release' };
            const result = await cli(['ingest', '--recipient', 'one@allowed.test', '--recipient', 'two@other.test'], { input: raw, env });
            expect(result.code).to.equal(0);
            await withCapture(async (capture) => {
                const [allowed] = (await capture.listEmails({ inbox: 'one', limit: 1 })).records;
                const claimed = await capture.recordStore.claimDeliveries!('relay', ['relay'], 10, 60_000);
                expect(claimed.map((d) => d.messageId)).to.equal([allowed!.messageId]);
            });
        });

        it('stores the message on stdin for each --recipient and prints the stored ids', async () => {
            // Through the executable: the message comes down a real pipe, as from an MTA.
            const result = await binary(['ingest', '--recipient', 'one@example.test', '--recipient=Two@example.test', '--mail-from', 'bounce@example.test'], { input: raw });
            expect(result.code).to.equal(0);
            expect(result.stderr).to.equal('');
            const ids = result.stdout.trim().split('\n');
            expect(ids).to.have.length(2);

            await withCapture(async (capture) => {
                const one = (await capture.listEmails({ inbox: 'one', limit: 10 })).records;
                const two = (await capture.listEmails({ inbox: 'two', limit: 10 })).records;
                expect(one.map((r) => r.subject)).to.equal(['piped']);
                expect(two.map((r) => r.subject)).to.equal(['piped']);
                expect(ids.sort()).to.equal([one[0].messageId, two[0].messageId].sort());
                expect((await capture.listEmails({ inbox: 'header', limit: 10 })).records).to.equal([]);

                const stored = await readAll((await capture.blobStore.get(one[0].rawKey))!);
                expect(stored.toString('utf8')).to.equal(raw);
            });
        });

        it('falls back to the To header without --recipient', async () => {
            const result = await cli(['ingest'], { input: raw });
            expect(result.code).to.equal(0);
            expect(result.stdout).to.equal('piped-1@example.test\n');
            await withCapture(async (capture) => {
                expect((await capture.listEmails({ inbox: 'header', limit: 10 })).records).to.have.length(1);
            });
        });

        it('refuses a message no recipient maps to with exit 1', async () => {
            const result = await cli(['ingest'], { input: 'Subject: to nobody\r\n\r\nbody\r\n' });
            expect(result.code).to.equal(1);
            expect(result.stdout).to.equal('');
            expectOneLine(result.stderr);
            expect(result.stderr).to.contain('NO_RECIPIENT');
        });

        it('refuses a message whose To header names more than 100 inboxes with exit 1, storing nothing', async () => {
            // Without --recipient, 2,000 To addresses used to be 2,000 copies.
            const result = await cli(['ingest'], { input: manyRecipientsMessage(2000) });
            expect(result.code).to.equal(1);
            expect(result.stdout).to.equal('');
            expectOneLine(result.stderr);
            expect(result.stderr).to.contain('TOO_MANY_RECIPIENTS');
            await withCapture(async (capture) => {
                expect((await capture.listEmails({ inbox: '0', limit: 10 })).records).to.equal([]);
            });
        });

        it('refuses more than 100 --recipient inboxes with exit 1', async () => {
            const args = Array.from({ length: MAX_RECIPIENTS + 1 }, (_, i) => `--recipient=e${i}@x`);
            const result = await cli(['ingest', ...args], { input: raw });
            expect(result.code).to.equal(1);
            expect(result.stderr).to.contain('TOO_MANY_RECIPIENTS');
            await withCapture(async (capture) => {
                expect((await capture.listEmails({ inbox: 'e0', limit: 10 })).records).to.equal([]);
            });
        });

        it('exits 75 (EX_TEMPFAIL) when the message cannot be stored, so the MTA retries', async () => {
            // A file where the blob directory belongs, a directory where the blob database
            // belongs, and a records database whose blobs table refuses rows: every blob
            // write fails, small (committed with the records, or put) or large (files).
            expect((await cli(['migrate'])).code).to.equal(0);
            await sqlite(Path.join(dataDir, SQLITE_FILENAME), `CREATE TRIGGER refuse_blobs BEFORE INSERT ON blobs BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
            await Fs.writeFile(Path.join(dataDir, BLOBS_DIRNAME), 'in the way');
            await Fs.rm(Path.join(dataDir, BLOBS_SQLITE_FILENAME), { force: true });
            await Fs.mkdir(Path.join(dataDir, BLOBS_SQLITE_FILENAME));
            // Through the executable: 75 is what the MTA must read as the process's exit status.
            const result = await binary(['ingest', '--recipient', 'later@example.test'], { input: raw });
            expect(result.code).to.equal(75);
            expect(result.stdout).to.equal('');
            expectOneLine(result.stderr);
        });

        it('refuses an unknown option with exit 1 before reading stdin', async () => {
            const result = await cli(['ingest', '--to', 'x@example.test'], { input: raw });
            expect(result.code).to.equal(1);
            expectOneLine(result.stderr);
            expect(result.stderr).to.contain('--to');
        });
    });

    describe('gc', () => {

        it('removes old orphan blobs and keeps referenced ones', async () => {
            expect((await cli(['ingest', '--recipient', 'kept@example.test'], { input: 'Subject: kept\r\n\r\nbody\r\n' })).code).to.equal(0);
            await withCapture(async (capture) => {
                await capture.blobStore.put('orphan0000/raw', Buffer.from('nobody points here'), 'message/rfc822');
            });

            // Both blobs older than the sweep's grace period (younger ones may be in flight).
            const hourAgo = new Date(Date.now() - 60 * 60_000);
            // Large blobs are files (none here unless the default threshold changes): aged on disk.
            const files = await Fs.readdir(Path.join(dataDir, BLOBS_DIRNAME), { recursive: true, withFileTypes: true }).catch(() => []);
            for (const file of files.filter((f) => f.isFile())) {
                await Fs.utimes(Path.join(file.parentPath, file.name), hourAgo, hourAgo);
            }
            // Small blobs are rows: committed with their records (the ingest) or in the blob
            // database (the put): aged in both.
            for (const file of [SQLITE_FILENAME, BLOBS_SQLITE_FILENAME]) {
                await sqlite(Path.join(dataDir, file), 'UPDATE blobs SET modified_at = ?', [hourAgo.getTime()]);
            }

            const result = await cli(['gc']);
            expect(result.code).to.equal(0);
            expect(result.stdout).to.equal('removed 1 orphan blob\n');

            await withCapture(async (capture) => {
                expect(await capture.blobStore.get('orphan0000/raw')).to.be.null();
                const [record] = (await capture.listEmails({ inbox: 'kept', limit: 1 })).records;
                const kept = await capture.blobStore.get(record.rawKey);
                expect(kept).to.exist();
                kept!.destroy();
            });
        });
    });

    describe('serve', () => {

        it('says what it reads and how it stops in its help, without starting', async () => {
            const help = await cli(['help', 'serve']);
            expect(help.code).to.equal(0);
            expect(help.stdout).to.startWith('Usage: inbox-capture serve');
            expect(help.stdout).to.contain('SMTP_PORT');
            expect(help.stdout).to.contain('SIGINT or SIGTERM');
            await expect(Fs.access(Path.join(dataDir, SQLITE_FILENAME))).to.reject();
        });

        it('refuses a bad variable with exit 1 and one line naming it, before opening anything', async () => {
            // Through the executable: in this process, serve would load the whole service first.
            const result = await binary(['serve'], { env: { PORT: 'abc' } });
            expect(result).to.equal({ code: 1, stdout: '', stderr: 'inbox-capture: configuration: PORT / --port must be a port number 0..65535, got "abc"\n' });
            await expect(Fs.access(Path.join(dataDir, SQLITE_FILENAME))).to.reject();
        });

        it('takes no argument', async () => {
            const result = await cli(['serve', 'now']);
            expect(result.code).to.equal(1);
            expectOneLine(result.stderr);
            expect(result.stderr).to.contain('usage: inbox-capture serve');
        });
    });

    describe('help', () => {

        it('lists every command with --help, exit 0', async () => {
            for (const args of [['--help'], ['-h'], ['help']]) {
                const result = await cli(args);
                expect(result.code).to.equal(0);
                expect(result.stderr).to.equal('');
                expect(result.stdout).to.startWith('Usage: inbox-capture <command>');
                for (const command of ['serve', 'keys create', 'keys list', 'keys revoke', 'migrate', 'ingest', 'gc', 'prune', 'mcp']) {
                    expect(result.stdout).to.contain(`  ${command}`);
                }
            }
        });

        it('shows a command\'s help with --help after it or help before it, without running it', async () => {
            const after = await cli(['keys', 'create', 'x', '--help']);
            expect(after.code).to.equal(0);
            expect(after.stdout).to.startWith('Usage: inbox-capture keys create <name>');
            expect((await cli(['keys', 'list'])).stdout).to.equal('');

            const before = await cli(['help', 'ingest']);
            expect(before.code).to.equal(0);
            expect(before.stdout).to.startWith('Usage: inbox-capture ingest');
            expect(before.stdout).to.contain('75');

            const group = await cli(['keys', '--help']);
            expect(group.code).to.equal(0);
            expect(group.stdout).to.contain('keys revoke <name>');
        });

        it('prints the package version', async () => {
            const pkg = JSON.parse(await Fs.readFile(Path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
            const result = await binary(['--version']);
            expect(result).to.equal({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
        });
    });

    describe('mcp', () => {

        it('refuses to start without a service URL or a key, or with a bad mail domain, exit 1 and one line on stderr', async () => {
            const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
                [['mcp'], { INBOX_CAPTURE_API_KEY: 'ic_x' }, '--url'],
                [['mcp', '--url', 'ftp://x'], { INBOX_CAPTURE_API_KEY: 'ic_x' }, '--url'],
                [['mcp', '--url', 'http://127.0.0.1:9'], {}, '--key'],
                [['mcp'], { INBOX_CAPTURE_URL: 'http://127.0.0.1:9' }, '--key'],
                [['mcp', '--mail-domain', 'a b'], { INBOX_CAPTURE_URL: 'http://127.0.0.1:9', INBOX_CAPTURE_API_KEY: 'ic_x' }, '--mail-domain'],
                [['mcp'], { INBOX_CAPTURE_URL: 'http://127.0.0.1:9', INBOX_CAPTURE_API_KEY: 'ic_x', INBOX_CAPTURE_MAIL_DOMAIN: 'x@y' }, 'INBOX_CAPTURE_MAIL_DOMAIN']
            ];
            for (const [args, env, named] of cases) {
                const result = await cli(args, { env: { INBOX_CAPTURE_URL: '', INBOX_CAPTURE_API_KEY: '', INBOX_CAPTURE_MAIL_DOMAIN: '', ...env } });
                expect(result.code, args.join(' ')).to.equal(1);
                expect(result.stdout).to.equal('');
                expectOneLine(result.stderr);
                expect(result.stderr).to.contain(named);
            }
        });
    });

    describe('wrong use', () => {

        it('fails with exit 1 and one line on stderr', async () => {
            for (const args of [[], ['frobnicate'], ['keys'], ['keys', 'delete', 'x'], ['help', 'frobnicate'], ['keys', 'list', 'extra'], ['gc', '--force']]) {
                const result = await cli(args);
                expect(result.code, args.join(' ')).to.equal(1);
                expect(result.stdout, args.join(' ')).to.equal('');
                expectOneLine(result.stderr);
            }
        });

        it('reports a bad environment variable by name with exit 1', async () => {
            const result = await cli(['keys', 'list'], { env: { PORT: 'eighty' } });
            expect(result.code).to.equal(1);
            expectOneLine(result.stderr);
            expect(result.stderr).to.contain('PORT');

            const db = await cli(['keys', 'list'], { env: { DATABASE_URL: 'mysql://user:hunter2@db/x' } });
            expect(db.code).to.equal(1);
            expect(db.stderr).to.contain('DATABASE_URL');
            expect(db.stderr).to.not.contain('hunter2');
        });
    });
});
