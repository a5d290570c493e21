import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as Path from 'node:path';
import { runNode } from '../helpers/child-process';

const { describe, it } = exports.lab = Lab.script();
const { expect } = Code;

const ROOT = Path.join(__dirname, '..', '..');
const RUNNER = Path.join(ROOT, 'scripts', 'run-lab.js');
const LAB = require.resolve('@hapi/lab/bin/lab');
const fixture = (name: string) => Path.join(ROOT, 'test', 'fixtures', 'run-lab', name);
const env = { ...process.env, NO_COLOR: '1' };

/** The runner on one fixture file, as npm test runs it on the suite. */
function runLab(...args: string[]) {
    return runNode([RUNNER, ...args], { cwd: ROOT, env });
}

/** Lab alone on one fixture file: what npm test ran before the runner. */
function plainLab(...args: string[]) {
    return runNode([LAB, ...args], { cwd: ROOT, env });
}

describe('scripts/run-lab.js', () => {

    it('succeeds when lab finished its report and every test passed, and says how many ran and the slowest blocks', async () => {
        const result = await runLab(fixture('passes.js'));
        expect(result.code).to.equal(0);
        expect(result.stdout).to.contain('2 tests complete');
        expect(result.stderr).to.contain('run-lab: lab finished its report: 2 tests reported, 0 failed');
        // Where the run spent its time, by file and by block, so the CI budget shows what to trim.
        expect(result.stderr).to.match(/run-lab: lab ran \d+ s; the slowest files[^]*the slowest describe blocks/);
        expect(result.stderr).to.match(/^ +\d+\.\d s {2}test\/fixtures\/run-lab\/passes\.js$/m);
        expect(result.stderr).to.match(/^ +\d+\.\d s {2}a passing file$/m);
    });

    it('counts a block\'s before() in its time, and keeps the timings where LAB_TIMINGS_FILE says', async () => {
        const dir = mkdtempSync(Path.join(tmpdir(), 'run-lab-timings-'));
        try {
            const kept = Path.join(dir, 'timings.json');
            const result = await runNode([RUNNER, fixture('slow-before.js'), fixture('passes.js')], { cwd: ROOT, env: { ...env, LAB_TIMINGS_FILE: kept } });
            expect(result.code).to.equal(0);
            // Lab's own report gives the test 0 ms; the hook's second is the block's.
            const line = /^ +(\d+\.\d) s {2}a block with a slow before$/m.exec(result.stderr);
            expect(line, result.stderr).to.not.be.null();
            expect(Number(line![1])).to.be.at.least(0.9);
            expect(result.stderr.indexOf('test/fixtures/run-lab/slow-before.js')).to.be.below(result.stderr.indexOf('test/fixtures/run-lab/passes.js'));

            const timings = JSON.parse(readFileSync(kept, 'utf8')) as { tests: Array<{ file: string; path: string; title: string; wall: number }> };
            expect(timings.tests.map((t) => [t.file, t.path, t.title])).to.equal([
                ['test/fixtures/run-lab/slow-before.js', 'a block with a slow before', 'passes at once'],
                ['test/fixtures/run-lab/passes.js', 'a passing file', 'passes'],
                ['test/fixtures/run-lab/passes.js', 'a passing file', 'passes again']
            ]);

            // Two runs side by side.
            const compared = await runNode([Path.join(ROOT, 'scripts', 'lab', 'slowest.js'), kept, kept], { cwd: ROOT, env });
            expect(compared.code).to.equal(0);
            expect(compared.stdout).to.match(/^ +\d+\.\d +\d+\.\d {2}test\/fixtures\/run-lab\/slow-before\.js$/m);
        }
        finally {
            rmSync(dir, { recursive: true, force: true });
        }
    });

    it('fails when a test fails', async () => {
        const result = await runLab(fixture('fails.js'));
        expect(result.code).to.equal(1);
        expect(result.stdout).to.contain('1 of 2 tests failed');
        expect(result.stderr).to.contain('run-lab: FAILED (exit code 1): 2 tests reported, 1 failed');
        // Where the time went is named on a failed run too.
        expect(result.stderr).to.match(/run-lab: lab ran \d+ s; the slowest files[^]*the slowest describe blocks[^]*run-lab: FAILED/);
    });

    it('fails a run that ends early with code 0 because before() awaits a promise that never settles', async () => {
        // The hazard itself: lab alone exits 0 without a summary.
        const plain = await plainLab(fixture('never-settles.js'));
        expect(plain.code).to.equal(0);
        expect(plain.stdout).to.not.contain('tests complete');
        expect(plain.stdout).to.not.contain('tests failed');

        const result = await runLab(fixture('never-settles.js'));
        expect(result.code).to.equal(1);
        expect(result.stderr).to.contain('run-lab: FAILED: lab ended (exit code 0) before writing its report');
    });

    it('fails a run that a library ends with process.exit(0) from its beforeExit hook', async () => {
        const plain = await plainLab(fixture('exit-hook.js'));
        expect(plain.code).to.equal(0);
        expect(plain.stdout).to.not.contain('tests complete');

        const result = await runLab(fixture('exit-hook.js'));
        expect(result.code).to.equal(1);
        expect(result.stderr).to.contain('run-lab: FAILED: lab ended (exit code 0) before writing its report');
    });

    it('fails a before() that never settles while the event loop stays busy, at the context timeout', async () => {
        const started = Date.now();
        const result = await runLab('-M', '1000', fixture('never-settles-busy.js'));
        expect(result.code).to.equal(1);
        expect(result.stdout).to.contain('Timed out (1000ms) - Before a server that never comes up');
        expect(result.stderr).to.contain('run-lab: FAILED (exit code 1): 1 tests reported, 1 failed, 1 errors outside tests');
        // Seconds, not the minutes a hung hook would take.
        expect(Date.now() - started).to.be.below(60_000);
    });

    it('with --shards runs every test file once, in lab processes side by side, and sums their reports', async () => {
        const dir = mkdtempSync(Path.join(tmpdir(), 'run-lab-shards-'));
        try {
            const kept = Path.join(dir, 'timings.json');
            const result = await runNode([RUNNER, '--shards', '2', fixture('shardable'), fixture('slow-before.js')], { cwd: ROOT, env: { ...env, LAB_TIMINGS_FILE: kept } });
            expect(result.code, result.stderr).to.equal(0);
            expect(result.stderr).to.match(/run-lab: lab finished its report: 4 tests reported, 0 failed, 0 errors outside tests, 0 leaked globals \(2 shards: \d+ s, \d+ s\)/);
            expect(result.stdout).to.contain('run-lab: the console report of shard 2 of 2:');
            const timings = JSON.parse(readFileSync(kept, 'utf8')) as { tests: Array<{ file: string }> };
            expect(timings.tests.map((t) => t.file).sort()).to.equal([
                'test/fixtures/run-lab/shardable/nested/three.js',
                'test/fixtures/run-lab/shardable/one.js',
                'test/fixtures/run-lab/shardable/two.js',
                'test/fixtures/run-lab/slow-before.js'
            ]);
        }
        finally {
            rmSync(dir, { recursive: true, force: true });
        }
    });

    it('with --shards fails when any shard ends before its report, or has a failed test', async () => {
        const stopped = await runLab('--shards', '2', fixture('passes.js'), fixture('never-settles.js'));
        expect(stopped.code).to.equal(1);
        expect(stopped.stderr).to.match(/run-lab: FAILED: lab shard [12] of 2 ended \(exit code 0\) before writing its report/);

        const failed = await runLab('--shards', '2', fixture('passes.js'), fixture('fails.js'));
        expect(failed.code).to.equal(1);
        expect(failed.stderr).to.match(/run-lab: FAILED \(shard [12] of 2 exit code 1\): 4 tests reported, 1 failed/);

        const refused = await runLab('--shards', '0', fixture('passes.js'));
        expect(refused.code).to.equal(2);
        expect(refused.stderr).to.contain('run-lab: --shards takes a whole number of lab processes, 1 or more, not 0');
    });

    it('with --alongside runs a command while lab runs, prints its output after lab\'s, and fails the run when it fails', async () => {
        const passed = await runLab('--alongside', 'node -e "console.log(\'typecheck said this\')"', fixture('passes.js'));
        expect(passed.code, passed.stderr).to.equal(0);
        expect(passed.stderr).to.contain('typecheck said this');
        expect(passed.stderr).to.match(/run-lab: `node -e .+` passed \(exit code 0\)/);
        expect(passed.stderr).to.contain('run-lab: lab finished its report: 2 tests reported, 0 failed');

        const failed = await runLab('--alongside', 'node -e "console.log(\'a type error\'); process.exit(3)"', fixture('passes.js'));
        expect(failed.code).to.equal(1);
        expect(failed.stderr).to.contain('a type error');
        expect(failed.stderr).to.match(/run-lab: `node -e .+` FAILED \(exit code 3\)/);
        expect(failed.stderr).to.match(/run-lab: FAILED \(`node -e .+` failed beside lab\): 2 tests reported, 0 failed/);

        const refused = await runLab('--alongside');
        expect(refused.code).to.equal(2);
        expect(refused.stderr).to.contain('run-lab: --alongside takes a command to run while lab runs');
    });

    it('refuses reporters of the caller: it sets its own and checks one of them', async () => {
        const result = await runLab('-r', 'tap', fixture('passes.js'));
        expect(result.code).to.equal(2);
        expect(result.stderr).to.contain('run-lab: choose no reporter or output');
    });

    it('is how npm test runs the suite, with a timeout for every hook, and .ci/run runs npm test', () => {
        const pkg = JSON.parse(readFileSync(Path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
        // The type check and the linter run beside lab, inside its step (quoted): the step is what follows the build.
        const labStep = pkg.scripts.test!.replace(/^npm run build && /, '');
        expect(labStep).to.match(/^node scripts\/run-lab\.js --shards 3 --alongside 'npm run typecheck && npm run lint' --typescript -m \d+ -M \d+ test\/lib test\/adapters test\/system$/);
        expect(pkg.scripts.test).to.not.match(/(^|&&)\s*lab\s/);

        const ci = readFileSync(Path.join(ROOT, '.ci', 'run'), 'utf8');
        expect(ci).to.match(/^npm ci && npm test$/m);
    });
});
