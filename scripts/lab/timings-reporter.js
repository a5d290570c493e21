'use strict';

// A lab reporter that writes, as JSON, each test in the order it ran with its file, its
// describe path, its own duration, and its wall time: the time since the test before it
// ended, which counts its block's before() hooks (a database starting) that lab's own
// reports leave out. A block's after() hooks are counted in the test that runs next.
// The files come from ./record-files.js, loaded with lab's --require.

const Path = require('node:path');
const { scripts } = require('./record-files');

module.exports = class TimingsReporter {

    constructor(options) {
        this.settings = options;
        this.rows = [];
        this.last = Date.now();
    }

    start() {
        this.last = Date.now();
    }

    test(test) {
        const now = Date.now();
        this.rows.push({ test, wall: now - this.last });
        this.last = now;
    }

    end(notebook) {
        const fileOf = new Map();
        for (const { file, script } of scripts) {
            walk(script._root, (test) => fileOf.set(test, file));
        }

        const tests = this.rows.map(({ test, wall }) => ({
            file: fileOf.get(test) ?? '(unknown file)',
            path: test.path.join(' / '),
            title: test.relativeTitle,
            duration: test.duration ?? 0,
            wall,
            skipped: Boolean(test.skipped || test.todo)
        }));
        this.report(JSON.stringify({ duration: notebook.ms, cwd: Path.resolve('.'), tests }, null, 1));
    }
};

function walk(experiment, visit) {
    for (const test of experiment.tests ?? []) {
        visit(test);
    }

    for (const child of experiment.experiments ?? []) {
        walk(child, visit);
    }
}
