import * as Fs from 'node:fs';
import * as Path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { ParseArgsConfig } from 'node:util';
import { SQLITE_FILENAME } from '../../lib/defaults';
import type { InboxCapture } from '../../lib/service/inbox-capture';
import { progressLine } from './progress-line';

/** Exit codes, sysexits(3) where an MTA reads them. */
export const EXIT_OK = 0;
/** Bad usage, refused input, any failure a retry will not fix. */
export const EXIT_FAILURE = 1;
/** EX_TEMPFAIL: Postfix pipe(8) and other MTAs keep the message and retry later. */
export const EXIT_TEMPFAIL = 75;

/** The process surroundings of one CLI run (injectable for tests). */
export interface CliIo {
    stdin: Readable;
    stdout: Writable;
    stderr: Writable;
    env: NodeJS.ProcessEnv;
    cwd: string;
}

/** What a command gets when it runs: its parsed arguments and a way to reach the service. */
export interface CommandContext {
    io: CliIo;
    positionals: string[];
    values: Record<string, string | boolean | (string | boolean)[] | undefined>;
    /** Opens the configured stores (migrated), runs `fn`, and always closes them. */
    withCapture<T>(fn: (capture: InboxCapture) => Promise<T>): Promise<T>;
}

/** One CLI command: `inbox-capture <name> …`. */
export interface Command {
    /** Words that select it, e.g. `keys create`. */
    name: string;
    /** One line for the command list. */
    summary: string;
    /** Synopsis after the program name, e.g. `keys create <name>`. */
    usage: string;
    /** Further lines of `--help` (options, output, exit codes). */
    details: string[];
    /** Options beyond `--help`, in node:util parseArgs form. */
    options?: ParseArgsConfig['options'];
    /** Number of positional arguments accepted: [min, max]. */
    positionals: [number, number];
    run(context: CommandContext): Promise<number>;
}

/** A failure the user can act on: reported as its message, one line on stderr, with `exitCode`. */
export class CliError extends Error {
    readonly exitCode: number;

    constructor(message: string, exitCode: number = EXIT_FAILURE) {
        super(message);
        this.name = 'CliError';
        this.exitCode = exitCode;
    }
}

/** Writes and waits until the stream took it (so exit codes never beat output). */
export function write(stream: Writable, text: string): Promise<void> {
    return new Promise((resolve, reject) => {
        stream.write(text, (err) => (err ? reject(err) : resolve()));
    });
}

/**
 * Opens the service from the environment, migrates, runs `fn`, closes the stores. A SQLite
 * file it had to create is said on stderr: a CLI run from another directory than the
 * service's would otherwise fill a store of its own without a word (docs/operations.md,
 * "Running the service").
 */
export async function withCaptureFromEnv<T>(io: CliIo, fn: (capture: InboxCapture) => Promise<T>): Promise<T> {
    // Loaded here, not at start-up: help and a mistyped command need none of the service.
    const { openStoresFromConfig, readEnvConfig } = await import('../standalone/env-config');
    const { createInboxCapture } = await import('../../lib/service/inbox-capture');
    const config = readEnvConfig(io.env, io.cwd);
    const sqliteFile = config.databaseUrl ? undefined : Path.join(config.dataDir, SQLITE_FILENAME);
    const existed = sqliteFile === undefined || Fs.existsSync(sqliteFile);
    const stores = await openStoresFromConfig(config);
    const capture = createInboxCapture(stores);
    if (config.webhooks) {
        // `ingest` records the webhook deliveries of what it stores; a running service sends them.
        const { recordWebhooks } = await import('../webhooks/start-webhooks');
        recordWebhooks(capture, config.webhooks.webhooks);
    }

    if (config.relay?.autoMatch !== undefined) {
        // And the auto-relay's: a running service matches and sends them.
        const { recordAutoRelay } = await import('../relay/auto-relay');
        const { parseRelayAllowList } = await import('../../lib/relay/allow-list');
        recordAutoRelay(capture, parseRelayAllowList(config.relay.allow));
    }

    try {
        // Every command migrates first: `keys create` on a fresh data dir must just work.
        // After an upgrade that fills stored emails, that can take minutes: shown on a terminal.
        const filling = progressLine(io.stderr, 'migrate: filled links, codes and searched texts:', 'row updates');
        await capture.recordStore.migrate({ onProgress: filling.onProgress });
        filling.finish();
        if (!existed) {
            await write(io.stderr, `inbox-capture: created a new store, ${sqliteFile} (there was none; a service started in another directory has its own: run the CLI where the service runs, or give both the same INBOX_CAPTURE_DATA_DIR)\n`);
        }

        return await fn(capture);
    }
    finally {
        await capture.close();
    }
}
