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
// --shards N (this script's own option) runs the test files in N lab processes side by
// side (scripts/lab/shards.js deals them out): most tests wait on child processes, disks
// and sockets, so a second process uses the time a first leaves idle. Every shard must
// finish its report; the first prints as it goes, the others when they end.
//
// --alongside "<command>" (also this script's own) runs a shell command while lab runs
// (npm test: the type check and the linter), prints its output after lab's, and fails
// the run when it fails.
//
//   node scripts/run-lab.js --typescript -m 120000 test/lib test/adapters test/system
//   node scripts/run-lab.js --shards 2 --typescript -m 120000 test/lib test/adapters test/system

const { spawn } = require('node:child_process');
const Fs = require('node:fs');
const Os = require('node:os');
const Path = require('node:path');
const { describeRun } = require('./lab/slowest');
const { dealShards, readWeights, splitArgs, testFiles } = require('./lab/shards');
const { describeAlongside, runAlongside } = require('./lab/alongside');

const { args, shardCount, alongside } = readOwnOptions(process.argv.slice(2));
if (args.some((arg) => arg === '-r' || arg === '--reporter' || arg === '-o' || arg === '--output')) {
    console.error('run-lab: choose no reporter or output: this script sets them (console on stdout, and JSON it checks)');
    process.exit(2);
}

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'inbox-capture-lab-'));
const lab = require.resolve('@hapi/lab/bin/lab');
const children = new Set();

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
        for (const child of children) {
            child.kill(signal);
        }
    });
}

main().catch((err) => {
    console.error(`run-lab: ${err.message}`);
    finish(1);
});

async function main() {
    const shards = plan();
    const besides = alongside.map((command) => runAlongside(command, children));
    const runs = await Promise.all(shards.map((files, i) => runShard(i, files)));
    const beside = await Promise.all(besides);
    const label = (run) => (shards.length > 1 ? `shard ${run.index + 1} of ${shards.length} ` : '');

    for (const run of runs.filter((r) => r.output !== null)) {
        process.stdout.write(`\nrun-lab: the console report of shard ${run.index + 1} of ${shards.length}:\n${run.output}`);
    }

    const timings = mergeTimings(runs.map((run) => run.timings));
    if (timings && process.env.LAB_TIMINGS_FILE) {
        Fs.writeFileSync(process.env.LAB_TIMINGS_FILE, JSON.stringify(timings));
    }

    for (const run of beside) {
        console.error(describeAlongside(run));
    }

    const besideFailed = beside.find((run) => run.code !== 0 || run.signal);
    const stopped = runs.filter((run) => !run.report);
    for (const run of stopped) {
        const ended = run.error ?? (run.signal ? `signal ${run.signal}` : `exit code ${run.code}`);
        console.error(`\nrun-lab: FAILED: lab ${label(run)}ended (${ended}) before writing its report: the run stopped part way, and the tests after the last one printed above did not run.`);
    }

    if (stopped.length > 0) {
        return finish(stopped.find((run) => run.code)?.code || 1);
    }

    const tests = runs.flatMap((run) => Object.values(run.report.tests).flat());
    // A passing or skipped test has `err: false`; a failed one its message, or no `err` at
    // all when it failed without one (a test whose before() failed).
    const failed = tests.filter((test) => test.err !== false).length;
    const errors = runs.reduce((sum, run) => sum + (run.report.errors?.length ?? 0), 0);
    const leaks = runs.reduce((sum, run) => sum + (run.report.leaks?.length ?? 0), 0);
    const verdict = `${tests.length} tests reported, ${failed} failed, ${errors} errors outside tests, ${leaks} leaked globals`;
    const exited = runs.find((run) => run.code !== 0);
    if (exited || failed > 0 || errors > 0 || leaks > 0 || besideFailed) {
        // Where the time went, too: a failed CI run is the one whose budget is asked about next.
        console.error(slowest(runs, timings, 10));
        const ended = exited ? `${label(exited)}exit code ${exited.code}` : besideFailed ? `\`${besideFailed.command}\` failed beside lab` : 'exit code 0';
        console.error(`run-lab: FAILED (${ended}): ${verdict}`);
        return finish(exited?.code || 1);
    }

    const shardNote = shards.length > 1 ? ` (${shards.length} shards: ${runs.map((run) => `${Math.round(run.report.duration / 1000)} s`).join(', ')})` : '';
    console.error(`run-lab: lab finished its report: ${verdict}${shardNote}`);
    console.error(slowest(runs, timings, 10));
    finish(0);
}

