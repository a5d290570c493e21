import { parseMessage, emailText } from '../lib/mime/parse';
import { linksAndCodesOf } from '../lib/extract/links-and-codes';
import { searchTextOf } from '../lib/extract/search-text';
import { isSmallMessage, SMALL_MESSAGE_BYTES } from '../lib/mime/small-message';
import { runBench, type BenchArgs, type TargetCheck } from './report';
import { fmt } from './stats';

/**
 * What a parse on the calling thread costs for the worst shapes a small message can take:
 * each shape filled up to a size, parsed with its links, codes and folded text as the
 * parse worker does, timed on this thread. The shapes are the ones that made parses slow
 * (addresses, groups, encoded words, nesting, parts, HTML depth, long labels, header
 * lines, a body dense with links and digits). Chooses SMALL_MESSAGE_BYTES (bench/README.md,
 * "Tuned constants"); which shapes the limits on counts keep off this thread is for the
 * gate to say (lib/mime/small-message.ts).
 */

/** Sizes measured, bytes: the last but one just under SMALL_MESSAGE_BYTES, the last four times it. */
const SIZES = [1024, 4096, SMALL_MESSAGE_BYTES - 512, 4 * SMALL_MESSAGE_BYTES];
/** Parses of each shape and size; the slowest is reported. */
const REPS = 60;
/** What a parse on the calling thread may cost at most, ms of CPU: a tenth of `/health`'s 100 ms. */
const ADMITTED_MS = 10;

const HEAD = 'From: a@x.test\r\nTo: b@x.test\r\nSubject: s\r\nMessage-ID: <m@x.test>\r\n';

/** `unit` repeated to fill about `bytes`. */
function fill(unit: string, bytes: number): string {
    return unit.repeat(Math.max(1, Math.floor(bytes / unit.length)));
}

/** Each shape, built to about `bytes`. */
export const SHAPES: Record<string, (bytes: number) => Buffer> = {
    'plain text': (n) => Buffer.from(`${HEAD}\r\n${fill('Hello there, a normal line of text.\r\n', n)}`),
    'To: many addresses': (n) => Buffer.from(`From: a@x.test\r\nTo: ${fill('r@x.test, ', n)}z@x.test\r\nSubject: s\r\n\r\nbody\r\n`),
    'To: nested groups': (n) => {
        const depth = Math.floor(n / 8);
        return Buffer.from(`From: a@x.test\r\nTo: ${'g:'.repeat(depth)}r@x.test${';'.repeat(depth)}\r\nSubject: s\r\n\r\nbody\r\n`);
    },
    'To: one long xn-- label': (n) => Buffer.from(`From: a@x.test\r\nTo: r@xn--${'a'.repeat(n)}\r\nSubject: s\r\n\r\nbody\r\n`),
    'To: many 63-char xn-- labels': (n) => Buffer.from(`From: a@x.test\r\nTo: ${fill(`r@xn--${'a'.repeat(57)}.test, `, n)}z@x.test\r\nSubject: s\r\n\r\nbody\r\n`),
    'Subject: encoded words': (n) => Buffer.from(`From: a@x.test\r\nTo: b@x.test\r\nSubject: ${fill('=?utf-8?Q?caf=C3=A9?= ', n)}\r\n\r\nbody\r\n`),
    'Subject: one folded line': (n) => Buffer.from(`From: a@x.test\r\nTo: b@x.test\r\nSubject: ${fill('word\r\n ', n)}\r\n\r\nbody\r\n`),
    'header lines': (n) => Buffer.from(`${HEAD}${fill('X-A: b\r\n', n)}\r\nbody\r\n`),
    'multipart nesting': (n) => {
        const depth = Math.floor(n / 80);
        let open = '';
        let close = '';
        for (let i = 0; i < depth; i++) {
            open += `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n`;
            close = `\r\n--b${i}--\r\n${close}`;
        }

        return Buffer.from(`${HEAD}${open}Content-Type: text/plain\r\n\r\nbottom${close}`);
    },
    'multipart parts': (n) => {
        const part = '--b\r\nContent-Type: text/plain\r\n\r\nx\r\n';
        return Buffer.from(`${HEAD}Content-Type: multipart/mixed; boundary="b"\r\n\r\n${fill(part, n)}--b--\r\n`);
    },
    'attachment parts': (n) => {
        const part = '--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="a.bin"\r\n\r\nx\r\n';
        return Buffer.from(`${HEAD}Content-Type: multipart/mixed; boundary="b"\r\n\r\n${fill(part, n)}--b--\r\n`);
    },
    'HTML nesting': (n) => Buffer.from(`${HEAD}Content-Type: text/html\r\n\r\n${fill('<div>', n / 2)}deep${fill('</div>', n / 2)}\r\n`),
    'HTML links': (n) => Buffer.from(`${HEAD}Content-Type: text/html\r\n\r\n${fill('<a href="https://x.test/a?b=1">l</a> ', n)}\r\n`),
    'text links and digits': (n) => Buffer.from(`${HEAD}\r\n${fill('https://x.test/p?q=1 123456 a@b.test ', n)}\r\n`),
    'text one long line of digits': (n) => Buffer.from(`${HEAD}\r\n${'1'.repeat(n)}\r\n`),
    'quoted-printable soft breaks': (n) => Buffer.from(`${HEAD}Content-Transfer-Encoding: quoted-printable\r\n\r\n${fill('=\r\n', n)}\r\n`),
    'base64 attachment': (n) => Buffer.from(`${HEAD}Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n${fill('QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkwMTIzNDU2Nzg5MDEyMzQ1Njc4OQ==\r\n', n)}--b--\r\n`)
};

