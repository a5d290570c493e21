import * as Path from 'node:path';
import { freePort, retryWhilePortTaken } from './net';
import { runNode, spawnNode, waitForOutput, type Spawned } from './child-process';
import { isolatedEnv } from './service-env';
import { removeDir, tempDir } from './temp-dir';

const ROOT = Path.join(__dirname, '..', '..');
const STANDALONE = Path.join(ROOT, 'examples', 'standalone.js');

/** `node examples/standalone.js` on free loopback ports and a temp data dir, with an API key. */
export interface StandaloneService {
    spawned: Spawned;
    /** `http://127.0.0.1:<port>` */
    baseUrl: string;
    smtpPort: number;
    apiKey: string;
    /** Its INBOX_CAPTURE_DATA_DIR (SQLite file and blobs). */
    dataDir: string;
    /** The service's environment: the CLI run with it reaches the same stores. */
    env: NodeJS.ProcessEnv;
    /** Kills the process if it still runs, removes the data dir. */
    stop(): Promise<void>;
}

/** How to start it beyond the defaults. */
export interface StandaloneStartOptions {
    /** Runs node under this command, e.g. `sh -c 'ulimit -n 512; exec "$0" "$@"'`. */
    prefix?: string[];
    /** Further environment variables of the service. */
    env?: Record<string, string>;
}

/** A standalone service listening on free loopback ports, started with the caller's environment. */
export interface ListeningService extends Spawned {
    /** `http://127.0.0.1:<port>` */
    base: string;
    smtpPort: number;
}

/**
 * `node examples/standalone.js` with `env` (its data dir and stores: the caller's) on free
 * loopback ports, node given `nodeArgs` first; resolves once it listens, or kills it and throws. Ports taken meanwhile
 * are tried again, as in startStandalone().
 */
export function spawnStandalone(env: NodeJS.ProcessEnv, timeoutMs = 30_000, nodeArgs: string[] = []): Promise<ListeningService> {
    return retryWhilePortTaken(async () => {
        const port = await freePort();
        const smtpPort = await freePort();
        const spawned = spawnNode([...nodeArgs, STANDALONE], { cwd: ROOT, env: { ...env, HOST: '127.0.0.1', PORT: String(port), SMTP_PORT: String(smtpPort) } });
        try {
            await waitForOutput(spawned, /create an API key: [^\n]*\n/, { timeoutMs });
            return { ...spawned, base: `http://127.0.0.1:${port}`, smtpPort };
        }
        catch (err) {
            if (spawned.child.exitCode === null && spawned.child.signalCode === null) {
                spawned.child.kill('SIGKILL');
                await spawned.exited;
            }

            throw err;
        }
    });
}

/**
 * Starts the standalone service (SQLite + files) and creates a key with its CLI, as a user would;
 * a start that fails with a port taken meanwhile is tried again on fresh ports.
 */
export function startStandalone(options: StandaloneStartOptions = {}): Promise<StandaloneService> {
    return retryWhilePortTaken(() => startOnce(options));
}

async function startOnce(options: StandaloneStartOptions): Promise<StandaloneService> {
    const dataDir = await tempDir('standalone');
    const port = await freePort();
    const smtpPort = await freePort();
    const env = isolatedEnv({ ...options.env, PORT: String(port), SMTP_PORT: String(smtpPort), INBOX_CAPTURE_DATA_DIR: dataDir });
    const spawned = spawnNode([STANDALONE], { cwd: ROOT, env, prefix: options.prefix });
    const stop = async () => {
        const { child } = spawned;
        if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGKILL');
            await spawned.exited;
        }

        await removeDir(dataDir);
    };

    try {
        await waitForOutput(spawned, /create an API key: [^\n]*\n/, { timeoutMs: 30_000 });
        const created = await runNode([Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js'), 'keys', 'create', 'examples'], { cwd: ROOT, env });
        if (created.code !== 0) {
            throw new Error(`keys create failed: ${created.stderr}`);
        }

        return { spawned, baseUrl: `http://127.0.0.1:${port}`, smtpPort, apiKey: created.stdout.trim(), dataDir, env, stop };
    }
    catch (err) {
        await stop();
        throw err;
    }
}