/** This script's own options (--shards N, --alongside "<command>"), taken out of the arguments lab gets. */
function readOwnOptions(argv) {
    const rest = [];
    const alongside = [];
    let count = 1;
    for (let i = 0; i < argv.length; ++i) {
        const beside = /^--alongside(?:=(.*))?$/.exec(argv[i]);
        if (beside) {
            const command = beside[1] ?? argv[++i];
            if (!command) {
                console.error('run-lab: --alongside takes a command to run while lab runs');
                process.exit(2);
            }

            alongside.push(command);
            continue;
        }

        const match = /^--shards(?:=(.*))?$/.exec(argv[i]);
        if (!match) {
            rest.push(argv[i]);
            continue;
        }

        const value = match[1] ?? argv[++i];
        count = Number(value);
        if (!Number.isSafeInteger(count) || count < 1) {
            console.error(`run-lab: --shards takes a whole number of lab processes, 1 or more, not ${value}`);
            process.exit(2);
        }
    }

    return { args: rest, shardCount: count, alongside };
}

/** The lab arguments of each shard: all of them for one; else the options and each shard's test files. */
function plan() {
    if (shardCount === 1) {
        return [null];
    }

    const { options, paths } = splitArgs(args);
    const files = testFiles(paths, options.includes('--typescript') || options.includes('-T'));
    return dealShards(files, shardCount, readWeights()).map((shard) => shard.files);
}

/** Runs one lab process; resolves with how it ended, its reports, and (shards after the first) its console output. */
function runShard(index, files) {
    const reportFile = Path.join(dir, `report-${index}.json`);
    const timingsFile = Path.join(dir, `timings-${index}.json`);
    const outputFile = Path.join(dir, `console-${index}.txt`);
    const labArgs = files ? [...splitArgs(args).options, ...files] : args;
    const reporters = [
        // The first shard prints as it goes; the others into a file, printed when all have ended.
        '-r', 'console', '-o', index === 0 ? 'stdout' : outputFile,
        '-r', 'json', '-o', reportFile,
        '--require', Path.join(__dirname, 'lab', 'record-files.js'),
        '-r', Path.join(__dirname, 'lab', 'timings-reporter.js'), '-o', timingsFile
    ];

    return new Promise((resolve) => {
        const child = spawn(process.execPath, [lab, ...labArgs, ...reporters], { stdio: 'inherit' });
        children.add(child);
        const done = (outcome) => {
            children.delete(child);
            resolve({
                index,
                ...outcome,
                report: readJson(reportFile, (report) => typeof report?.tests === 'object'),
                timings: readJson(timingsFile, (timings) => Array.isArray(timings?.tests)),
                output: index === 0 ? null : readText(outputFile)
            });
        };

        child.once('error', (err) => done({ code: 1, signal: null, error: `could not be started: ${err.message}` }));
        child.once('exit', (code, signal) => done({ code, signal }));
    });
}

function readJson(file, valid) {
    try {
        const value = JSON.parse(Fs.readFileSync(file, 'utf8'));
        return valid(value) ? value : null;
    }
    catch {
        return null;
    }
}

function readText(file) {
    try {
        return Fs.readFileSync(file, 'utf8');
    }
    catch {
        return '';
    }
}

/** The shards' timings as one run: their tests together, the run as long as the longest shard. */
function mergeTimings(all) {
    const present = all.filter(Boolean);
    if (present.length === 0) {
        return null;
    }

    return { duration: Math.max(...present.map((t) => t.duration)), cwd: present[0].cwd, tests: present.flatMap((t) => t.tests) };
}

// CI has a time budget: naming where a run spent its time shows what to trim first.
// The timings report counts hooks and names files; without it (lab stopped before writing
// it), lab's JSON gives the blocks by their tests' time alone. That JSON joins a test's
// describe titles with '/', which titles also hold, so blocks are ranked whole.
function slowest(runs, timings, count) {
    if (timings && runs.every((run) => run.timings)) {
        return describeRun(timings, count);
    }

    const blocks = runs.flatMap((run) => Object.entries(run.report.tests))
        .map(([path, tests]) => [path, tests.reduce((sum, test) => sum + (test.duration ?? 0), 0)])
        .sort((a, b) => b[1] - a[1])
        .slice(0, count)
        .map(([path, ms]) => `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${path}`);
    const duration = Math.max(...runs.map((run) => run.report.duration));
    return [`run-lab: lab ran ${(duration / 1000).toFixed(0)} s; the slowest describe blocks (their tests' time, hooks not counted):`, ...blocks].join('\n');
}

function finish(code) {
    Fs.rmSync(dir, { recursive: true, force: true });
    process.exit(code);
}
