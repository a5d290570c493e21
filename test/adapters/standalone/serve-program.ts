import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Net from 'node:net';
import * as Path from 'node:path';
import { isRunning, runNode, spawnCommand, spawnNode, waitForOutput, type Spawned } from '../../helpers/child-process';
import { freePort, retryWhilePortTaken } from '../../helpers/net';
import { isolatedEnv } from '../../helpers/service-env';
import { removeDir, tempDir } from '../../helpers/temp-dir';
import { waitUntil } from '../../helpers/wait-until';

const { expect } = Code;
const { describe, it, before, after, afterEach } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..', '..');
/** The built executable, as users run it (`npm test` builds first). */
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');
const STARTED = /create an API key: [^\n]*\n/;

/** The environment of a shell that npm did not start: no service variables, no npm_* ones. */
function shellEnv(vars: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env = isolatedEnv(vars);
    for (const name of Object.keys(env)) {
        if (/^npm_/i.test(name) && !(name in vars)) {
            delete env[name];
        }
    }

    return env;
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
    return new Promise((resolve) => {
        const socket = Net.connect(port, '127.0.0.1');
        socket.once('connect', () => {
            socket.destroy();
            resolve(true);
        });
        socket.once('error', () => resolve(false));
    });
}

/** A loopback port held by a plain TCP server until `close()`. */
async function occupiedPort(): Promise<{ port: number; close: () => Promise<void> }> {
    const server = Net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        port: (server.address() as Net.AddressInfo).port,
        close: () => new Promise((resolve) => server.close(() => resolve()))
    };
}

/**
 * Starts the program with `start(ports)` on `count` fresh loopback ports and resolves once it
 * has started; a start that fails is killed (npx's process group whole), `dataDir` removed, and,
 * when a port was taken meanwhile (the error carries what it printed), tried again on fresh ports.
 */
function startOnFreePorts(count: number, dataDir: string, start: (ports: number[]) => Spawned, timeoutMs = 30_000): Promise<{ service: Spawned; ports: number[] }> {
    return retryWhilePortTaken(async () => {
        const ports: number[] = [];
        while (ports.length < count) {
            ports.push(await freePort());
        }

        const spawned = start(ports);
        try {
            await waitForOutput(spawned, STARTED, { timeoutMs });
            return { service: spawned, ports };
        }
        catch (err) {
            spawned.kill('SIGKILL');
            await spawned.exited;
            await removeDir(dataDir);
            throw err;
        }
    });
}

