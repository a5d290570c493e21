'use strict';

// A command run beside lab (the type check and the linter in `npm test`): they need no
// test to have run, and on two cores they fit in the time lab's shards spend waiting on
// sockets and child processes. Its output is kept and printed after lab's, so that it
// does not break into the dots; run-lab fails the run when it fails.

const { spawn } = require('node:child_process');

/** Runs `command` in a shell; resolves with its exit code (or signal) and everything it printed. */
function runAlongside(command, children) {
    return new Promise((resolve) => {
        const child = spawn(command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
        children.add(child);
        const chunks = [];
        child.stdout.on('data', (chunk) => chunks.push(chunk));
        child.stderr.on('data', (chunk) => chunks.push(chunk));
        const started = Date.now();
        const done = (code, signal, error) => {
            children.delete(child);
            resolve({ command, code, signal, error, seconds: (Date.now() - started) / 1000, output: Buffer.concat(chunks).toString('utf8') });
        };

        child.once('error', (err) => done(1, null, err.message));
        child.once('close', (code, signal) => done(code, signal, null));
    });
}

/** The lines run-lab prints for a finished command: what it printed, then how it ended. */
function describeAlongside(run) {
    const ended = run.error ? `could not be started: ${run.error}` : run.signal ? `signal ${run.signal}` : `exit code ${run.code}`;
    const verdict = run.code === 0 && !run.signal ? 'passed' : 'FAILED';
    return `\nrun-lab: beside lab, \`${run.command}\` (${run.seconds.toFixed(0)} s):\n${run.output}run-lab: \`${run.command}\` ${verdict} (${ended})`;
}

module.exports = { runAlongside, describeAlongside };
