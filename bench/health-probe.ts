import * as ChildProcess from 'node:child_process';

/** How often the probe asks, ms (issue 17: "/health every 50 ms"). */
export const HEALTH_EVERY_MS = 50;

/** What the probe saw between start and stop. */
export interface HealthReport {
    /** Slowest answer, ms (a failure counts with the time it took). */
    slowestMs: number;
    asked: number;
    /** Answers other than 200, resets and refused connections. */
    failed: number;
}

// The prober's own process: the caller may parse pages of 24 MiB or hold 20,000 sockets,
// which would delay its timing. One kept-alive connection (Node's default agent), one
// request at a time; asks until its stdin closes, then prints its report as JSON. A first
// request, not counted, warms the connection and the prober's own code up.
const PROBE = `
const http = require('node:http');
const [url, every] = process.argv.slice(1);
let slowestMs = 0, failed = 0, asked = 0, done = false;
process.stdin.on('end', () => { done = true; }).resume();
const warm = () => http.get(url, (res) => { res.resume(); res.on('end', () => { console.log('ready'); ask(); }); }).on('error', () => setTimeout(warm, Number(every)));
const ask = () => {
    if (done) { console.log(JSON.stringify({ slowestMs, asked, failed })); return; }
    const t = process.hrtime.bigint();
    const took = () => Number(process.hrtime.bigint() - t) / 1e6;
    http.get(url, (res) => { res.resume(); res.on('end', () => { asked++; slowestMs = Math.max(slowestMs, took()); failed += res.statusCode === 200 ? 0 : 1; setTimeout(ask, Number(every)); }); })
        .on('error', () => { asked++; failed++; slowestMs = Math.max(slowestMs, took()); setTimeout(ask, Number(every)); });
};
warm();
`;

/** A running probe; stop() ends it and resolves with its report. */
export interface HealthProbe {
    stop(): Promise<HealthReport>;
}

/** Asks `url` (a `/health`) every `everyMs` from a child process until stopped; resolves once it asks. */
export async function startHealthProbe(url: string, everyMs = HEALTH_EVERY_MS): Promise<HealthProbe> {
    const child = ChildProcess.spawn(process.execPath, ['-e', PROBE, url, String(everyMs)], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
        const check = () => {
            if (out.startsWith('ready\n')) {
                child.stdout.off('data', check);
                resolve();
            }
        };
        child.stdout.on('data', check);
        void exited.then(() => reject(new Error('the /health probe exited before its first answer')));
    });
    return {
        async stop() {
            child.stdin.end();
            await exited;
            return JSON.parse(out.slice('ready\n'.length)) as HealthReport;
        }
    };
}

/** "slowest 43 ms of 34, 0 failed". */
export function describeHealth(report: HealthReport): string {
    return `slowest ${report.slowestMs.toFixed(0)} ms of ${report.asked}, ${report.failed} failed`;
}