describe('inbox-capture serve, the program', () => {

    let work: string;
    let service: Spawned | undefined;

    before(async () => {
        work = await tempDir('serve-program');
    });

    afterEach(async () => {
        if (service) {
            // Even when npx has exited: the service it started is in its process group.
            service.kill('SIGKILL');
            await service.exited;
        }

        service = undefined;
    });

    after(async () => {
        await removeDir(work);
    });

    it('lists its flags and their variables in --help', async () => {
        const help = await runNode([BIN, 'serve', '--help'], { cwd: work, env: shellEnv() });
        expect(help.code).to.equal(0);
        expect(help.stdout).to.startWith('Usage: inbox-capture serve [--port <port>] [--smtp-port <port>] [--host <address>] [--data-dir <dir>]\n');
        for (const pair of [/--port <port> +PORT /, /--smtp-port <port> +SMTP_PORT /, /--host <address> +HOST /, /--data-dir <dir> +INBOX_CAPTURE_DATA_DIR /]) {
            expect(help.stdout).to.match(pair);
        }
    });

    it('listens where its flags say, keeping data in the flag\'s directory', { timeout: 60_000 }, async () => {
        const dataDir = Path.join(work, 'flags-only');
        let port: number, smtpPort: number;
        ({ service, ports: [port, smtpPort] } = await startOnFreePorts(2, dataDir, ([port, smtpPort]) =>
            spawnNode([BIN, 'serve', '--port', String(port), '--smtp-port', String(smtpPort), '--host', '127.0.0.1', '--data-dir', dataDir], { cwd: work, env: shellEnv() })));
        expect(service.stdout()).to.startWith(`inbox-capture listening: HTTP on http://127.0.0.1:${port} (docs: http://127.0.0.1:${port}/docs), SMTP on 127.0.0.1:${smtpPort} (no AUTH, no TLS)\ndata: records in ${Path.join(dataDir, 'inbox-capture.sqlite')}`);
        expect((await fetch(`http://127.0.0.1:${port}/health`)).status).to.equal(200);
        expect(await accepts(smtpPort)).to.be.true();
        await Fs.access(Path.join(dataDir, 'inbox-capture.sqlite'));
        service.kill('SIGTERM');
        expect(await service.exited).to.equal(0);
    });

    it('takes a flag over its environment variable', { timeout: 60_000 }, async () => {
        const dataDir = Path.join(work, 'flag-wins');
        const envDataDir = Path.join(work, 'env-loses');
        let port: number, envPort: number, smtpPort: number, envSmtpPort: number;
        ({ service, ports: [port, envPort, smtpPort, envSmtpPort] } = await startOnFreePorts(4, dataDir, ([port, envPort, smtpPort, envSmtpPort]) => {
            const env = shellEnv({ PORT: String(envPort), SMTP_PORT: String(envSmtpPort), HOST: '127.0.0.2', INBOX_CAPTURE_DATA_DIR: envDataDir });
            return spawnNode([BIN, 'serve', `--port=${port}`, '--smtp-port', String(smtpPort), '--host', '127.0.0.1', '--data-dir', dataDir], { cwd: work, env });
        }));
        expect(service.stdout()).to.startWith(`inbox-capture listening: HTTP on http://127.0.0.1:${port} (docs: http://127.0.0.1:${port}/docs), SMTP on 127.0.0.1:${smtpPort} `);
        expect((await fetch(`http://127.0.0.1:${port}/health`)).status).to.equal(200);
        expect(await accepts(envPort)).to.be.false();
        expect(await accepts(envSmtpPort)).to.be.false();
        await Fs.access(Path.join(dataDir, 'inbox-capture.sqlite'));
        await expect(Fs.access(envDataDir)).to.reject();
        service.kill('SIGTERM');
        expect(await service.exited).to.equal(0);
    });

    it('refuses an unknown flag, and a bad flag value, in one line naming it', async () => {
        const unknown = await runNode([BIN, 'serve', '--prot', '4000'], { cwd: work, env: shellEnv() });
        expect(unknown).to.equal({ code: 1, stdout: '', stderr: 'inbox-capture: serve: Unknown option \'--prot\' (see inbox-capture help serve)\n' });
        const bad = await runNode([BIN, 'serve', '--smtp-port', 'smtp'], { cwd: work, env: shellEnv() });
        expect(bad).to.equal({ code: 1, stdout: '', stderr: 'inbox-capture: configuration: SMTP_PORT / --smtp-port must be a port number 0..65535, got "smtp"\n' });
    });

    it('says in one line which setting chose a port that is in use, HTTP or SMTP', { timeout: 60_000 }, async () => {
        const taken = await occupiedPort();
        try {
            const dataDir = Path.join(work, 'port-in-use');
            const http = await runNode([BIN, 'serve', '--port', String(taken.port), '--smtp-port', '0', '--data-dir', dataDir], { cwd: work, env: shellEnv() });
            expect(http).to.equal({ code: 1, stdout: '', stderr: `inbox-capture: cannot start: port ${taken.port} (PORT / --port) is already in use on 127.0.0.1\n` });
            const smtp = await runNode([BIN, 'serve', '--port', '0', '--data-dir', dataDir], { cwd: work, env: shellEnv({ SMTP_PORT: String(taken.port) }) });
            expect(smtp).to.equal({ code: 1, stdout: '', stderr: `inbox-capture: cannot start: port ${taken.port} (SMTP_PORT / --smtp-port) is already in use on 127.0.0.1\n` });
        }
        finally {
            await taken.close();
        }
    });

    it('names the relay\'s server, allow-list and auto-relay query at start, never the login', { timeout: 60_000 }, async () => {
        const dataDir = Path.join(work, 'relay');
        ({ service } = await startOnFreePorts(1, dataDir, ([port]) => spawnNode([BIN, 'serve', '--port', String(port), '--smtp-port', '0', '--data-dir', dataDir], {
            cwd: work,
            env: shellEnv({
                INBOX_CAPTURE_RELAY_URL: 'smtp://relay-user:s3cret-Pass@relay.example.test:2587',
                INBOX_CAPTURE_RELAY_ALLOW: '*@example.com, alice@example.org',
                INBOX_CAPTURE_RELAY_AUTO_MATCH: 'to:example.com'
            })
        })));
        const lines = service.stdout().split('\n');
        expect(lines[2]).to.equal('relay: to smtp://relay.example.test:2587 (with a login), only to *@example.com, alice@example.org; auto-relay of mail matching "to:example.com"');
        expect(service.stdout() + service.stderr()).to.not.contain('s3cret');
        expect(service.stdout() + service.stderr()).to.not.contain('relay-user');
    });

    it('stops when npx, which started it, gets SIGTERM', { timeout: 120_000 }, async () => {
        // `npx … &` then `kill $!`: the signal reaches npx alone, not its whole process group.
        const dataDir = Path.join(work, 'npx');
        let port: number;
        ({ service, ports: [port] } = await startOnFreePorts(1, dataDir, ([port]) =>
            spawnCommand('npx', ['--yes', 'inbox-capture', 'serve', '--port', String(port), '--smtp-port', '0', '--data-dir', dataDir], { cwd: ROOT, env: shellEnv(), group: true }), 60_000));
        const closed = new Promise((resolve) => service!.child.stdout!.once('close', resolve));
        service.child.kill('SIGTERM');
        // The output closes once every process that held it, the service too, has ended.
        await closed;
        expect(service.stdout()).to.endWith('inbox-capture: the npm process that started it ended, finishing what is in flight (a signal twice to force)\ninbox-capture: stopped\n');
        expect(await accepts(port)).to.be.false();
    });

    it('keeps running when a parent that is not npm ends (nohup and `&` in a script)', { timeout: 60_000 }, async () => {
        const ended = Path.join(work, 'shell-may-end');
        const dataDir = Path.join(work, 'orphan');
        // Its output in a file (as nohup's in nohup.out), so that a start that failed says why.
        const log = Path.join(work, 'orphan.log');
        const output = () => Fs.readFile(log, 'utf8').catch(() => '');
        // On a fresh port, started again if it was taken meanwhile.
        const { shell, pid, port } = await retryWhilePortTaken(async () => {
            const port = await freePort();
            // The shell outlives the service's start, then ends, as a terminal closed after `nohup … &` would.
            const shell = spawnCommand('sh', ['-c', `"${process.execPath}" "${BIN}" serve --port ${port} --smtp-port 0 --data-dir "${dataDir}" >"${log}" 2>&1 & echo $!; while [ ! -e "${ended}" ]; do sleep 0.1; done`], { cwd: work, env: shellEnv() });
            let pid = 0;
            try {
                await waitForOutput(shell, /^\d+\n/, { timeoutMs: 10_000 });
                pid = Number(shell.stdout().trim());
                await waitUntil('the service listens', async () => {
                    // Gone (or a zombie): what it printed is all there is.
                    if (!isRunning(pid)) {
                        throw new Error(`the service exited before listening: ${await output()}`);
                    }

                    return STARTED.test(await output());
                }, { everyMs: 100 });
                return { shell, pid, port };
            }
            catch (err) {
                if (pid !== 0 && isRunning(pid)) {
                    process.kill(pid, 'SIGKILL');
                }

                shell.kill('SIGKILL');
                await shell.exited;
                await removeDir(dataDir);
                throw err;
            }
        });
        try {
            await Fs.writeFile(ended, '');
            expect(await shell.exited).to.equal(0);
            // Several of the service's looks at its parent later.
            await new Promise((resolve) => setTimeout(resolve, 2_000));
            expect(isRunning(pid)).to.be.true();
            expect((await fetch(`http://127.0.0.1:${port}/health`)).status).to.equal(200);
        }
        finally {
            process.kill(pid, 'SIGKILL');
        }
    });
});
