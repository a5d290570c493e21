/**
 * The seven attacks of issue 17, each against a running standalone service, each
 * answering what it sent and what the attacker got back. bench/attacks.ts runs them
 * in turn and measures the service around each.
 */

import { spawn } from 'node:child_process';
import * as Fs from 'node:fs/promises';
import * as Net from 'node:net';
import * as Path from 'node:path';
import { describeHealth, startHealthProbe } from './health-probe';
import { largeEmailAttack } from './large-email-attack';
import { bigMessageParts, describeListing, listEveryPage } from './list-budget';
import { mib } from './process-rss';
import { SmtpSession } from './smtp-client';
import { CLI, ROOT } from './standalone';

/** The service under attack. */
export interface AttackTarget {
    base: string;
    smtpPort: number;
    apiKey: string;
    dataDir: string;
    /** The service's environment, for the CLI against the same data. */
    env: NodeJS.ProcessEnv;
    /** The HTTP connection cap the service was started with. */
    maxHttpConnections: number;
    size: AttackSize;
}

/** How big each attack is: the issue's sizes, or scaled down. */
export type AttackSize = 'full' | 'quick' | 'smoke';

/** What an attack sent and the answer the attacker got. */
export interface AttackOutcome {
    sent: string;
    answer: string;
}

/** One attack: its number in the issue and how to run it. */
export interface Attack {
    item: number;
    title: string;
    run(target: AttackTarget): Promise<AttackOutcome>;
}

const FROM = 'attacker@example.test';

/** "250 × 5, 421 × 45". */
function tally(codes: Array<number | string>): string {
    const counts = new Map<string, number>();
    codes.forEach((code) => counts.set(String(code), (counts.get(String(code)) ?? 0) + 1));
    return [...counts].sort().map(([code, n]) => `${code} × ${n}`).join(', ');
}

/** A small message with the given Message-ID (raw, so it may hold any bytes). */
function smallMessage(messageId: string, to: string, subject: string): Buffer {
    return Buffer.from([`From: ${FROM}`, `To: ${to}`, `Subject: ${subject}`, `Message-ID: ${messageId}`, '', 'hello', ''].join('\r\n'));
}

/** Sends each message on one session, one after another; the final reply codes. */
async function sendEach(port: number, messages: Array<{ to: string; parts: Buffer[] }>): Promise<number[]> {
    const session = await SmtpSession.open(port);
    try {
        const codes: number[] = [];
        for (const message of messages) {
            const { code } = (await session.send(FROM, [message.to], message.parts));
            codes.push(code);
            if (code === 421) {
                // The server closed the connection (e.g. the memory budget ran out mid-DATA).
                break;
            }

            await session.reset();
        }

        return codes;
    }
    finally {
        await session.close();
    }
}

async function getJson<T>(target: AttackTarget, path: string): Promise<{ status: number; body: T }> {
    const res = await fetch(`${target.base}${path}`, { headers: { authorization: `Bearer ${target.apiKey}` } });
    return { status: res.status, body: await res.json() as T };
}

// 1. Large emails in one inbox, then list it.
const bigInbox: Attack = {
    item: 1,
    title: 'one inbox of large emails, listed',
    async run(target) {
        const [count, lines] = { full: [24, 24_000], quick: [4, 24_000], smoke: [2, 600] }[target.size];
        const messages = Array.from({ length: count }, (_, i) => ({ to: 'victim@example.test', parts: bigMessageParts(i, lines) }));
        const size = mib(messages[0]!.parts.reduce((sum, part) => sum + part.length, 0));
        const codes = await sendEach(target.smtpPort, messages);
        // The listing on its own too: the attack's columns also hold the ingest of the messages.
        const probe = await startHealthProbe(`${target.base}/health`);
        const listed = await listEveryPage(target.base, target.apiKey, 'victim');
        const health = await probe.stop();
        return {
            sent: `${count} × ${size} MiB (${lines} lines of 998 characters) to one inbox over SMTP, then \`GET /v1/emails\` and every page by cursor`,
            answer: `SMTP ${tally(codes)}; ${describeListing(listed, count)}; /health while listing: ${describeHealth(health)}`
        };
    }
};

