'use strict';

// Runs lab with the given arguments and succeeds only when lab got to the end: its
// report written and no test failed. A test process can end early with exit code 0
// (an event loop with nothing left to do while a test awaits a promise that never
// settles, or a library's exit hook calling process.exit(0)); lab then prints no
// summary, and without this check the run would pass having run part of the suite.
// Lab writes its console report to stdout as usual, and a JSON report to a temp file
// that is read here once lab has exited. A third report (scripts/lab/) times each test
// with its file and hooks, to print where the run spent its time; set LAB_TIMINGS_FILE to
// keep it (scripts/lab/slowest.js reads it, and sets two runs side by side).
//
//   node scripts/run-lab.js --typescript -m 120000 test/lib test/adapters test/system

const { spawn } = require('node:child_process');
const Fs = require('node:fs');
const Os = require('node:os');
const Path = require('node:path');
const { describeRun } = require('./lab/slowest');

const args = process.argv.slice(2);
if (args.some((arg) => arg === '-r' || arg === '--reporter' || arg === '-o' || arg === '--output')) {
    console.error('run-lab: choose no reporter or output: this script sets them (console on stdout, and JSON it checks)');
    process.exit(2);
}

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'inbox-capture-lab-'));
const reportFile = Path.join(dir, 'report.json');
const timingsFile = Path.join(dir, 'timings.json');
const lab = require.resolve('@hapi/lab/bin/lab');
const timings = [
    '--require', Path.join(__dirname, 'lab', 'record-files.js'),
    '-r', Path.join(__dirname, 'lab', 'timings-reporter.js'), '-o', timingsFile
];
const child = spawn(process.execPath, [lab, ...args, '-r', 'console', '-o', 'stdout', '-r', 'json', '-o', reportFile, ...timings], { stdio: 'inherit' });

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => child.kill(signal));
}

child.once('error', (err) => {
    console.error(`run-lab: lab could not be started: ${err.message}`);
    finish(1);
});

child.once('exit', (code, signal) => {
    const report = readReport();
    const ended = signal ? `signal ${signal}` : `exit code ${code}`;
    if (!report) {
        console.error(`\nrun-lab: FAILED: lab ended (${ended}) before writing its report: the run stopped part way, and the tests after the last one printed above did not run.`);
        return finish(code || 1);
    }

    const tests = Object.values(report.tests).flat();
    // A passing or skipped test has `err: false`; a failed one its message, or no `err` at
    // all when it failed without one (a test whose before() failed).
    const failed = tests.filter((test) => test.err !== false).length;
    const errors = report.errors?.length ?? 0;
    const leaks = report.leaks?.length ?? 0;
    const verdict = `${tests.length} tests reported, ${failed} failed, ${errors} errors outside tests, ${leaks} leaked globals`;
    if (code !== 0 || failed > 0 || errors > 0 || leaks > 0) {
        // Where the time went, too: a failed CI run is the one whose budget is asked about next.
        console.error(slowest(report, 10));
        console.error(`run-lab: FAILED (${ended}): ${verdict}`);
        return finish(code || 1);
    }

    console.error(`run-lab: lab finished its report: ${verdict}`);
    console.error(slowest(report, 10));
    finish(0);
});

function readReport() {
    try {
        const report = JSON.parse(Fs.readFileSync(reportFile, 'utf8'));
        return report && typeof report.tests === 'object' ? report : null;
    }
    catch {
        return null;
    }
}

// CI has a time budget: naming where a run spent its time shows what to trim first.
// The timings report counts hooks and names files; without it (lab stopped before writing
// it), lab's JSON gives the blocks by their tests' time alone. That JSON joins a test's
// describe titles with '/', which titles also hold, so blocks are ranked whole.
function slowest(report, count) {
    const timings = readTimings();
    if (timings) {
        return describeRun(timings, count);
    }

    const blocks = Object.entries(report.tests)
        .map(([path, tests]) => [path, tests.reduce((sum, test) => sum + (test.duration ?? 0), 0)])
        .sort((a, b) => b[1] - a[1])
        .slice(0, count)
        .map(([path, ms]) => `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${path}`);
    return [`run-lab: lab ran ${(report.duration / 1000).toFixed(0)} s; the slowest describe blocks (their tests' time, hooks not counted):`, ...blocks].join('\n');
}

function readTimings() {
    try {
        const timings = JSON.parse(Fs.readFileSync(timingsFile, 'utf8'));
        if (process.env.LAB_TIMINGS_FILE) {
            Fs.writeFileSync(process.env.LAB_TIMINGS_FILE, JSON.stringify(timings));
        }

        return timings;
    }
    catch {
        return null;
    }
}

function finish(code) {
    Fs.rmSync(dir, { recursive: true, force: true });
    process.exit(code);
}
