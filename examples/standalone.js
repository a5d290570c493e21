'use strict';

// The whole service on one machine, the same program as `npx inbox-capture serve`:
// HTTP API, /docs, /ui, SMTP, webhooks and sweeps in one process, configured only by
// environment variables (docs/api.md, "Environment variables"; docs/operations.md,
// "Running the service"). Its code is adapters/standalone/.
//
//   npm ci && node examples/standalone.js
//
// It runs the compiled package (npm ci builds it into dist/).

let cli;
try {
    cli = require('../dist/adapters/cli/cli');
}
catch (err) {
    if (err.code === 'MODULE_NOT_FOUND' && String(err.message).includes('dist/adapters/cli/cli')) {
        console.error('inbox-capture: the package is not built yet: run `npm ci` (or `npm run build`) first');
        process.exit(1);
    }

    throw err;
}

const { stdin, stdout, stderr, env } = process;
cli.run(['serve', ...process.argv.slice(2)], { stdin, stdout, stderr, env, cwd: process.cwd() }).then((code) => {
    process.exitCode = code;
});
