import { ORPHAN_GRACE_MS } from '../../../lib/inbox-capture';
import { EXIT_OK, write, type Command } from '../command';

/** `gc`: removes blobs that no record references (left by a crash between blob and record writes). */
export const gc: Command = {
    name: 'gc',
    summary: 'remove orphan blobs left behind by interrupted deliveries',
    usage: 'gc',
    details: [
        'Deletes stored files (raw messages, attachments) that no email record',
        `references and that are older than ${ORPHAN_GRACE_MS / 60_000} minutes (younger ones may belong to a`,
        'delivery still in progress). Prints how many were removed.'
    ],
    positionals: [0, 0],
    run({ io, withCapture }) {
        return withCapture(async (capture) => {
            const removed = await capture.sweepOrphanBlobs();
            await write(io.stdout, `removed ${removed} orphan blob${removed === 1 ? '' : 's'}\n`);
            return EXIT_OK;
        });
    }
};
