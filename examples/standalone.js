'use strict';

// The whole service on one machine, the same program as `npx inbox-capture serve`:
// HTTP API, /docs, /ui, SMTP, webhooks and sweeps in one process, configured only by
// environment variables (docs/api.md, "Environment variables"; docs/operations.md,
// "Running the service"). Its code is adapters/standalone/.
//
//   npm ci && node examples/standalone.js
//
// It runs the compiled package, dist/. A fresh clone has none: the first run builds it
// (`npm run build`, output on stderr). The package has no install-time build, so that
// installing it never runs one (docs/operations.md, "Running the service"); after
// changing the source, `npm run build` again.

const Fs = require('node:fs');
const Path = require('node:path');
const ChildProcess = require('node:child_process');

const ROOT = Path.join(__dirname, '..');
if (!Fs.existsSync(Path.join(ROOT, 'dist', 'adapters', 'cli', 'cli.js'))) {
    console.error('inbox-capture: dist/ is not built yet: running `npm run build` first (a minute or two)');
    // Its output on stderr: stdout stays the service's own lines. A shell finds npm on Windows too.
    const built = ChildProcess.spawnSync('npm run build', { cwd: ROOT, stdio: ['ignore', 2, 2], shell: true });
    if (built.status !== 0) {
        console.error('inbox-capture: `npm run build` failed (see above); did `npm ci` run?');
        process.exit(1);
    }
}

const cli = require('../dist/adapters/cli/cli');

const { stdin, stdout, stderr, env } = process;
cli.run(['serve', ...process.argv.slice(2)], { stdin, stdout, stderr, env, cwd: process.cwd() }).then((code) => {
    process.exitCode = code;
});
