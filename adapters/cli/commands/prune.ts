import { MAX_PER_INBOX_LIMIT } from '../../../lib/service/retention';
import type { RetentionPolicy } from '../../../lib/service/retention';
import { ConfigError } from '../../standalone/config-error';
import { DURATION_SYNTAX, parseDuration, parseMaxPerInbox, readRetentionEnv, RETENTION_ENV } from '../../standalone/retention-config';
import { CliError, EXIT_OK, write, type Command, type CommandContext } from '../command';
import { progressLine } from '../progress-line';

/** The rules of this run: the flags when any is given, else the environment's; neither is a usage error. */
function policyOf({ values, io }: CommandContext): RetentionPolicy {
    const flag = <T>(name: string, parse: (text: string) => T | null, expected: string): T | undefined => {
        const value = values[name];
        if (value === undefined) {
            return undefined;
        }

        const parsed = parse(String(value));
        if (parsed === null) {
            throw new CliError(`prune: --${name} must be ${expected}, got "${String(value)}"`);
        }

        return parsed;
    };

    const maxAgeMs = flag('max-age', parseDuration, DURATION_SYNTAX);
    const maxPerInbox = flag('max-per-inbox', parseMaxPerInbox, `a whole number of emails from 1 to ${MAX_PER_INBOX_LIMIT}`);
    if (maxAgeMs !== undefined || maxPerInbox !== undefined) {
        return { maxAgeMs, maxPerInbox };
    }

    const fromEnv = readRetentionEnv((name) => io.env[name]?.trim() || undefined, (message) => new ConfigError(message));
    if (!fromEnv) {
        throw new CliError(`usage: prune needs --max-age D, --max-per-inbox N, or ${RETENTION_ENV.maxAge} / ${RETENTION_ENV.maxPerInbox} (see inbox-capture help prune)`);
    }

    return { maxAgeMs: fromEnv.maxAgeMs, maxPerInbox: fromEnv.maxPerInbox };
}

/** `prune`: one retention pass (docs/operations.md, "Retention"), for cron. */
export const prune: Command = {
    name: 'prune',
    summary: 'delete emails past the retention rules once (for cron)',
    usage: 'prune [--max-age D] [--max-per-inbox N]',
    details: [
        'Deletes the emails older than the maximum age and those beyond the newest N',
        'of each inbox, as the delete endpoints do (the record, then its files), and',
        'prints only the number deleted.',
        '',
        'Options:',
        '  --max-age D        delete emails received more than D ago: 90s, 30m, 12h, 7d,',
        '                     or milliseconds (at least 1s).',
        '  --max-per-inbox N  keep only the newest N emails of each inbox.',
        '',
        `Without either flag the rules come from ${RETENTION_ENV.maxAge}`,
        `and ${RETENTION_ENV.maxPerInbox}; with a flag, only the flags count.`,
        'Neither flags nor variables is a usage error (exit 1).',
        '',
        'On a terminal, stderr shows the count as it goes.'
    ],
    options: {
        'max-age': { type: 'string' },
        'max-per-inbox': { type: 'string' }
    },
    positionals: [0, 0],
    run(context) {
        // Checked before the stores are opened: a typo must not cost a migration.
        const policy = policyOf(context);
        return context.withCapture(async (capture) => {
            const progress = progressLine(context.io.stderr, 'prune: deleted', 'emails');
            const deleted = await capture.pruneEmails(policy, { onProgress: progress.onProgress });
            progress.finish();
            await write(context.io.stdout, `${deleted}\n`);
            return EXIT_OK;
        });
    }
};
