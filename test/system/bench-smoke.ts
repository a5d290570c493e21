import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { execFile } from 'node:child_process';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { promisify } from 'node:util';
import { API_PROBES } from '../../bench/api-probes';
import { FAULT_RULE_PROBES } from '../../bench/fault-rule-probes';
import { RELAY_PROBES } from '../../bench/relay-probes';
import type { BenchResult } from '../../bench/report';
import { tempDir } from '../helpers/temp-dir';
import { transpileProject } from '../helpers/transpile-project';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const BENCH_DIR = Path.join(ROOT, 'dist-bench', 'bench');
const run = promisify(execFile);

/**
 * Every benchmark script (and attacks.ts, auth-guessing.ts, wal-pages.ts and in-thread-shapes.ts, not in run.ts); the smoke run of
 * each must finish and print its tables. Longest first: two at a time, the last ones end together.
 */
const BENCHMARKS = ['search', 'long-poll-fanout', 'attacks', 'get-one', 'hostile-messages', 'send-latency', 'faults', 'inboxes', 'thread-cpu', 'list', 'parse-ceiling', 'retention', 'auth-check', 'smtp-ingest', 'cpu-profile', 'auth-guessing', 'fsync-bandwidth', 'wal-pages', 'in-thread-shapes', 'floor-obligations'];

/** Longest one smoke run may take, ms: they take seconds; the margin is for a busy machine. */
const SMOKE_TIMEOUT_MS = 180_000;

/**
 * Smoke runs in flight at once. Much of a smoke's time is fixed phases, start-ups and
 * waits on child processes, not CPU: two at a time cut the file's wall time by a third
 * or more; three were slower than two on the 2-core machine.
 */
const SMOKES_AT_ONCE = 2;

/** What one smoke run printed and the text of the file it wrote. */
interface SmokeRun {
    stdout: string;
    written: string;
}

/** A smoke run, or how it failed. */
type SmokeOutcome = SmokeRun | { error: unknown };

