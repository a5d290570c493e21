/**
 * Issue 17 item 1, reproduced against examples/standalone.js: N messages of L lines of
 * 998 characters (default 24 × 24,000, about 24 MiB each) in one inbox, then
 * `GET /v1/emails?inbox=...` and every page after it by cursor, while /health is asked
 * every 50 ms. Prints the first answer's status and security header, pages, emails
 * reached, the largest page, the server's peak RSS (VmHWM from /proc) and the slowest
 * /health. Not part of `run.ts` (it writes about 1.2 GB); run it by hand:
 *
 *   node dist-bench/bench/list-budget.js [--root DIR] [--messages 24] [--lines 24000] [--node-flags "--cpu-prof"]
 *
 * `--root` is a checkout whose dist/ is built (another commit, for a before/after);
 * `--node-flags` go to the server's node (a CPU profile of it, say).
 */

import * as ChildProcess from 'node:child_process';
import * as Fs from 'node:fs';
import * as Http from 'node:http';
import { createRequire } from 'node:module';
import * as Os from 'node:os';
import * as Path from 'node:path';
import { describeHealth, startHealthProbe } from './health-probe';
import { mib, peakRssOf } from './process-rss';

function option(name: string, fallback: string): string {
    const at = process.argv.indexOf(`--${name}`);
    return at > 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback;
}

// One body per line count, shared: the attacks send the same 24 MiB to 50 sessions at once.
const bodies = new Map<number, Buffer>();

/**
 * Message `i` of the attack as its head and body: `lines` lines of 998 characters of plain
 * text to `to`, Message-ID `<${idPrefix}-${i}@example.test>`.
 */
export function bigMessageParts(i: number, lines: number, to = 'victim@example.test', idPrefix = 'big'): [Buffer, Buffer] {
    const head = [
        'From: attacker@example.test', `To: ${to}`, `Subject: big ${i}`,
        `Message-ID: <${idPrefix}-${i}@example.test>`, 'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=us-ascii', 'Content-Transfer-Encoding: 7bit', '', ''
    ].join('\r\n');
    let body = bodies.get(lines);
    if (!body) {
        const line = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(28).slice(0, 998);
        body = Buffer.from(`${line}\r\n`.repeat(lines));
        bodies.set(lines, body);
    }

    return [Buffer.from(head), body];
}

/** Message `i` of the attack in one Buffer (see bigMessageParts). */
export function bigMessage(i: number, lines: number): Buffer {
    return Buffer.concat(bigMessageParts(i, lines));
}

/** GET `url`, the whole body read. */
export function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Http.IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
        Http.get(url, { headers }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
            res.on('error', reject);
        }).on('error', reject);
    });
}

/** What listing an inbox page by page came to. */
export interface Listing {
    first: { status: number; nosniff: string | undefined; body: string };
    pages: number;
    /** Distinct messageIds reached. */
    reached: number;
    largestBytes: number;
    ms: number;
}

/** `GET /v1/emails?inbox=` and every page after it by cursor, as a client would (stops at a non-200). */
export async function listEveryPage(base: string, key: string, inbox: string): Promise<Listing> {
    const auth = { authorization: `Bearer ${key}` };
    const seen = new Set<string>();
    let pages = 0;
    let largestBytes = 0;
    let cursor: string | undefined;
    let first: Listing['first'] | undefined;
    const started = Date.now();
    do {
        const res = await get(`${base}/v1/emails?inbox=${inbox}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, auth);
        first ??= { status: res.status, nosniff: res.headers['x-content-type-options'] as string | undefined, body: res.body.subarray(0, 120).toString() };
        if (res.status !== 200) {
            break;
        }

        pages++;
        largestBytes = Math.max(largestBytes, res.body.length);
        const page = JSON.parse(res.body.toString()) as { emails: { messageId: string }[]; nextCursor?: string };
        page.emails.forEach((e) => seen.add(e.messageId));
        cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { first: first!, pages, reached: seen.size, largestBytes, ms: Date.now() - started };
}

/** "first answer: 200 x-content-type-options=nosniff; 24 pages, emails reached: 24 of 24, largest page: 22.9 MiB". */
export function describeListing(listed: Listing, count: number): string {
    const { first } = listed;
    return `first answer: ${first.status} x-content-type-options=${first.nosniff ?? '(none)'}${first.status === 200 ? '' : ` body ${first.body}`}; ` +
        `${listed.pages} pages, emails reached: ${listed.reached} of ${count}, largest page: ${mib(listed.largestBytes)} MiB`;
}

async function main(): Promise<void> {
    const root = Path.resolve(option('root', Path.join(__dirname, '..', '..')));
    const count = Number(option('messages', '24'));
    const lines = Number(option('lines', '24000'));
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'list-budget-'));
    try {
        // Seeded with the package of `root` itself, so the schema is that version's; loaded by
        // its package name (its exports), which every version maps, whatever its dist/ layout.
        const load = createRequire(Path.join(root, 'package.json'));
        const { openEmbeddedStores } = load('inbox-capture/embedded-stores') as typeof import('../lib/service/embedded-stores');
        const { createInboxCapture } = load('inbox-capture') as typeof import('../lib/index');
        const capture = createInboxCapture(await openEmbeddedStores({ dataDir }));
        await capture.start();
        for (let i = 0; i < count; i++) {
            await capture.ingestRawEmail(bigMessage(i, lines), { recipients: ['victim@example.test'] });
        }

        const key = await capture.createKey('bench');
        await capture.close();
        console.log(`seeded ${count} messages of ${lines} lines (${mib(bigMessage(0, lines).length)} MiB each) in ${dataDir}`);

        const nodeFlags = option('node-flags', '').split(' ').filter((flag) => flag !== '');
        const child = ChildProcess.spawn(process.execPath, [...nodeFlags, Path.join(root, 'examples/standalone.js')], {
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
        const health = await startHealthProbe(`${base}/health`);
        const listed = await listEveryPage(base, key, 'victim');
        const healthReport = await health.stop();

        // Then GET one of each, by id, while /health is asked again.
        const getHealth = await startHealthProbe(`${base}/health`);
        const statuses: number[] = [];
        for (let i = 0; i < count; i++) {
            const res = await get(`${base}/v1/emails/${encodeURIComponent(`big-${i}@example.test`)}`, { authorization: `Bearer ${key}` });
            statuses.push(res.status);
        }

        const getReport = await getHealth.stop();
        const peak = peakRssOf(child.pid!);
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
        console.log(`${describeListing(listed, count)}, listing took ${listed.ms} ms`);
        console.log(`server peak RSS (VmHWM): ${mib(peak)} MiB; /health while listing ${describeHealth(healthReport)}`);
        console.log(`GET one of each: ${statuses.filter((s) => s === 200).length} of ${count} answered 200; /health meanwhile ${describeHealth(getReport)}`);
    }
    finally {
        Fs.rmSync(dataDir, { recursive: true, force: true });
    }
}

// Imported by attacks.ts for its pieces; run as a script, it runs the reproduction.
if (require.main === module) {
    main().catch((err: unknown) => {
        console.error(err);
        process.exit(1);
    });
}
