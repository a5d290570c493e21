import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import * as Fs from 'node:fs/promises';
import * as Os from 'node:os';
import * as Path from 'node:path';
import * as Readline from 'node:readline';

// A child of its own, so the load generator's event loop never serves S3 too.
// --openssl-legacy-provider: s3rver's continuation tokens use DES. The child exits
// when its stdin closes, so a crashed run leaves no server behind.
const SERVER_SCRIPT = `
const S3rver = require(process.argv[1]);
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: process.argv[2],
    configureBuckets: [{ name: process.argv[3] }] });
server.run().then((address) => process.stdout.write(JSON.stringify({ port: address.port }) + '\\n'),
    (err) => { console.error(err); process.exit(1); });
process.stdin.on('end', () => server.close().finally(() => process.exit(0)));
process.stdin.resume();
`;

/** Longest wait for s3rver to report its port, ms. */
const START_TIMEOUT_MS = 20_000;

/** A running s3rver with one bucket. */
export interface BenchS3 {
    endpoint: string;
    bucket: string;
    pid: number;
    stop(): Promise<void>;
}

/** Starts s3rver on loopback with a bucket named `bucket`, storing under a fresh temp dir. */
export async function startS3rver(bucket = 'inbox-capture-bench'): Promise<BenchS3> {
    const directory = await Fs.mkdtemp(Path.join(Os.tmpdir(), 'ic-bench-s3-'));
    const child: ChildProcess = spawn(process.execPath, ['--openssl-legacy-provider', '-e', SERVER_SCRIPT, require.resolve('s3rver'), directory, bucket], {
        stdio: ['pipe', 'pipe', 'inherit']
    });
    const lines = Readline.createInterface({ input: child.stdout! });
    const timer = setTimeout(() => child.kill(), START_TIMEOUT_MS);
    const [line] = await Promise.race([
        once(lines, 'line') as Promise<[string]>,
        once(child, 'exit').then(() => {
            throw new Error('s3rver exited before listening');
        })
    ]);
    clearTimeout(timer);
    lines.close();
    const { port } = JSON.parse(line) as { port: number };
    return {
        endpoint: `http://127.0.0.1:${port}`,
        bucket,
        pid: child.pid!,
        async stop() {
            if (child.exitCode === null && child.signalCode === null) {
                const exited = once(child, 'exit');
                child.stdin!.end();
                await exited;
            }

            await Fs.rm(directory, { recursive: true, force: true });
        }
    };
}