describe('bench', () => {

    let outDir: string;
    /** Each benchmark's smoke run (and run.js's, under 'run.js'), started by before() in the order of the tests. */
    const outcomes = new Map<string, Promise<SmokeOutcome>>();

    before({ timeout: SMOKE_TIMEOUT_MS }, async () => {
        // The benchmarks run compiled (dist-bench/, what `tsc -p bench/tsconfig.json` emits; their
        // types are npm run typecheck's); the standalone they start runs dist/ (npm run build).
        await Fs.rm(Path.join(ROOT, 'dist-bench'), { recursive: true, force: true });
        await transpileProject(Path.join(ROOT, 'bench', 'tsconfig.json'));
        outDir = await tempDir('bench-smoke');
        startSmokes();
    });

    after({ timeout: SMOKE_TIMEOUT_MS }, async () => {
        // A test that failed early leaves its neighbours' runs going: they end before the dir goes.
        await Promise.all(outcomes.values());
        await Fs.rm(outDir, { recursive: true, force: true });
    });

    /** Runs `<name>.js --smoke` and returns what it printed and its JSON result's text. */
    async function smoke(name: string): Promise<SmokeRun> {
        const json = Path.join(outDir, `${name}.json`);
        const { stdout } = await run(process.execPath, [Path.join(BENCH_DIR, `${name}.js`), '--smoke', '--json', json], {
            cwd: ROOT,
            timeout: SMOKE_TIMEOUT_MS,
            maxBuffer: 16 * 2 ** 20
        });
        return { stdout, written: await Fs.readFile(json, 'utf8') };
    }

    /** Runs run.js --smoke on two benchmarks, writing RESULTS.md into the temp dir. */
    async function smokeRunJs(): Promise<SmokeRun> {
        const results = Path.join(outDir, 'RESULTS.md');
        const { stdout } = await run(process.execPath, [Path.join(BENCH_DIR, 'run.js'), '--smoke', '--only', 'fsync-bandwidth,parse-ceiling', '--results', results], {
            cwd: ROOT,
            timeout: SMOKE_TIMEOUT_MS,
            maxBuffer: 16 * 2 ** 20
        });
        return { stdout, written: await Fs.readFile(results, 'utf8') };
    }

    /** Starts every smoke run, SMOKES_AT_ONCE at a time, in the order the tests read them. */
    function startSmokes(): void {
        const queue: Array<{ start: () => Promise<SmokeRun>; settle: (outcome: SmokeOutcome) => void }> = [];
        for (const [name, start] of [...BENCHMARKS.map((bench): [string, () => Promise<SmokeRun>] => [bench, () => smoke(bench)]), ['run.js', smokeRunJs] as const]) {
            outcomes.set(name, new Promise<SmokeOutcome>((settle) => queue.push({ start, settle })));
        }

        // Each free slot takes the next run: never more than SMOKES_AT_ONCE at once, none idle while runs wait.
        let next = 0;
        const slot = async (): Promise<void> => {
            while (next < queue.length) {
                const { start, settle } = queue[next++]!;
                settle(await start().catch((error: unknown) => ({ error })));
            }
        };
        for (let i = 0; i < SMOKES_AT_ONCE; i++) {
            void slot();
        }
    }

    /** The outcome of `name`'s smoke run; throws its error when it failed. */
    async function outcomeOf(name: string): Promise<SmokeRun> {
        const outcome = await outcomes.get(name)!;
        if ('error' in outcome) {
            throw outcome.error;
        }

        return outcome;
    }

    for (const name of BENCHMARKS) {
        describe(`${name} --smoke`, () => {

            it('completes and prints every table with figures', { timeout: SMOKE_TIMEOUT_MS }, async () => {
                const { stdout, written } = await outcomeOf(name);
                const result = JSON.parse(written) as BenchResult;
                expect(result.smoke).to.be.true();
                expect(result.tables.length).to.be.greaterThan(0);
                for (const table of result.tables) {
                    expect(table.rows.length, table.title).to.be.greaterThan(0);
                    expect(stdout).to.include(`**${table.title}**`);
                    for (const row of table.rows) {
                        expect(row.length, table.title).to.equal(table.columns.length);
                    }
                }

                expect(stdout).to.include('machine: ');
                expect(stdout).to.include(`Command: \`node dist-bench/bench/${name}.js --smoke\``);
                if (name === 'attacks') {
                    // Not a speed figure: each of the eight ran, got its clear answer, and the service stayed up.
                    const answers = result.tables[0]!.rows.map((row) => row[2]!);
                    expect(answers).to.have.length(8);
                    expect(answers.join('\n')).to.not.include('the harness failed').and.to.not.include('THE SERVICE EXITED');
                    expect(answers[2]).to.include('open to group or others: none');
                    expect(answers[3]).to.include('5 of 5 reached, 3 of 3 older');
                    expect(answers[5]).to.include('SMTP delivery: 250');
                    expect(answers[6]).to.include('TOO_MANY_RECIPIENTS');
                    expect(answers[7]).to.match(/^answers 200, the largest [\d.]+ MiB \(0\.\d\d × the message\)/);
                }

                if (name === 'floor-obligations') {
                    // Every variant (the floor, all obligations, all but each one) saved messages.
                    for (const table of result.tables) {
                        expect(table.rows).to.have.length(9);
                        for (const row of table.rows) {
                            expect(Number(row[1]!.replace(/,/g, '')), row.join(' | ')).to.be.greaterThan(0);
                        }
                    }
                }

                if (name === 'smtp-ingest') {
                    // Not a speed figure: every acknowledged message must be listed afterwards.
                    const listed = result.targets.find((t) => t.target.startsWith('every acknowledged message'));
                    expect(listed?.met, listed?.measured).to.be.true();
                    // The reference server runs in the same alternation, and every server's CPU is read.
                    const cells = result.tables.find((t) => t.columns.includes('server CPU %'))!;
                    const servers = new Set(cells.rows.map((row) => row[cells.columns.indexOf('server')]));
                    expect([...servers]).to.include(['ours (SQLite, embedded default)', 'MailDev 3.0.0', 'MailDev 2.2.1', 'sink: bare smtp-server',
                        'floor: one thread, durable, indexed', 'floor with our storage obligations']);
                    // Each floor stored what it acknowledged (its schema and batch write work).
                    for (const row of cells.rows.filter((r) => r[cells.columns.indexOf('server')]!.startsWith('floor'))) {
                        expect(row[cells.columns.indexOf('listed after')], row.join(' | ')).to.match(/^[1-9]\d* ok$/);
                    }

                    for (const row of cells.rows) {
                        expect(Number.isFinite(Number(row[cells.columns.indexOf('server CPU %')])), row.join(' | ')).to.be.true();
                    }
                }
            });
        });
    }

    describe('hardening-probes', () => {

        // Its smoke run takes about a minute (a service per probe and checkout, a Postgres), too
        // long for this suite: run it by hand (bench/README.md). Here, that it still holds every shape.
        it('holds the eight probe shapes of the fourth hardening round, one each', () => {
            const probes = [...RELAY_PROBES, ...API_PROBES, ...FAULT_RULE_PROBES];
            expect(probes.map((p) => p.item).sort((a, b) => a - b)).to.equal([1, 2, 3, 4, 5, 6, 7, 8]);
            for (const probe of probes) {
                expect(probe.title).to.not.be.empty();
                expect(probe.run).to.be.a.function();
            }
        });
    });

    describe('run.js --smoke', () => {

        it('runs the chosen benchmarks and writes the results file with the targets table', { timeout: SMOKE_TIMEOUT_MS }, async () => {
            const { stdout, written } = await outcomeOf('run.js');
            expect(stdout).to.include('**Targets of the issue**');
            expect(stdout).to.include('ingestRawEmail with 16 calls in flight ≥ 60 %');
            expect(written).to.include('# Benchmark results');
            expect(written).to.include('### Parse ceiling');
            expect(written).to.include('machine: ');
        });
    });
});
