import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:net';

/**
 * HTTP connections admitted at once when the open-file limit cannot be read (no
 * /proc/self/limits and no `sh`, e.g. Windows, where there is no such small limit):
 * more than the 10,000 long-polls the service is built to hold.
 */
export const FALLBACK_MAX_HTTP_CONNECTIONS = 16_384;

/**
 * Share of the file descriptors left after the SMTP connections that HTTP connections
 * may take by default: the rest is for the files a download or delivery opens,
 * SQLite or Postgres, and Node itself. With the 20,000 of the bench machine that is
 * 14,925; with 1,024, 693.
 */
const HTTP_SHARE = 3 / 4;

/** Least default cap, so that a tiny limit still serves a few clients. */
const MIN_MAX_HTTP_CONNECTIONS = 16;

/** Shortest time between two log lines about refused connections, ms. */
const DROP_LOG_INTERVAL_MS = 60_000;

// `Max open files            1024                 4096                 files`
const PROC_LIMITS_LINE = /^Max open files\s+(\d+|unlimited)\s/m;

/**
 * This process's open-file limit (RLIMIT_NOFILE, the soft limit, which Node raises to
 * the hard one at start), or null when it cannot be read or is unlimited. Node has no
 * getrlimit(): Linux shows it in /proc/self/limits, and a child shell inherits it.
 */
export function readOpenFileLimit(): number | null {
    try {
        const match = PROC_LIMITS_LINE.exec(readFileSync('/proc/self/limits', 'utf8'));
        if (match) {
            return parseLimit(match[1]!);
        }
    }
    catch {
        // Not Linux: ask a shell.
    }

    try {
        return parseLimit(execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    }
    catch {
        return null;
    }
}

function parseLimit(text: string): number | null {
    return /^\d+$/.test(text) ? Number(text) : null;
}

/**
 * The default HTTP connection cap for an open-file limit (null: unknown) when up to
 * `smtpConnections` SMTP connections may be open too (docs/guarantees.md).
 */
export function defaultMaxHttpConnections(openFileLimit: number | null, smtpConnections: number): number {
    if (openFileLimit === null) {
        return FALLBACK_MAX_HTTP_CONNECTIONS;
    }

    return Math.max(MIN_MAX_HTTP_CONNECTIONS, Math.floor((openFileLimit - smtpConnections) * HTTP_SHARE));
}

/**
 * Caps the connections `server` holds at once: past `max`, Node accepts a new one and
 * closes it at once, so the process never runs out of file descriptors (and SMTP,
 * files and connections already open keep working). Logs when that happens, at most
 * once a minute.
 */
export function capHttpConnections(server: Server, max: number, log: (message: string) => void): void {
    server.maxConnections = max;
    let lastLog = -Infinity;
    let dropped = 0;
    server.on('drop', () => {
        dropped++;
        const now = Date.now();
        if (now - lastLog >= DROP_LOG_INTERVAL_MS) {
            lastLog = now;
            log(`HTTP connection cap of ${max} reached: ${dropped} new connection(s) closed so far (INBOX_CAPTURE_MAX_HTTP_CONNECTIONS)`);
        }
    });
}