/** What bench/fan-out-blobs.ts (issue 17 item 2) exports, as this harness uses it. */
interface FanOutModule {
    embeddedStorage(dataDir: string): unknown;
    reproduceFanOut(smtpPort: number, storage: unknown, which: 'large' | 'many-parts', recipients?: number): Promise<{ code: number; latencyMs: number; bytesAdded: number; blobsAdded: number; messageBytes: number }>;
}

/**
 * 2. Disk and work multiplied by recipients. The reproduction is item 2's own
 * (bench/fan-out-blobs.ts, on its branch): called when it is there, else this says so.
 */
const fanOut: Attack = {
    item: 2,
    title: 'one message to 100 recipients',
    async run(target) {
        let module: Partial<FanOutModule>;
        try {
            // eslint-disable-next-line @typescript-eslint/no-require-imports
            module = require('./fan-out-blobs') as Partial<FanOutModule>;
        }
        catch {
            module = {};
        }

        const recipients = target.size === 'smoke' ? 5 : 100;
        const sent = `a 2 MiB message (a text attachment) to ${recipients} recipients; a 100 KB message of 990 parts to ${recipients} recipients`;
        if (!module.reproduceFanOut || !module.embeddedStorage) {
            return { sent, answer: 'not run: bench/fan-out-blobs.ts (issue 17 item 2) is not in this checkout' };
        }

        const storage = module.embeddedStorage(target.dataDir);
        const answers: string[] = [];
        for (const which of ['large', 'many-parts'] as const) {
            const f = await module.reproduceFanOut(target.smtpPort, storage, which, recipients);
            answers.push(`${which}: ${f.code} after ${f.latencyMs.toFixed(0)} ms, storage +${mib(f.bytesAdded)} MiB, +${f.blobsAdded} blobs`);
        }

        return { sent, answer: answers.join('; ') };
    }
};

/** Every entry under `dir`, recursively, with its permission bits. */
async function modesUnder(dir: string): Promise<Array<{ path: string; file: boolean; mode: number }>> {
    const out: Array<{ path: string; file: boolean; mode: number }> = [];
    for (const entry of await Fs.readdir(dir, { withFileTypes: true })) {
        const path = Path.join(dir, entry.name);
        const stat = await Fs.lstat(path);
        out.push({ path, file: stat.isFile(), mode: stat.mode & 0o777 });
        if (stat.isDirectory()) {
            out.push(...await modesUnder(path));
        }
    }

    return out;
}

// 3. Captured mail readable by other local users.
const fileModes: Attack = {
    item: 3,
    title: 'modes of the data directory',
    async run(target) {
        const entries = [{ path: target.dataDir, file: false, mode: (await Fs.stat(target.dataDir)).mode & 0o777 }, ...await modesUnder(target.dataDir)];
        const modes = (file: boolean) => tally(entries.filter((e) => e.file === file).map((e) => `0${e.mode.toString(8)}`));
        const open = entries.filter((e) => (e.mode & 0o077) !== 0).map((e) => `${Path.relative(target.dataDir, e.path) || '.'} 0${e.mode.toString(8)}`);
        return {
            sent: '`stat` of every file and directory in the data directory (after attacks 1 and 2)',
            answer: `files: ${modes(true)}; directories: ${modes(false)}; open to group or others: ${open.length === 0 ? 'none' : open.slice(0, 5).join(', ')}`
        };
    }
};

