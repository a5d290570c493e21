import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { promisify } from 'node:util';
import { freePort, retryWhilePortTaken } from '../test/helpers/net';
import { tempDir } from '../test/helpers/temp-dir';

/** The repository root (this file runs from dist-bench/bench/). */
export const ROOT = Path.resolve(__dirname, '..', '..');
const STANDALONE = Path.join(ROOT, 'examples', 'standalone.js');
/** The CLI of the built package. */
export const CLI = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');

/** Longest wait for the service to print that it listens, ms. */
const START_TIMEOUT_MS = 60_000;
/** Longest wait for a clean stop after SIGTERM, ms, before SIGKILL. */
const STOP_TIMEOUT_MS = 30_000;

/** How to run the service: the variables of docs/api.md, "Environment variables", beyond ports and data dir. */
export interface StandaloneOptions {
    /** DATABASE_URL (Postgres) instead of SQLite in the data dir. */
    databaseUrl?: string;
    /** S3 instead of files in the data dir. */
    s3?: { endpoint: string; bucket: string };
    /** Extra node flags, e.g. `--cpu-prof`. */
    nodeFlags?: string[];
    /** More environment variables, e.g. `INBOX_CAPTURE_MAX_HTTP_CONNECTIONS` or `INBOX_CAPTURE_WEBHOOK_URL`. */
    env?: Record<string, string>;
    /** Another checkout whose dist/ is built (another commit, for a before/after); default this one. */
    root?: string;
    /** The SMTP port, when the caller needs it before start (a relay pointed back at the service); default a free one. */
    smtpPort?: number;
}

/** A running `node examples/standalone.js`. */
export interface Standalone {
    /** The environment it runs with (for the CLI against the same data). */
    env: NodeJS.ProcessEnv;
    pid: number;
    base: string;
    smtpPort: number;
    /** An API key created with the CLI before start. */
    apiKey: string;
    dataDir: string;
    /** When the process was spawned, Unix ms. */
    spawnedAt: number;
    /** When the process exited, Unix ms (a CPU profile ends then); NaN while it runs. */
    exitedAt(): number;
    /** Everything the service wrote on stderr so far (its last 20,000 characters). */
    stderr(): string;
    /** The same of stdout. */
    stdout(): string;
    /** SIGTERM, wait for the exit (SIGKILL after 30 s), remove the data dir. */
    stop(): Promise<void>;
}

function serviceEnv(vars: Record<string, string | undefined>): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['DATABASE_URL', 'S3_BUCKET', 'S3_ENDPOINT', 'S3_REGION', 'S3_FORCE_PATH_STYLE', 'INBOX_CAPTURE_SIGNING_SECRET', 'HOST', 'PORT', 'SMTP_PORT', 'INBOX_CAPTURE_DATA_DIR']) {
        delete env[name];
    }

    for (const [name, value] of Object.entries(vars)) {
        if (value !== undefined) {
            env[name] = value;
        }
    }

    return env;
}

/**
 * Starts the standalone example on free loopback ports and a fresh data dir, after
 * creating an API key with the CLI (`keys create`, which also migrates). Needs the
 * package built (`npm run build`): the example runs dist/.
 */
export function startStandalone(options: StandaloneOptions = {}): Promise<Standalone> {
    // A port of its own (options.smtpPort) is the caller's to choose again.
    return options.smtpPort === undefined ? retryWhilePortTaken(() => startOnce(options)) : startOnce(options);
}

async function startOnce(options: StandaloneOptions): Promise<Standalone> {
    const dataDir = await tempDir('bench-data');
    const port = await freePort();
    const smtpPort = options.smtpPort ?? await freePort();
    const env = serviceEnv({
        INBOX_CAPTURE_DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
        SMTP_PORT: String(smtpPort),
        DATABASE_URL: options.databaseUrl,
        S3_BUCKET: options.s3?.bucket,
        S3_ENDPOINT: options.s3?.endpoint,
        S3_REGION: options.s3 ? 'us-east-1' : undefined,
        S3_FORCE_PATH_STYLE: options.s3 ? 'true' : undefined,
        AWS_ACCESS_KEY_ID: options.s3 ? 'S3RVER' : process.env.AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY: options.s3 ? 'S3RVER' : process.env.AWS_SECRET_ACCESS_KEY,
        ...options.env
    });

    const root = options.root ?? ROOT;
    const { stdout } = await promisify(execFile)(process.execPath, [Path.join(root, Path.relative(ROOT, CLI)), 'keys', 'create', `bench-${process.pid}-${port}`], { cwd: root, env });
    const apiKey = stdout.trim();

    const spawnedAt = Date.now();
    const child: ChildProcess = spawn(process.execPath, [...(options.nodeFlags ?? []), Path.join(root, Path.relative(ROOT, STANDALONE))], {
        cwd: root,
        env,
        stdio: ['ignore', 'pipe', 'pipe']
    });
    let out = '';
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        // Keep the tail only: a long run must not grow this without bound.
        err = (err + d).slice(-20_000);
    });
    const exited = once(child, 'exit');
    let exitedAt = NaN;
    void exited.then(() => {
        exitedAt = Date.now();
    });
    const listening = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`standalone did not start within ${START_TIMEOUT_MS} ms: ${err}`)), START_TIMEOUT_MS);
        child.stdout!.setEncoding('utf8').on('data', (d: string) => {
            out = (out + d).slice(-20_000);
            if (out.includes('inbox-capture listening')) {
                clearTimeout(timer);
                resolve();
            }
        });
        void exited.then(([code]) => {
            clearTimeout(timer);
            reject(new Error(`standalone exited (${String(code)}) before listening: ${err}`));
        });
    });

    try {
        await listening;
    }
    catch (error) {
        child.kill('SIGKILL');
        await Fs.rm(dataDir, { recursive: true, force: true });
        throw error;
    }

    return {
        env,
        pid: child.pid!,
        base: `http://127.0.0.1:${port}`,
        smtpPort,
        apiKey,
        dataDir,
        spawnedAt,
        exitedAt: () => exitedAt,
        stderr: () => err,
        stdout: () => out,
        async stop() {
            if (child.exitCode === null && child.signalCode === null) {
                const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
                child.kill('SIGTERM');
                await exited;
                clearTimeout(killer);
            }

            await Fs.rm(dataDir, { recursive: true, force: true });
        }
    };
}

/** GET a JSON document with the service's API key. */
export async function getJson(base: string, apiKey: string, path: string): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
    return { status: response.status, body: await response.json() };
}

/** Number of emails the API lists for an inbox, walking every page (100 a page). Bounded by `maxPages`. */
export async function countListed(base: string, apiKey: string, inbox: string, maxPages = 10_000): Promise<number> {
    let count = 0;
    let cursor: string | undefined;
    for (let page = 0; page < maxPages; page++) {
        const query = `/v1/emails?inbox=${encodeURIComponent(inbox)}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const { status, body } = await getJson(base, apiKey, query);
        if (status !== 200) {
            throw new Error(`GET ${query} answered ${status}: ${JSON.stringify(body)}`);
        }

        const envelope = body as { emails: unknown[]; hasMore: boolean; nextCursor?: string };
        count += envelope.emails.length;
        if (!envelope.hasMore) {
            return count;
        }

        cursor = envelope.nextCursor;
    }

    throw new Error(`inbox ${inbox} has more than ${maxPages} pages`);
}
