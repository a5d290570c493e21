'use strict';

// Splitting a lab run into shards that run side by side: the test files the paths name,
// found as lab finds them, dealt out so that each shard gets about the same time by the
// weights of an earlier run (./weights.json: seconds by file; a file not in it weighs
// the median). Each shard keeps lab's order of its files.

const Fs = require('node:fs');
const Path = require('node:path');

/** Lab options followed by a value: what follows them is no path. */
const VALUED = new Set([
    '-a', '--assert', '-M', '--context-timeout', '--coverage-exclude', '--coverage-path', '--coverage-pattern',
    '--coverage-predicates', '-p', '--default-plan-threshold', '-e', '--environment', '-I', '--globals', '-g', '--grep',
    '-i', '--id', '-n', '--linter', '--lint-options', '--lint-errors-threshold', '--lint-warnings-threshold', '-o', '--output',
    '-P', '--pattern', '-r', '--reporter', '--require', '-R', '--retries', '--seed', '-t', '--threshold', '-m', '--timeout',
    '--transform', '--types-test'
]);

/** Splits lab's arguments into its options and the paths of tests (files or directories that exist). */
function splitArgs(args) {
    const options = [];
    const paths = [];
    for (let i = 0; i < args.length; ++i) {
        const arg = args[i];
        if (VALUED.has(arg)) {
            options.push(arg, args[++i]);
        }
        else if (!arg.startsWith('-') && Fs.existsSync(arg)) {
            paths.push(arg);
        }
        else {
            options.push(arg);
        }
    }

    return { options, paths };
}

/** The test files under `paths`, in lab's order: each path in turn, directories depth first in readdir order. */
function testFiles(paths, typescript) {
    const pattern = typescript ? /\.(js|mjs|cjs|ts|tsx)$/ : /\.(js|mjs|cjs)$/;
    const files = [];
    const visit = (path) => {
        const stat = Fs.statSync(path);
        if (stat.isFile()) {
            files.push(path);
            return;
        }

        for (const name of Fs.readdirSync(path)) {
            const next = Path.join(path, name);
            const entry = Fs.statSync(next);
            if (entry.isDirectory()) {
                visit(next);
            }
            else if (entry.isFile() && pattern.test(name) && name[0] !== '.') {
                files.push(next);
            }
        }
    };

    for (const path of paths) {
        visit(path);
    }

    return files;
}

/** Seconds by file (relative to the repository, '/'-separated) from ./weights.json; empty when there is none. */
function readWeights(file = Path.join(__dirname, 'weights.json')) {
    try {
        return JSON.parse(Fs.readFileSync(file, 'utf8'));
    }
    catch {
        return {};
    }
}

/** Deals `files` into `count` shards, heaviest first to the lightest shard; each shard in the files' own order. */
function dealShards(files, count, weights, root = process.cwd()) {
    const key = (file) => Path.relative(root, Path.resolve(file)).split(Path.sep).join('/');
    const known = Object.values(weights).filter((w) => typeof w === 'number').sort((a, b) => a - b);
    const median = known.length ? known[Math.floor(known.length / 2)] : 1;
    const weightOf = (file) => (typeof weights[key(file)] === 'number' ? weights[key(file)] : median);

    const shards = Array.from({ length: count }, () => ({ files: [], weight: 0 }));
    const order = new Map(files.map((file, i) => [file, i]));
    for (const file of [...files].sort((a, b) => weightOf(b) - weightOf(a) || order.get(a) - order.get(b))) {
        const lightest = shards.reduce((min, shard) => (shard.weight < min.weight ? shard : min));
        lightest.files.push(file);
        lightest.weight += weightOf(file);
    }

    return shards
        .filter((shard) => shard.files.length > 0)
        .map((shard) => ({ files: shard.files.sort((a, b) => order.get(a) - order.get(b)), weight: shard.weight }));
}

module.exports = { splitArgs, testFiles, readWeights, dealShards };
