import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Postfix's `smtp-source` (C; Debian package `postfix`), a load generator nobody here
 * wrote, beside bench/smtp-client.ts. It sends its own message: `From`, `To`, `Date`, a
 * unique `Message-Id` and a body of `-l` bytes in lines of X. Lock-step (each command waits
 * for its reply), HELO; with `-d` a session sends its next message on the same connection,
 * without it every message opens a connection of its own.
 */

/** How to get it, printed when it is missing (the rest of the bench runs without it). */
export const SMTP_SOURCE_INSTALL = 'smtp-source (Postfix) is not installed: as root, `apt-get update && apt-get install -y postfix` (Debian/Ubuntu; it lands in /usr/sbin)';

/** The smtp-source program, or null when it is not installed. */
export function smtpSourcePath(): string | null {
    for (const candidate of ['/usr/sbin/smtp-source', '/usr/bin/smtp-source', '/usr/local/sbin/smtp-source']) {
        if (existsSync(candidate)) {
            return candidate;
        }
    }

    const which = spawnSync('sh', ['-c', 'command -v smtp-source'], { encoding: 'utf8' });
    return which.status === 0 && which.stdout.trim() !== '' ? which.stdout.trim() : null;
}

/** One run of smtp-source. */
export interface SmtpSourceOptions {
    program: string;
    port: number;
    /** Parallel sessions (`-s`). */
    sessions: number;
    /** Messages in all (`-m`). */
    messages: number;
    /** Body bytes of each message (`-l`). */
    bodyBytes: number;
    /** `-d`: a session sends its messages over one connection. */
    reuse: boolean;
    /** The recipient of every message (`-t`). */
    to: string;
    /** Killed after this long, ms. */
    timeoutMs: number;
}

/** What one run did: all messages answered 250 when it exits 0 (it stops at the first refusal). */
export interface SmtpSourceResult {
    ok: boolean;
    elapsedMs: number;
    msgPerSec: number;
    /** What it said when it failed. */
    error?: string;
}

/** Runs smtp-source to 127.0.0.1:`port`; msg/s from the wall time of the process. */
export function runSmtpSource(options: SmtpSourceOptions): Promise<SmtpSourceResult> {
    const args = [
        ...(options.reuse ? ['-d'] : []),
        '-s', String(options.sessions), '-m', String(options.messages), '-l', String(options.bodyBytes),
        '-f', 'source@bench.test', '-t', options.to, `inet:127.0.0.1:${options.port}`
    ];
    return new Promise((resolve) => {
        const started = process.hrtime.bigint();
        const child = spawn(options.program, args, { stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => {
            stderr = (stderr + d.toString('utf8')).slice(-2000);
        });
        const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
        child.on('exit', (code, signal) => {
            clearTimeout(timer);
            const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
            const ok = code === 0;
            resolve({
                ok,
                elapsedMs,
                msgPerSec: ok ? options.messages / (elapsedMs / 1000) : NaN,
                ...(ok ? {} : { error: `exit ${signal ?? code}: ${stderr.trim()}` })
            });
        });
    });
}
