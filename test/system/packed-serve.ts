import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { run, spawnCommand, waitForOutput, type RunExit, type Spawned } from '../helpers/child-process';
import { freePort } from '../helpers/net';
import { isolatedEnv } from '../helpers/service-env';
import { removeDir, tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');

/** Longest wait for `npm install` of the tarball: seconds from npm's cache, a minute or two when sqlite3 compiles. */
const INSTALL_TIMEOUT_MS = 240_000;

/** npm settings a user's shell (or CI) may pass in the environment: where packages come from and are cached. */
const KEPT_NPM_CONFIG = /^npm_config_(cache|registry|userconfig|cafile|strict_ssl|proxy|https_proxy|noproxy)$/i;

/**
 * The environment of a user's shell: none of this run's other npm variables (an `npm test`
 * sets npm_config_local_prefix and friends, which would point the inner npm at this
 * repository), none of the service's variables, and no analytics calls from install scripts.
 */
function userEnv(vars: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env = isolatedEnv();
    for (const name of Object.keys(env)) {
        if ((/^npm_/i.test(name) && !KEPT_NPM_CONFIG.test(name)) || name === 'INIT_CWD') {
            delete env[name];
        }
    }

    return { ...env, SCARF_ANALYTICS: 'false', DO_NOT_TRACK: '1', ...vars };
}

/** `npm args` in `cwd`; throws with its output unless it exits 0. */
async function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<RunExit> {
    const result = await run('npm', args, { cwd, env });
    if (result.code !== 0) {
        throw new Error(`npm ${args.join(' ')} exited with ${result.code}:\n${result.stdout}\n${result.stderr}`);
    }

    return result;
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

describe('the packed package, installed in an empty directory', () => {

    let work: string;
    let app: string;

    before({ timeout: INSTALL_TIMEOUT_MS + 60_000 }, async () => {
        // What `npm pack` ships is dist/ as built (npm test builds first); its prepare script would build it again.
        await Fs.access(Path.join(ROOT, 'dist', 'adapters', 'standalone', 'serve.js')).catch(() => {
            throw new Error('dist/ is not built: run `npm run build` first');
        });
        work = await tempDir('packed');
        const packed = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT, userEnv());
        const [{ filename }] = JSON.parse(packed.stdout) as Array<{ filename: string }>;

        // One install per run: an empty directory, no package.json, from npm's cache where it can.
        app = Path.join(work, 'app');
        await Fs.mkdir(app);
        await npm(['install', Path.join(work, filename), '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], app, userEnv(await localSqlitePrebuild(Path.join(work, 'prebuilds'))));
    });

    after(async () => {
        if (work) {
            await removeDir(work);
        }
    });

    it('runs `npx inbox-capture serve`: a key from `npx inbox-capture keys create` works, SMTP mail is listed, the UI and docs are served, Ctrl-C stops it', { timeout: 120_000 }, async () => {
        // Nothing but the installed package: no package.json of ours, no dist/ of the checkout.
        expect(await Fs.readdir(app)).to.only.include(['node_modules', 'package.json', 'package-lock.json']);
        const port = await freePort();
        const smtpPort = await freePort();
        // No INBOX_CAPTURE_DATA_DIR: the default ./data, in the user's directory.
        const env = userEnv({ HOST: '127.0.0.1', PORT: String(port), SMTP_PORT: String(smtpPort) });
        const service: Spawned = spawnCommand('npx', ['inbox-capture', 'serve'], { cwd: app, env, group: true });
        try {
            await waitForOutput(service, /create an API key: [^\n]*\n/, { timeoutMs: 60_000 });
            expect(service.stdout()).to.contain(`inbox-capture listening: HTTP on http://127.0.0.1:${port} (docs: http://127.0.0.1:${port}/docs), SMTP on 127.0.0.1:${smtpPort} (no AUTH, no TLS)`);
            expect(service.stdout()).to.contain(`data: records in ${Path.join(app, 'data', 'inbox-capture.sqlite')}`);

            const created = await run('npx', ['inbox-capture', 'keys', 'create', 'packed'], { cwd: app, env });
            expect(created.code, created.stderr).to.equal(0);
            const key = created.stdout.trim();
            expect(key).to.match(/^\S{20,}$/);

            const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
            try {
                await transport.sendMail({ from: 'app@example.test', to: 'packed@example.test', subject: 'from the tarball', text: 'Hello.' });
            }
            finally {
                transport.close();
            }

            const base = `http://127.0.0.1:${port}`;
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

            // Ctrl-C in a terminal: SIGINT to npx and everything it started. npx ends at once;
            // the service finishes what is in flight, says so and exits, closing the output
            // it shares with npx.
            const closed = new Promise((resolve) => service.child.stdout!.once('close', resolve));
            service.kill('SIGINT');
            await closed;
            expect(service.stdout()).to.endWith('inbox-capture: SIGINT received, finishing what is in flight (again to force)\ninbox-capture: stopped\n');
            expect(service.stderr()).to.equal('');
        }
        finally {
            service.kill('SIGKILL');
            await service.exited;
        }
    });
});
