'use strict';

// Where a lab run spent its time, from the JSON that ./timings-reporter.js writes: the
// slowest files and describe blocks by wall time (their before() hooks counted), so a CI
// budget shows what to trim first.
//
//   node scripts/lab/slowest.js timings.json [count]        (one run)
//   node scripts/lab/slowest.js before.json after.json [count]  (two runs side by side)
//   node scripts/lab/slowest.js --weights part.json... > scripts/lab/weights.json
//                                  (seconds by file, which run-lab --shards deals by)

const Fs = require('node:fs');

/** Seconds by file and by block, slowest first, from one timings report. */
function summarize(timings) {
    const files = new Map();
    const blocks = new Map();
    for (const test of timings.tests) {
        add(files, test.file, test);
        add(blocks, test.path || '(no describe)', test);
    }

    return { seconds: timings.duration / 1000, files: ranked(files), blocks: ranked(blocks) };
}

function add(map, key, test) {
    const entry = map.get(key) ?? { name: key, wall: 0, tests: 0 };
    entry.wall += test.wall;
    entry.tests += 1;
    map.set(key, entry);
}

function ranked(map) {
    return [...map.values()].sort((a, b) => b.wall - a.wall);
}

/** The text run-lab prints: the run's length, then the slowest files and blocks. */
function describeRun(timings, count = 10) {
    const { seconds, files, blocks } = summarize(timings);
    const line = (entry) => `  ${(entry.wall / 1000).toFixed(1).padStart(7)} s  ${entry.name}`;
    return [
        `run-lab: lab ran ${seconds.toFixed(0)} s; the slowest files (wall time, before() hooks counted):`,
        ...files.slice(0, count).map(line),
        'run-lab: the slowest describe blocks (wall time, before() hooks counted):',
        ...blocks.slice(0, count).map(line)
    ].join('\n');
}

/** Two runs side by side: the files of either run's slowest, with both figures. */
function compareRuns(before, after, count = 20) {
    const a = summarize(before);
    const b = summarize(after);
    const table = (key) => {
        const was = new Map(a[key].map((entry) => [entry.name, entry.wall]));
        const now = new Map(b[key].map((entry) => [entry.name, entry.wall]));
        const names = [...new Set([...a[key].slice(0, count), ...b[key].slice(0, count)].map((entry) => entry.name))];
        names.sort((x, y) => Math.max(was.get(y) ?? 0, now.get(y) ?? 0) - Math.max(was.get(x) ?? 0, now.get(x) ?? 0));
        const cell = (ms) => (ms === undefined ? '-' : (ms / 1000).toFixed(1)).padStart(7);
        return names.map((name) => `  ${cell(was.get(name))} ${cell(now.get(name))}  ${name}`);
    };

    return [
        `lab ran ${a.seconds.toFixed(0)} s before, ${b.seconds.toFixed(0)} s after (wall time, s: before, after)`,
        'files:', ...table('files'),
        'describe blocks:', ...table('blocks')
    ].join('\n');
}

/** Seconds by file (its tests' wall time), over one or more runs of different files; the files sorted. */
function weightsOf(runs) {
    const ms = {};
    for (const { name, wall } of runs.flatMap((run) => summarize(run).files)) {
        ms[name] = (ms[name] ?? 0) + wall;
    }

    return Object.fromEntries(Object.entries(ms).sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, total]) => [name, Math.round(total / 100) / 10]));
}

module.exports = { summarize, describeRun, compareRuns, weightsOf };

if (require.main === module) {
    const args = process.argv.slice(2);
    if (args[0] === '--weights') {
        console.log(JSON.stringify(weightsOf(args.slice(1).map((file) => JSON.parse(Fs.readFileSync(file, 'utf8')))), null, 1));
        process.exit(0);
    }

    const count = /^\d+$/.test(args.at(-1) ?? '') ? Number(args.pop()) : undefined;
    const runs = args.map((file) => JSON.parse(Fs.readFileSync(file, 'utf8')));
    if (runs.length === 1) {
        console.log(describeRun(runs[0], count));
    }
    else if (runs.length === 2) {
        console.log(compareRuns(runs[0], runs[1], count));
    }
    else {
        console.error('usage: node scripts/lab/slowest.js timings.json [before-or-after.json] [count]');
        process.exit(2);
    }
}
