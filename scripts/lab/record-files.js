'use strict';

// Loaded by lab (--require) before the test files: each lab script made by Lab.script()
// is noted with the file that made it, so a test's time can be summed by file as well as
// by describe block (lab's own reports know the block, not the file).

const Path = require('node:path');
const Lab = require('@hapi/lab');

/** Every script made in this process, with the test file that made it. */
const scripts = [];
module.exports = { scripts };

const original = Lab.script;
Lab.script = function (...args) {
    const script = original.apply(this, args);
    scripts.push({ file: callerFile(), script });
    return script;
};

// The raw call sites, not the stack text: with --typescript, source maps rewrite the text.
function callerFile() {
    const prepare = Error.prepareStackTrace;
    Error.prepareStackTrace = (_, sites) => sites;
    const sites = new Error().stack;
    Error.prepareStackTrace = prepare;
    for (const site of Array.isArray(sites) ? sites : []) {
        const file = site.getFileName();
        if (file && file !== __filename && !file.startsWith('node:') && !file.includes(`${Path.sep}node_modules${Path.sep}`)) {
            return Path.relative(process.cwd(), file);
        }
    }

    return '(unknown file)';
}