// 4. A long Message-ID stops paging.
const longIds: Attack = {
    item: 4,
    title: 'long Message-IDs, then paging by cursor',
    async run(target) {
        const to = 'longid@example.test';
        const older = [0, 1, 2].map((i) => ({ to, parts: [smallMessage(`<older-${i}@example.test>`, to, `older ${i}`)] }));
        const long = [`<${'a'.repeat(10_000 - 15)}@example.test>`, `<${'漢'.repeat(2000)}@example.test>`]
            .map((id, i) => ({ to, parts: [smallMessage(id, to, `long ${i}`)] }));
        const codes = await sendEach(target.smtpPort, [...older, ...long]);

        // limit=1: each of the five emails is a page, reached only through the cursor before it.
        const statuses: number[] = [];
        const ids: string[] = [];
        let longestUrl = 0;
        let cursor: string | undefined;
        do {
            const path = `/v1/emails?inbox=longid&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
            longestUrl = Math.max(longestUrl, path.length);
            const { status, body } = await getJson<{ emails: Array<{ messageId: string }>; nextCursor?: string }>(target, path);
            statuses.push(status);
            cursor = status === 200 ? body.nextCursor : undefined;
            ids.push(...(status === 200 ? body.emails.map((e) => e.messageId) : []));
        } while (cursor !== undefined && statuses.length < 10);
        const reachedOlder = ids.filter((id) => id.startsWith('<older-') || id.startsWith('older-')).length;
        const gets = await Promise.all(ids.slice(0, 2).map(async (id) => (await getJson(target, `/v1/emails/${encodeURIComponent(id)}`)).status));
        return {
            sent: '3 small emails, then one with a 10,000-character Message-ID and one with 2,000 CJK characters (6,000 bytes), to one inbox over SMTP; then `limit=1` pages by cursor',
            answer: `SMTP ${tally(codes)}; the long ones stored as ids of ${ids.slice(0, 2).map((id) => id.length).join(' and ')} characters (GET by id: ${gets.join(', ')}); ` +
                `paging: ${tally(statuses)}, ${ids.length} of 5 reached, ${reachedOlder} of 3 older; longest request path ${longestUrl} characters`
        };
    }
};

// 5. Memory grows with concurrent large messages.
const concurrentLarge: Attack = {
    item: 5,
    title: 'large messages at once over SMTP',
    async run(target) {
        const [count, lines] = { full: [50, 24_000], quick: [8, 24_000], smoke: [4, 600] }[target.size];
        const codes = await Promise.all(Array.from({ length: count }, async (_, i) => {
            try {
                return (await sendEach(target.smtpPort, [{ to: 'flood@example.test', parts: bigMessageParts(i, lines, 'flood@example.test', 'flood') }]))[0]!;
            }
            catch (err) {
                return `error (${(err as Error).message.slice(0, 40)})`;
            }
        }));
        const size = mib(bigMessageParts(0, lines).reduce((sum, part) => sum + part.length, 0));
        return {
            sent: `${count} messages of ${size} MiB at once, one SMTP session each`,
            answer: `SMTP ${tally(codes)}`
        };
    }
};

/** GET /health on a connection of its own: the status line, or how the connection ended. */
function freshHealth(base: string): Promise<string> {
    const { hostname, port } = new URL(base);
    return new Promise((resolve) => {
        let answer = '';
        const socket = Net.connect(Number(port), hostname, () => socket.write(`GET /health HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`));
        socket.setEncoding('latin1');
        socket.on('data', (data: string) => {
            answer += data;
        });
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(answer === '' ? 'closed without an answer' : answer.split('\r\n')[0]!));
        socket.setTimeout(5000, () => socket.destroy());
    });
}

/** Opens `count` idle TCP connections, `batch` at a time; resolves with them once each is connected or failed. */
async function openIdle(base: string, count: number, batch = 500): Promise<{ sockets: Net.Socket[]; failed: number }> {
    const { hostname, port } = new URL(base);
    const sockets: Net.Socket[] = [];
    let failed = 0;
    for (let at = 0; at < count; at += batch) {
        await Promise.all(Array.from({ length: Math.min(batch, count - at) }, () => new Promise<void>((resolve) => {
            const socket = Net.connect(Number(port), hostname);
            socket.once('connect', () => {
                sockets.push(socket);
                resolve();
            });
            socket.once('error', () => {
                failed++;
                resolve();
            });
        })));
    }

    return { sockets, failed };
}

// 6. No HTTP connection cap.
const idleConnections: Attack = {
    item: 6,
    title: 'idle TCP connections to the HTTP port',
    async run(target) {
        // Below this process's own open-file limit (20,000 on the bench machine).
        const count = { full: 19_700, quick: 2_000, smoke: 300 }[target.size];
        const { sockets, failed } = await openIdle(target.base, count);
        let closedByServer = 0;
        sockets.forEach((socket) => socket.once('close', () => closedByServer++));
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const closedAtOnce = closedByServer;
        const held = sockets.length - closedAtOnce;
        const fresh = await freshHealth(target.base);
        const [smtp] = await sendEach(target.smtpPort, [{ to: 'conn@example.test', parts: [smallMessage('<during-idle@example.test>', 'conn@example.test', 'during')] }]);
        sockets.forEach((socket) => socket.destroy());
        // The server notices the closes in its own time; then a fresh connection is admitted again.
        let after = '';
        for (let i = 0; i < 50 && !after.includes(' 200 '); i++) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            after = await freshHealth(target.base);
        }

        return {
            sent: `${count.toLocaleString('en')} idle TCP connections to the HTTP port (cap ${target.maxHttpConnections.toLocaleString('en')}), held open; meanwhile /health and an SMTP delivery`,
            answer: `${sockets.length} connected (${failed} failed to connect), ${held} held, ${closedAtOnce} closed by the server at once; ` +
                `/health on the probe's open connection answered (see its columns); on a new connection: ${fresh}; SMTP delivery: ${smtp}; once they closed, /health on a new connection: ${after}`
        };
    }
};

