import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { chromiumForChild } from '../helpers/browser';
import { run, runNode, spawnCommand, waitForOutput, type Spawned } from '../helpers/child-process';
import { freePort, retryWhilePortTaken } from '../helpers/net';
import { specsOf, type PlaywrightReport } from '../helpers/playwright-report';
import { npm, npmUserEnv as userEnv, packedTarballs, tarballFiles } from '../helpers/packed';
import { removeDir, tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');

/** Longest wait for `npm install` of the tarballs: seconds from npm's cache, a minute or two when sqlite3 compiles. */
const INSTALL_TIMEOUT_MS = 240_000;

/** `npm install` flags of every install here: npm's cache first, no audit or funding requests, errors only. */
const INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

/** What a test author's script does with the client alone: wait for the mail, read it and its raw message. */
const CLIENT_READ = `
    const client = new InboxCaptureClient({ baseUrl: process.env.INBOX_CAPTURE_URL, apiKey: process.env.INBOX_CAPTURE_API_KEY });
    const email = await client.waitForEmail({ inbox: 'packed', subject: 'from the tarball', timeoutMs: 10_000 });
    const raw = new TextDecoder().decode(await client.downloadRaw(email.messageId));
    let error;
    try {
        await client.getEmail('missing@example.test');
    }
    catch (err) {
        error = { typed: err instanceof InboxCaptureApiError, code: err.code };
    }

    console.log(JSON.stringify({ subject: email.subject, body: email.body, raw: raw.includes('Subject: from the tarball'), error }));
`;
const CLIENT_CJS = `'use strict';\nconst { InboxCaptureClient, InboxCaptureApiError } = require('inbox-capture-client');\n(async () => {${CLIENT_READ}})().catch((err) => { console.error(err); process.exit(1); });\n`;
const CLIENT_ESM = `import { InboxCaptureClient, InboxCaptureApiError } from 'inbox-capture-client';\n${CLIENT_READ}`;

/** The version of `name` installed in this checkout: in npm's cache already, so installing it again costs no download. */
async function installedVersion(name: string): Promise<string> {
    return (JSON.parse(await Fs.readFile(Path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * This checkout's compiled sqlite3 binding as the prebuilt tarball sqlite3's installer
 * (prebuild-install) looks for in a local prebuilds directory. It is what the installer
 * would otherwise download from GitHub, or compile for a minute when it cannot reach it;
 * with a sqlite3 version or platform it does not name, the installer does one of those.
 */
async function localSqlitePrebuild(dir: string): Promise<Record<string, string>> {
    const sqlite = Path.join(ROOT, 'node_modules', 'sqlite3');
    const pkg = JSON.parse(await Fs.readFile(Path.join(sqlite, 'package.json'), 'utf8')) as { version: string; binary: { napi_versions: number[] } };
    const napi = Math.max(...pkg.binary.napi_versions.filter((v) => v <= Number(process.versions.napi)));
    const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
    const libc = process.platform === 'linux' && !glibc ? 'musl' : '';
    const name = `sqlite3-v${pkg.version}-napi-v${napi}-${process.platform}${libc}-${process.arch}.tar.gz`;
    await Fs.mkdir(dir, { recursive: true });
    const packed = await run('tar', ['czf', Path.join(dir, name), 'build/Release/node_sqlite3.node'], { cwd: sqlite, env: process.env });
    expect(packed.code, packed.stderr).to.equal(0);
    return { npm_config_sqlite3_local_prebuilds: dir };
}

describe('the packed packages, installed in empty directories', () => {

    let work: string;
    let app: string;
    let clientApp: string;
    let serverTarball: string;
    let clientTarball: string;
    let service: Spawned | undefined;
    let env: NodeJS.ProcessEnv;
    let base: string;
    let smtpPort: number;
    let key: string;

    before({ timeout: INSTALL_TIMEOUT_MS + 60_000 }, async () => {
        // What `npm pack` ships is dist/ as built (npm test builds first).
        for (const built of [Path.join(ROOT, 'dist', 'adapters', 'standalone', 'serve.js'), Path.join(ROOT, 'packages', 'client', 'dist', 'cjs', 'playwright.js')]) {
            await Fs.access(built).catch(() => {
                throw new Error(`${built} is not built: run \`npm run build\` first`);
            });
        }

        work = await tempDir('packed');
        // The run's one pack of each (shared with the other tests that read the tarballs).
        ({ server: serverTarball, client: clientTarball } = await packedTarballs());

        // One install of each per run: empty directories, no package.json, from npm's cache where it can.
        app = Path.join(work, 'app');
        await Fs.mkdir(app);
        await npm(['install', serverTarball, ...INSTALL_FLAGS], app, userEnv(await localSqlitePrebuild(Path.join(work, 'prebuilds'))));
        clientApp = Path.join(work, 'client-app');
        await Fs.mkdir(clientApp);
        await npm(['install', '-D', clientTarball, ...INSTALL_FLAGS], clientApp, userEnv());
    });

    after(async () => {
        if (service) {
            service.kill('SIGKILL');
            await service.exited;
        }

        if (work) {
            await removeDir(work);
        }
    });

    it('ship their LICENSE (MIT), and the client\'s tarball nothing but its build', async () => {
        const license = await Fs.readFile(Path.join(ROOT, 'LICENSE'), 'utf8');
        expect(license).to.startWith('MIT License\n');
        expect(await tarballFiles(serverTarball)).to.include(['LICENSE', 'package.json', 'dist/adapters/cli/bin.js']);
        const clientFiles = await tarballFiles(clientTarball);
        expect(clientFiles).to.include(['LICENSE', 'README.md', 'package.json', 'dist/cjs/index.js', 'dist/esm/index.js', 'dist/esm/playwright.js']);
        expect(clientFiles.filter((f) => !/^(LICENSE|README\.md|package\.json|dist\/(cjs|esm)\/[\w-]+\.(js|d\.ts|json))$/.test(f))).to.equal([]);
        expect(await Fs.readFile(Path.join(clientApp, 'node_modules', 'inbox-capture-client', 'LICENSE'), 'utf8')).to.equal(license);
    });

    it('ship the docs the README links to, and run no script when installed', async () => {
        expect(await tarballFiles(serverTarball)).to.include(['README.md', 'docs/api.md', 'docs/operations.md', 'bench/README.md', 'CHANGELOG.md']);
        for (const dir of [Path.join(app, 'node_modules', 'inbox-capture'), Path.join(clientApp, 'node_modules', 'inbox-capture-client')]) {
            const { scripts } = JSON.parse(await Fs.readFile(Path.join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
            // prepare runs where npm installs from git or a directory; the others everywhere.
            expect(Object.keys(scripts ?? {}).filter((name) => /^(pre|post)?(install|prepare)$/.test(name)), dir).to.equal([]);
        }
    });

    it('install the server without the Postgres and S3 drivers, and name the one to install when asked for it', { timeout: 60_000 }, async () => {
        const installed = await Fs.readdir(Path.join(app, 'node_modules'));
        expect(installed).to.include(['inbox-capture', 'knex', 'sqlite3']);
        // One by one: not.include() of a list passes when any one of them is missing.
        expect(installed).to.not.include('pg');
        expect(installed).to.not.include('@aws-sdk');
        const postgres = await run('npx', ['inbox-capture', 'serve', '--port', '0', '--smtp-port', '0'], { cwd: app, env: userEnv({ DATABASE_URL: 'postgres://user:secret@127.0.0.1:1/none' }) });
        expect(postgres).to.include({ code: 1, stdout: '', stderr: 'inbox-capture: cannot start: DATABASE_URL is a Postgres URL: install the "pg" package (npm install pg)\n' });
        const s3 = await run('npx', ['inbox-capture', 'keys', 'list'], { cwd: app, env: userEnv({ S3_BUCKET: 'mail' }) });
        expect(s3).to.include({ code: 1, stdout: '', stderr: 'inbox-capture: configuration: S3_BUCKET selects the S3 blob store: install the "@aws-sdk/client-s3" and "@aws-sdk/s3-request-presigner" packages (npm install @aws-sdk/client-s3 @aws-sdk/s3-request-presigner)\n' });
    });

    it('install the client alone with no dependency and no install script', async () => {
        expect((await Fs.readdir(Path.join(clientApp, 'node_modules'))).sort()).to.equal(['.package-lock.json', 'inbox-capture-client']);
        const lock = JSON.parse(await Fs.readFile(Path.join(clientApp, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean; dependencies?: object }> };
        expect(Object.keys(lock.packages).filter((p) => p !== '')).to.equal(['node_modules/inbox-capture-client']);
        expect(Object.values(lock.packages).filter((p) => p.hasInstallScript)).to.equal([]);
        expect(lock.packages['node_modules/inbox-capture-client'].dependencies).to.not.exist();
    });

    it('run `npx inbox-capture serve`: a key from `npx inbox-capture keys create` works, SMTP mail is listed, the UI and docs are served', { timeout: 120_000 }, async () => {
        // Nothing but the installed package: no package.json of ours, no dist/ of the checkout.
        expect(await Fs.readdir(app)).to.only.include(['node_modules', 'package.json', 'package-lock.json']);
        // On fresh ports, started again if one was taken meanwhile.
        let port: number;
        ({ service, port, smtpPort, env } = await retryWhilePortTaken(async () => {
            const port = await freePort();
            const smtpPort = await freePort();
            // No INBOX_CAPTURE_DATA_DIR: the default ./data, in the user's directory.
            const env = userEnv({ HOST: '127.0.0.1', PORT: String(port), SMTP_PORT: String(smtpPort) });
            const spawned = spawnCommand('npx', ['inbox-capture', 'serve'], { cwd: app, env, group: true });
            try {
                await waitForOutput(spawned, /create an API key: [^\n]*\n/, { timeoutMs: 60_000 });
                return { service: spawned, port, smtpPort, env };
            }
            catch (err) {
                // npx and the service it started (its process group), then the ./data the start may have made.
                spawned.kill('SIGKILL');
                await spawned.exited;
                await removeDir(Path.join(app, 'data'));
                throw err;
            }
        }));
        expect(service.stdout()).to.contain(`inbox-capture listening: HTTP on http://127.0.0.1:${port} (docs: http://127.0.0.1:${port}/docs), SMTP on 127.0.0.1:${smtpPort} (no AUTH, no TLS)`);
        expect(service.stdout()).to.contain(`data: records in ${Path.join(app, 'data', 'inbox-capture.sqlite')}`);

        const created = await run('npx', ['inbox-capture', 'keys', 'create', 'packed'], { cwd: app, env });
        expect(created.code, created.stderr).to.equal(0);
        // The store was there: nothing to say about a new one.
        expect(created.stderr).to.equal('');
        key = created.stdout.trim();
        expect(key).to.match(/^\S{20,}$/);

        const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
        try {
            await transport.sendMail({ from: 'app@example.test', to: 'packed@example.test', subject: 'from the tarball', text: 'Hello.' });
        }
        finally {
            transport.close();
        }

        base = `http://127.0.0.1:${port}`;
        const list = await fetch(`${base}/v1/emails?inbox=packed`, { headers: { authorization: `Bearer ${key}` } });
        expect(list.status).to.equal(200);
        const page = await list.json() as { emails: Array<{ subject: string }> };
        expect(page.emails.map((e) => e.subject)).to.equal(['from the tarball']);
        expect((await fetch(`${base}/v1/emails?inbox=packed`, { headers: { authorization: 'Bearer not-a-key' } })).status).to.equal(401);

        // The web interface and the API docs ship in the package.
        const ui = await fetch(`${base}/ui/`);
        expect(ui.status).to.equal(200);
        expect(await ui.text()).to.contain('<html');
        expect((await fetch(`${base}/ui/js/web-ui/main.js`)).status).to.equal(200);
        expect((await fetch(`${base}/docs`)).status).to.equal(200);
        expect((await fetch(`${base}/openapi.json`)).status).to.equal(200);
    });

    it('read that mail with the client installed alone, from require and from import', { timeout: 60_000 }, async () => {
        expect(key, 'the service of the test before').to.exist();
        await Fs.writeFile(Path.join(clientApp, 'read.cjs'), CLIENT_CJS);
        await Fs.writeFile(Path.join(clientApp, 'read.mjs'), CLIENT_ESM);
        const clientEnv = userEnv({ INBOX_CAPTURE_URL: base, INBOX_CAPTURE_API_KEY: key });
        for (const file of ['read.cjs', 'read.mjs']) {
            const result = await runNode([file], { cwd: clientApp, env: clientEnv });
            expect(result.code, `${file}: ${result.stderr}`).to.equal(0);
            expect(JSON.parse(result.stdout), file).to.equal({ subject: 'from the tarball', body: 'Hello.\n', raw: true, error: { typed: true, code: 'NOT_FOUND' } });
        }
    });

    it('run the README\'s Playwright example with the fixture, once @playwright/test is installed beside the client', { timeout: INSTALL_TIMEOUT_MS }, async () => {
        expect(key, 'the service of the test before').to.exist();
        // As a user adds it: @playwright/test (the version this checkout has, so npm's cache
        // holds it) and nodemailer for the stand-in app.
        await npm(['install', '-D', `@playwright/test@${await installedVersion('@playwright/test')}`, `nodemailer@${await installedVersion('nodemailer')}`, ...INSTALL_FLAGS], clientApp, userEnv());
        for (const file of ['signup.playwright.spec.js', 'demo-app.js', 'playwright.config.js']) {
            await Fs.copyFile(Path.join(ROOT, 'examples', file), Path.join(clientApp, file));
        }

        const chromium = await chromiumForChild();
        const reportFile = Path.join(work, 'playwright-report.json');
        const result = await run('npx', ['playwright', 'test', '--reporter=list,json'], {
            cwd: clientApp,
            env: userEnv({
                ...chromium.env,
                CHROMIUM_PATH: chromium.executablePath,
                INBOX_CAPTURE_URL: base,
                INBOX_CAPTURE_API_KEY: key,
                SMTP_PORT: String(smtpPort),
                PLAYWRIGHT_JSON_OUTPUT_NAME: reportFile,
                FORCE_COLOR: '0'
            })
        });
        expect(result.code, `${result.stdout}\n${result.stderr}`).to.equal(0);
        const report = JSON.parse(await Fs.readFile(reportFile, 'utf8')) as PlaywrightReport;
        expect(report.stats).to.include({ expected: 1, unexpected: 0 });
        expect(specsOf(report).map((s) => [s.title, s.ok])).to.equal([['a person signs up, types the mailed code and clicks the mailed link', true]]);
        // The fixture's inbox is gone; the one the earlier test mailed stays.
        const inboxes = await fetch(`${base}/v1/inboxes`, { headers: { authorization: `Bearer ${key}` } });
        expect(((await inboxes.json()) as { inboxes: Array<{ name: string }> }).inboxes.map((i) => i.name)).to.equal(['packed']);
    });

    it('stop the service on Ctrl-C', { timeout: 60_000 }, async () => {
        expect(service, 'the service of the tests before').to.exist();
        // Ctrl-C in a terminal: SIGINT to npx and everything it started. npx ends at once;
        // the service finishes what is in flight, says so and exits, closing the output
        // it shares with npx.
        const closed = new Promise((resolve) => service!.child.stdout!.once('close', resolve));
        service!.kill('SIGINT');
        await closed;
        expect(service!.stdout()).to.endWith('inbox-capture: SIGINT received, finishing what is in flight (again to force)\ninbox-capture: stopped\n');
        expect(service!.stderr()).to.equal('');
    });
});
