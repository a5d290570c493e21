/**
 * `inbox-capture serve`, the program (and `node examples/standalone.js`): the environment
 * → the service → its start lines, then a graceful stop on SIGINT or SIGTERM (a second
 * one exits at once). It owns the process: its signals and, when stopping, its exit.
 */

import type { Writable } from 'node:stream';
import { readEnvConfig } from './env-config';
import { startedByNpm, watchParent } from './parent-watch';
import { readPop3EnvConfig } from './pop3-env-config';
import { readSmtpEnvConfig } from './smtp-env-config';
import { startStandaloneService, type StandaloneConfig, type StandaloneLog } from './standalone-service';

/** Milliseconds after a clean stop before a leftover handle is no longer waited for. */
export const EXIT_GRACE_MS = 2_000;

/** What the program runs in: its output streams, environment and working directory. */
export interface ServeIo {
    stdout: Writable;
    stderr: Writable;
    env: NodeJS.ProcessEnv;
    cwd: string;
}

/** The environment read whole: the service's variables, SMTP's AUTH and TLS, and POP3 (throws ConfigError). */
export function readStandaloneConfig(env: NodeJS.ProcessEnv, cwd: string): StandaloneConfig {
    const smtpSecurity = readSmtpEnvConfig(env, cwd);
    const pop3 = readPop3EnvConfig(env, smtpSecurity.tls);
    return { ...readEnvConfig(env, cwd), smtpSecurity, ...(pop3 ? { pop3 } : {}) };
}

/**
 * Runs the standalone service until a signal stops it; resolves with the exit code (0
 * after a clean stop). A configuration mistake throws ConfigError before anything opens.
 */
export async function serve(io: ServeIo): Promise<number> {
    // Before the slow start: npm may end meanwhile.
    const parent = process.ppid;
    const config = readStandaloneConfig(io.env, io.cwd);
    const line = (text: string, stream: Writable = io.stdout) => stream.write(`${text}\n`);
    const log: StandaloneLog = (message, error) => {
        line(`inbox-capture: ${message}${error ? `: ${describeError(error)}` : ''}`, io.stderr);
    };

    let service;
    try {
        service = await startStandaloneService(config, log);
    }
    catch (err) {
        // One line, the message alone: where it failed in here is not the operator's concern.
        const message = err instanceof Error ? err.message : String(err);
        line(`inbox-capture: cannot start: ${message.replace(/\s*\n\s*/g, ' ')}`, io.stderr);
        return 1;
    }

    // One write, so that whoever waits for the first line has them all.
    line(service.startLines.join('\n'));

    const { stop } = service;
    return new Promise<number>((resolve) => {
        let stopping = false;
        let signalled = false;
        let unwatch = () => {};
        const onSignal = (signal: NodeJS.Signals) => {
            if (signalled) {
                line(`inbox-capture: ${signal} again, exiting now`, io.stderr);
                process.exit(1);
            }

            signalled = true;
            line(`inbox-capture: ${signal} received, finishing what is in flight (again to force)`);
            if (!stopping) {
                stopping = true;
                beginStop();
            }
        };
        const onParentGone = () => {
            // Ctrl-C ends npm's shell too, maybe noticed before the signal: the same request,
            // so the signal after it still counts as the first.
            if (!stopping) {
                stopping = true;
                line('inbox-capture: the npm process that started it ended, finishing what is in flight (a signal twice to force)');
                beginStop();
            }
        };
        const beginStop = () => {
            unwatch();
            stop().then(() => {
                line('inbox-capture: stopped');
                // Everything is closed; do not let a stray handle keep the process alive.
                setTimeout(() => process.exit(0), EXIT_GRACE_MS).unref();
                resolve(0);
            }, (err: unknown) => {
                log('error while stopping', err);
                process.exit(1);
            });
        };

        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
        if (startedByNpm(io.env)) {
            // Its output may have gone with npm (a closed pipe): that must not turn a stop into a crash.
            for (const stream of [io.stdout, io.stderr]) {
                stream.on('error', () => undefined);
            }

            unwatch = watchParent(parent, onParentGone);
        }
    });
}

/** Causes followed when an error is written to the log. */
const MAX_CAUSES = 5;

/** An error's stack, then each cause's (a wrapped driver error says what really failed). */
export function describeError(error: unknown): string {
    const parts: string[] = [];
    for (let current = error, depth = 0; current !== undefined && current !== null && depth <= MAX_CAUSES; depth++) {
        parts.push(current instanceof Error ? current.stack ?? String(current) : String(current));
        current = current instanceof Error ? current.cause : undefined;
    }

    return parts.join('\n  caused by: ');
}