/** Runs the CLI with `stdin`; its exit code and the first line of its stderr. */
function runCli(env: NodeJS.ProcessEnv, args: string[], stdin: Buffer): Promise<{ code: number | null; stderr: string }> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ['pipe', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (d: string) => {
            stderr += d;
        });
        child.on('error', reject);
        child.on('exit', (code) => resolve({ code, stderr: stderr.split('\n')[0]!.slice(0, 160) }));
        child.stdin.end(stdin);
    });
}

// 7. No cap on copies without an envelope.
const manyTo: Attack = {
    item: 7,
    title: '`ingest` without recipients, 2,000 To addresses',
    async run(target) {
        const to = Array.from({ length: 2000 }, (_, i) => `r${i}@example.test`).join(',\r\n ');
        const raw = smallMessage('<many-to@example.test>', to, 'many');
        const { code, stderr } = await runCli(target.env, ['ingest'], raw);
        const { body } = await getJson<{ emails: unknown[] }>(target, '/v1/emails?inbox=r0');
        return {
            sent: `\`inbox-capture ingest\` (no --recipient) of a ${(raw.length / 1000).toFixed(0)} KB message with 2,000 \`To\` addresses, against the service's data`,
            answer: `exit ${code}: ${stderr}; inbox r0 holds ${body.emails.length} emails`
        };
    }
};

// 8. One large email multiplied by its readers (issue 29 item 1): a service of its own, with a webhook receiver.
const largeEmail: Attack = {
    item: 8,
    title: 'one email of control characters, read by 10 long-polls, 4 GETs and a webhook answering 413',
    async run(target) {
        const malloc = target.env.MALLOC_MMAP_THRESHOLD_;
        const outcome = await largeEmailAttack(target.size, malloc === undefined ? {} : { MALLOC_MMAP_THRESHOLD_: malloc });
        return { sent: outcome.sent, answer: outcome.answer };
    }
};

/** The seven of issue 17, in its order, then issue 29's. */
export const ATTACKS: Attack[] = [bigInbox, fanOut, fileModes, longIds, concurrentLarge, idleConnections, manyTo, largeEmail];
