/**
 * `inbox-capture serve`, the program (and `node examples/standalone.js`): the environment
 * → the service → its start lines, then a graceful stop on SIGINT or SIGTERM (a second
 * one exits at once). It owns the process: its signals and, when stopping, its exit.
 */

import type { Writable } from 'node:stream';
import { readEnvConfig } from './env-config';
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

/** The environment read whole: the service's variables and SMTP's AUTH and TLS (throws ConfigError). */
export function readStandaloneConfig(env: NodeJS.ProcessEnv, cwd: string): StandaloneConfig {
    return { ...readEnvConfig(env, cwd), smtpSecurity: readSmtpEnvConfig(env, cwd) };
}

/**
 * Runs the standalone service until a signal stops it; resolves with the exit code (0
 * after a clean stop). A configuration mistake throws ConfigError before anything opens.
 */
export async function serve(io: ServeIo): Promise<number> {
    const config = readStandaloneConfig(io.env, io.cwd);
    const line = (text: string, stream: Writable = io.stdout) => stream.write(`${text}\n`);
    const log: StandaloneLog = (message, error) => {
        const detail = error instanceof Error ? error.stack ?? String(error) : error;
        line(`inbox-capture: ${message}${error ? `: ${String(detail)}` : ''}`, io.stderr);
    };

    let service;
    try {
        service = await startStandaloneService(config, log);
    }
    catch (err) {
        // The message alone: where it failed in here is not the operator's concern.
        log('cannot start', err instanceof Error ? new Error(err.message) : err);
        return 1;
    }

    // One write, so that whoever waits for the first line has them all.
    line(service.startLines.join('\n'));

    const { stop } = service;
    return new Promise<number>((resolve) => {
        let stopping = false;
        const onSignal = (signal: NodeJS.Signals) => {
            if (stopping) {
                line(`inbox-capture: ${signal} again, exiting now`, io.stderr);
                process.exit(1);
            }

            stopping = true;
            line(`inbox-capture: ${signal} received, finishing what is in flight (again to force)`);
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
    });
}
