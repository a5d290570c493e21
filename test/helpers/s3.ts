import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import * as Fs from 'node:fs/promises';
import * as Os from 'node:os';
import * as Path from 'node:path';
import * as Readline from 'node:readline';

// s3rver runs in a child process: it pages ListObjectsV2 with continuation tokens
// encrypted with DES, which Node's OpenSSL 3 offers only with --openssl-legacy-provider.
// The child exits when its stdin closes, so a crashed test run leaves no server behind.
const SERVER_SCRIPT = `
const S3rver = require(process.argv[1]);
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: process.argv[2] });
server.run().then((address) => {
    process.stdout.write(JSON.stringify({ port: address.port }) + '\\n');
}, (err) => {
    console.error(err);
    process.exit(1);
});
process.stdin.on('end', () => server.close().finally(() => process.exit(0)));
process.stdin.resume();
`;

/** Longest wait for the server to report its port, ms: it starts in well under a second. */
const START_TIMEOUT_MS = 20_000;

/** What a test file gets: a real S3 endpoint on loopback and a bucket of its own. */
export interface S3Fixture {
    /** `http://127.0.0.1:<port>` */
    endpoint: string;
    /** A fresh, empty bucket created for this caller. */
    bucket: string;
    /** A client for the endpoint (path-style, dummy credentials); destroyed by stop(). */
    createClient(): S3Client;
    /** Creates another fresh bucket and returns its name (default: a unique one). */
    createBucket(name?: string): Promise<string>;
    /** Releases this caller's hold; the server stops when the last caller has stopped. */
    stop(): Promise<void>;
}

interface Server {
    child: ChildProcess;
    directory: string;
    endpoint: string;
}

// Lab runs every test file in one process: one server serves them all, started on
// first use and stopped when its last user is done.
let shared: Promise<Server> | null = null;
let users = 0;

async function startServer(): Promise<Server> {
    const directory = await Fs.mkdtemp(Path.join(Os.tmpdir(), 'inbox-capture-s3rver-'));
    const child = spawn(process.execPath, ['--openssl-legacy-provider', '-e', SERVER_SCRIPT, require.resolve('s3rver'), directory], {
        stdio: ['pipe', 'pipe', 'inherit']
    });
    try {
        const lines = Readline.createInterface({ input: child.stdout! });
        const first = once(lines, 'line');
        const exited = once(child, 'exit').then(([code]) => {
            throw new Error(`s3rver exited with code ${code} before listening`);
        });
        const timeout = new Promise<never>((_, reject) => {
            setTimeout(() => reject(new Error('s3rver did not start')), START_TIMEOUT_MS).unref();
        });
        const [line] = await Promise.race([first, exited, timeout]) as [string];
        exited.catch(() => undefined);
        lines.close();
        const { port } = JSON.parse(line) as { port: number };
        return { child, directory, endpoint: `http://127.0.0.1:${port}` };
    }
    catch (err) {
        child.kill();
        await Fs.rm(directory, { recursive: true, force: true });
        throw err;
    }
}

async function stopServer(server: Server): Promise<void> {
    const { child } = server;
    if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.stdin!.end();
        await exited;
    }

    await Fs.rm(server.directory, { recursive: true, force: true });
}

function newClient(endpoint: string): S3Client {
    return new S3Client({
        endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
    });
}

/** Starts (or joins) the shared s3rver and creates a fresh bucket for the caller. */
export async function startS3(): Promise<S3Fixture> {
    users++;
    shared ??= startServer();
    let server: Server;
    try {
        server = await shared;
    }
    catch (err) {
        users--;
        shared = null;
        throw err;
    }

    const clients: S3Client[] = [];
    const admin = newClient(server.endpoint);
    let stopped = false;

    const createBucket = async (name = `test-${randomBytes(6).toString('hex')}`) => {
        await admin.send(new CreateBucketCommand({ Bucket: name }));
        return name;
    };

    const release = async () => {
        admin.destroy();
        for (const client of clients) {
            client.destroy();
        }

        if (--users === 0 && shared) {
            const last = shared;
            shared = null;
            await stopServer(await last);
        }
    };

    let bucket: string;
    try {
        bucket = await createBucket();
    }
    catch (err) {
        await release();
        throw err;
    }

    return {
        endpoint: server.endpoint,
        bucket,
        createClient() {
            const client = newClient(server.endpoint);
            clients.push(client);
            return client;
        },
        createBucket,
        async stop() {
            if (stopped) {
                return;
            }

            stopped = true;
            await release();
        }
    };
}
