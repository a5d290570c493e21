/**
 * Issue 17 item 1, reproduced against examples/standalone.js: N messages of L lines of
 * 998 characters (default 24 × 24,000, about 24 MiB each) in one inbox, then
 * `GET /v1/emails?inbox=...` and every page after it by cursor, while /health is asked
 * every 50 ms. Prints the first answer's status and security header, pages, emails
 * reached, the largest page, the server's peak RSS (VmHWM from /proc) and the slowest
 * /health. Not part of `run.ts` (it writes about 1.2 GB); run it by hand:
 *
 *   node dist-bench/bench/list-budget.js [--root DIR] [--messages 24] [--lines 24000]
 *
 * `--root` is a checkout whose dist/ is built (another commit, for a before/after).
 */

import * as ChildProcess from 'node:child_process';
import * as Fs from 'node:fs';
import * as Http from 'node:http';
import * as Os from 'node:os';
import * as Path from 'node:path';
import { mib } from './process-rss';

const HEALTH_EVERY_MS = 50;

// The /health prober's process: asks until its stdin closes, then prints the slowest answer and the failures.
const HEALTH_PROBE = `
const http = require('node:http');
const [url, every] = process.argv.slice(1);
let slowest = 0, failed = 0, asked = 0, done = false;
process.stdin.on('end', () => { done = true; }).resume();
const ask = () => {
    if (done) { console.log('slowest /health: ' + slowest.toFixed(0) + ' ms of ' + asked + ', failed: ' + failed); return; }
    const t = process.hrtime.bigint();
    http.get(url, (res) => { res.resume(); res.on('end', () => { asked++; slowest = Math.max(slowest, Number(process.hrtime.bigint() - t) / 1e6); failed += res.statusCode === 200 ? 0 : 1; setTimeout(ask, Number(every)); }); })
        .on('error', () => { asked++; failed++; setTimeout(ask, Number(every)); });
};
ask();
`;

function option(name: string, fallback: string): string {
    const at = process.argv.indexOf(`--${name}`);
    return at > 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback;
}

function peakRssOf(pid: number): number {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(Fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : NaN;
}

function message(i: number, lines: number): Buffer {
    const line = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(28).slice(0, 998);
    const head = [
        'From: attacker@example.test', 'To: victim@example.test', `Subject: big ${i}`,
        `Message-ID: <big-${i}@example.test>`, 'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=us-ascii', 'Content-Transfer-Encoding: 7bit', '', ''
    ].join('\r\n');
    return Buffer.concat([Buffer.from(head), Buffer.from(`${line}\r\n`.repeat(lines))]);
}

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Http.IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
        Http.get(url, { headers }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
            res.on('error', reject);
        }).on('error', reject);
    });
}

async function main(): Promise<void> {
    const root = Path.resolve(option('root', Path.join(__dirname, '..', '..')));
    const count = Number(option('messages', '24'));
    const lines = Number(option('lines', '24000'));
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'list-budget-'));
    try {
        // Seeded with the package of `root` itself, so the schema is that version's.
        /* eslint-disable @typescript-eslint/no-require-imports */
        const { openEmbeddedStores } = require(Path.join(root, 'dist/lib/embedded-stores')) as typeof import('../lib/embedded-stores');
        const { createInboxCapture } = require(Path.join(root, 'dist/lib/inbox-capture')) as typeof import('../lib/inbox-capture');
        /* eslint-enable @typescript-eslint/no-require-imports */
        const capture = createInboxCapture(await openEmbeddedStores({ dataDir }));
        await capture.start();
        for (let i = 0; i < count; i++) {
            await capture.ingestRawEmail(message(i, lines), { recipients: ['victim@example.test'] });
        }

        const key = await capture.createKey('bench');
        await capture.close();
        console.log(`seeded ${count} messages of ${lines} lines (${mib(message(0, lines).length)} MiB each) in ${dataDir}`);

        const child = ChildProcess.spawn(process.execPath, [Path.join(root, 'examples/standalone.js')], {
            env: { ...process.env, INBOX_CAPTURE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', SMTP_PORT: '0' },
            stdio: ['ignore', 'pipe', 'pipe']
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => {
            stderr += chunk.toString();
        });
        const base = await new Promise<string>((resolve, reject) => {
            let out = '';
            child.stdout.on('data', (chunk: Buffer) => {
                out += chunk.toString();
                const match = /HTTP on (http:\/\/[^\s]+)/.exec(out);
                if (match) {
                    resolve(match[1]!);
                }
            });
            child.on('exit', (code) => reject(new Error(`standalone exited with ${code}: ${stderr}`)));
        });

        // /health is asked from a process of its own: this one parses pages of 24 MiB, which would delay its timing.
        const health = ChildProcess.spawn(process.execPath, ['-e', HEALTH_PROBE, `${base}/health`, String(HEALTH_EVERY_MS)], { stdio: ['pipe', 'pipe', 'inherit'] });
        let healthReport = '';
        health.stdout.on('data', (chunk: Buffer) => {
            healthReport += chunk.toString();
        });

        const auth = { authorization: `Bearer ${key}` };
        const seen = new Set<string>();
        let pages = 0;
        let largest = 0;
        let cursor: string | undefined;
        let first: { status: number; nosniff: string | undefined; body: string } | undefined;
        const started = Date.now();
        do {
            const res = await get(`${base}/v1/emails?inbox=victim${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, auth);
            first ??= { status: res.status, nosniff: res.headers['x-content-type-options'] as string | undefined, body: res.body.subarray(0, 120).toString() };
            if (res.status !== 200) {
                break;
            }

            pages++;
            largest = Math.max(largest, res.body.length);
            const page = JSON.parse(res.body.toString()) as { emails: { messageId: string }[]; nextCursor?: string };
            page.emails.forEach((e) => seen.add(e.messageId));
            cursor = page.nextCursor;
        } while (cursor !== undefined);
        const listMs = Date.now() - started;

        health.stdin.end();
        await new Promise((resolve) => health.once('exit', resolve));
        const peak = peakRssOf(child.pid!);
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
        console.log(`first answer: ${first?.status} x-content-type-options=${first?.nosniff ?? '(none)'}${first?.status === 200 ? '' : ` body ${first?.body}`}`);
        console.log(`pages: ${pages}, emails reached: ${seen.size} of ${count}, largest page: ${mib(largest)} MiB, listing took ${listMs} ms`);
        console.log(`server peak RSS (VmHWM): ${mib(peak)} MiB; ${healthReport.trim()}`);
    }
    finally {
        Fs.rmSync(dataDir, { recursive: true, force: true });
    }
}

main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
});
