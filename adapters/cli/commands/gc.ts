import { ORPHAN_GRACE_MS } from '../../../lib/defaults';
import { CliError, EXIT_OK, write, type Command } from '../command';
import { progressLine } from '../progress-line';

/**
 * Largest `--grace-seconds`: one year. Far beyond any delivery in flight; the cap
 * only keeps the cutoff arithmetic well inside safe integers.
 */
const MAX_GRACE_SECONDS = 366 * 24 * 60 * 60;

/** The grace period in ms from `--grace-seconds`, or the sweep's default when absent. */
function graceMs(value: unknown): number {
    if (value === undefined) {
        return ORPHAN_GRACE_MS;
    }

    const text = String(value);
    if (!/^\d{1,10}$/.test(text) || Number(text) > MAX_GRACE_SECONDS) {
        throw new CliError(`gc: --grace-seconds must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS}, got "${text}"`);
    }

    return Number(text) * 1000;
}

/** `gc`: removes blobs that no record references (left by a crash between blob and record writes). */
export const gc: Command = {
    name: 'gc',
    summary: 'remove orphan blobs left behind by interrupted deliveries',
    usage: 'gc [--grace-seconds N]',
    details: [
        'Deletes stored files (raw messages, attachments) that no email record',
        `references and that are older than ${ORPHAN_GRACE_MS / 60_000} minutes (younger ones may belong to a`,
        'delivery still in progress). Prints how many were removed.',
        '',
        'Options:',
        `  --grace-seconds N  keep orphans younger than N seconds (default ${ORPHAN_GRACE_MS / 1000}).`,
        '                     0 removes every orphan: use it only while nothing',
        '                     delivers mail to these stores (e.g. after a crash,',
        '                     before the service is started again).',
        '',
        'On a terminal, stderr shows how many files it has looked at.'
    ],
    options: {
        'grace-seconds': { type: 'string' }
    },
    positionals: [0, 0],
    run({ io, values, withCapture }) {
        // Checked before the stores are opened: a typo must not cost a migration.
        const grace = graceMs(values['grace-seconds']);
        return withCapture(async (capture) => {
            const progress = progressLine(io.stderr, 'gc: looked at', 'stored files');
            const removed = await capture.sweepOrphanBlobs({ graceMs: grace, onProgress: progress.onProgress });
            progress.finish();
            await write(io.stdout, `removed ${removed} orphan blob${removed === 1 ? '' : 's'}\n`);
            return EXIT_OK;
        });
    }
};
