import { execFileSync, spawn } from 'node:child_process';
import * as Fs from 'node:fs';
import * as Os from 'node:os';
import * as Path from 'node:path';
import { parseArgs } from 'node:util';
import { describeMachine } from './machine';
import { markdownResult, markdownTable, verdict, type BenchResult } from './report';

/** Every benchmark, in the order they run (cheap and independent first). */
export const BENCHMARKS = ['fsync-bandwidth', 'parse-ceiling', 'send-latency', 'hostile-messages', 'smtp-ingest', 'cpu-profile', 'thread-cpu', 'get-one', 'long-poll-fanout', 'list', 'inboxes', 'retention', 'search', 'faults'] as const;

/** Longest a benchmark may run before it is killed, ms: a smoke run takes seconds, a full one minutes. */
const LIMIT_MS = { smoke: 180_000, full: 60 * 60_000 };
/** Full runs that take longer: search seeds and indexes 1,000,000 emails on two stores (about an hour in all). */
const FULL_LIMIT_MS: Partial<Record<string, number>> = { search: 3 * 60 * 60_000 };

const ROOT = Path.resolve(__dirname, '..', '..');

function gitDescription(): string {
    try {
        const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
        const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
        return `${head}${dirty ? ' with uncommitted changes' : ''}`;
    }
    catch {
        return 'unknown (not a git checkout)';
    }
}

/** Runs one benchmark script as a child process; resolves with its result (or rejects with its output). */
function runOne(name: string, smoke: boolean, outDir: string): Promise<BenchResult> {
    const json = Path.join(outDir, `${name}.json`);
    const args = [Path.join(__dirname, `${name}.js`), '--json', json, ...(smoke ? ['--smoke'] : [])];
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        const keep = (d: Buffer) => {
            output = (output + d.toString('utf8')).slice(-20_000);
            // Progress lines (stderr) are shown as they come; the tables are printed at the end.
            if (!smoke) {
                process.stderr.write(d);
            }
        };

        child.stdout.on('data', (d: Buffer) => {
            output = (output + d.toString('utf8')).slice(-20_000);
        });
        child.stderr.on('data', keep);
        const timer = setTimeout(() => child.kill('SIGKILL'), smoke ? LIMIT_MS.smoke : FULL_LIMIT_MS[name] ?? LIMIT_MS.full);
        child.on('exit', (code, signal) => {
            clearTimeout(timer);
            if (code === 0 && Fs.existsSync(json)) {
                resolve(JSON.parse(Fs.readFileSync(json, 'utf8')) as BenchResult);
            }
            else {
                reject(new Error(`${name} exited with ${signal ?? code}:\n${output}`));
            }
        });
    });
}

async function main(): Promise<void> {
    const { values } = parseArgs({
        args: process.argv.slice(2),
        options: { smoke: { type: 'boolean' }, only: { type: 'string' }, results: { type: 'string' } },
        strict: true
    });
    const smoke = values.smoke === true;
    const only = values.only?.split(',');
    const unknown = only?.filter((n) => !(BENCHMARKS as readonly string[]).includes(n)) ?? [];
    if (unknown.length > 0) {
        throw new Error(`unknown benchmark(s) ${unknown.join(', ')}; known: ${BENCHMARKS.join(', ')}`);
    }

    // A full run of everything updates bench/RESULTS.md; partial and smoke runs only when told where.
    const resultsFile = values.results ?? (!smoke && !only ? Path.join(ROOT, 'bench', 'RESULTS.md') : undefined);
    const machine = describeMachine();
    const startedAt = new Date();
    // Read once, before any benchmark: the code measured is the build made before the run, whatever is edited during it.
    const code = gitDescription();
    console.log(`# inbox-capture benchmarks${smoke ? ' (smoke run)' : ''}\n${machine}\ncode: ${code}\n`);

    const outDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'ic-bench-run-'));
    const results: BenchResult[] = [];
    const failures: string[] = [];
    try {
        for (const name of BENCHMARKS.filter((n) => !only || only.includes(n))) {
            const begin = Date.now();
            console.error(`running ${name}${smoke ? ' --smoke' : ''} ...`);
            try {
                const result = await runOne(name, smoke, outDir);
                results.push(result);
                console.log(`${markdownResult(result)}\n`);
            }
            catch (err) {
                failures.push(`${name}: ${(err as Error).message.split('\n').slice(0, 30).join('\n')}`);
                console.error(String(err));
            }

            console.error(`${name} done in ${((Date.now() - begin) / 1000).toFixed(0)} s`);
        }
    }
    finally {
        Fs.rmSync(outDir, { recursive: true, force: true });
    }

    const summary = markdownTable({
        // Issue 15's targets (SMTP ingest and GET one against MailDev 3.0.0 and 2.2.1, ingest vs parse),
        // and from before, listing and long-poll; crash recovery and kill -9 are the test suite's.
        title: 'Targets of the issue',
        columns: ['benchmark', 'target', 'measured', 'met'],
        rows: results.flatMap((r) => r.targets.map((t) => [r.name, t.target, t.measured, verdict(t.met)]))
    });
    console.log(summary);
    if (failures.length > 0) {
        console.log(`\nFAILED:\n${failures.join('\n\n')}`);
    }

    if (resultsFile) {
        const document = [
            '# Benchmark results',
            '',
            `Latest \`npm run bench\`, ${startedAt.toISOString()} (${((Date.now() - startedAt.getTime()) / 60_000).toFixed(0)} min).`,
            '',
            `- ${machine}`,
            `- code: ${code}`,
            '- Every figure below comes from this one run; ratios compare servers measured in it, alternating.',
            '',
            summary,
            '',
            ...results.map((r) => `${markdownResult(r)}\n`),
            ...(failures.length > 0 ? ['## Failed', '', '```', ...failures, '```'] : [])
        ].join('\n');
        Fs.writeFileSync(resultsFile, `${document}\n`);
        console.error(`wrote ${resultsFile}`);
    }

    process.exitCode = failures.length > 0 ? 1 : 0;
}

main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
});
