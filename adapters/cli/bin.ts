#!/usr/bin/env node
// The `inbox-capture` executable: everything lives in cli.ts, testable without a process.
import { run } from './cli';

void run(process.argv.slice(2), {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd()
}).then((code) => {
    // Let the event loop drain rather than process.exit(): output is never cut short.
    process.exitCode = code;
});