/** A parse as the worker does it: the message, then its links, codes and folded text. */
async function parseAndExtract(raw: Buffer): Promise<void> {
    const parsed = await parseMessage(raw);
    const text = emailText(parsed);
    linksAndCodesOf(text);
    searchTextOf(text.body, parsed.textFromHtml);
}

/** Median, 95th percentile and slowest CPU time (the process's, this thread the only busy one) of `reps` parses of `raw`, ms (each one alone). */
async function time(raw: Buffer, reps: number): Promise<{ max: number; p95: number; median: number }> {
    const times: number[] = [];
    for (let i = 0; i < reps; i++) {
        const started = process.cpuUsage();
        await parseAndExtract(raw);
        const used = process.cpuUsage(started);
        times.push((used.user + used.system) / 1000);
    }

    times.sort((a, b) => a - b);
    return { max: times[times.length - 1], p95: times[Math.floor(times.length * 0.95)], median: times[Math.floor(times.length / 2)] };
}

/** The gate's own cost on `raw`, µs a call (CPU, 2,000 calls). */
function gateCost(raw: Buffer): number {
    const started = process.cpuUsage();
    for (let i = 0; i < 2000; i++) {
        isSmallMessage(raw);
    }

    const used = process.cpuUsage(started);
    return (used.user + used.system) / 2000;
}

async function bench(args: BenchArgs) {
    const reps = args.smoke ? 2 : Number(args.values.reps ?? REPS);
    const sizes = args.smoke ? [1024] : SIZES;
    const rows: string[][] = [];
    let slowestAdmitted = 0;
    let slowestAdmittedMax = 0;
    // Warm-up: the JIT, not measured.
    for (const make of Object.values(SHAPES)) {
        await time(make(1024), args.smoke ? 1 : 20);
    }

    for (const [name, make] of Object.entries(SHAPES)) {
        const row = [name];
        for (const size of sizes) {
            const raw = make(size);
            const { max, p95, median } = await time(raw, reps);
            const small = isSmallMessage(raw);
            if (small) {
                slowestAdmitted = Math.max(slowestAdmitted, p95);
                slowestAdmittedMax = Math.max(slowestAdmittedMax, max);
            }

            row.push(`${fmt(median)} / ${fmt(p95)} / ${fmt(max)}${small ? ' **here**' : ''}`);
        }

        row.push(fmt(gateCost(make(SMALL_MESSAGE_BYTES - 512))));
        rows.push(row);
    }

    const targets: TargetCheck[] = [{
        target: `every shape parsed on the calling thread (**here**) takes at most ${ADMITTED_MS} ms of CPU (95th percentile)`,
        measured: `slowest ${fmt(slowestAdmitted)} ms (the slowest single parse ${fmt(slowestAdmittedMax)} ms)`,
        met: args.smoke ? null : slowestAdmitted <= ADMITTED_MS
    }];
    return {
        tables: [{
            title: `A parse with its links, codes and folded text on the calling thread, ms of CPU (median / 95th percentile / slowest of ${reps}), each shape filled to about the size`,
            columns: ['shape', ...sizes.map((s) => `${fmt(s / 1024)} KiB`), `the gate at ${fmt((SMALL_MESSAGE_BYTES - 512) / 1024)} KiB, µs`],
            rows
        }],
        targets,
        notes: ['CPU time of the process per parse (getrusage, every thread: a garbage collection in a parse counts), each parse alone; **here**: isSmallMessage() lets it parse on the calling thread, else it goes to a worker.']
    };
}

if (require.main === module) {
    runBench('Parse on the calling thread: the worst shapes of small mail', 'in-thread-shapes', bench, ['reps']);
}
