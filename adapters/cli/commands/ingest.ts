import { isInboxCaptureError } from '../../../lib/errors';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_TEMPFAIL, write, type Command } from '../command';

/** Refusals of the message itself: retrying the same message cannot succeed. */
const PERMANENT_CODES = new Set(['TOO_LARGE', 'NO_RECIPIENT', 'TOO_MANY_RECIPIENTS', 'INVALID_INPUT']);

function strings(value: unknown): string[] {
    if (value === undefined) {
        return [];
    }

    return (Array.isArray(value) ? value : [value]).map(String);
}

/** `ingest`: one message on stdin, for an MTA's pipe transport. */
export const ingest: Command = {
    name: 'ingest',
    summary: 'store one message read from stdin (for an MTA pipe transport)',
    usage: 'ingest [--recipient ADDR]... [--mail-from ADDR]',
    details: [
        'Reads one RFC 5322 message on stdin and stores one copy per inbox it is',
        'addressed to. Prints the stored messageIds, one a line.',
        '',
        'Options:',
        '  --recipient ADDR  envelope recipient; repeat for several. Without any, the',
        '                    To and Cc headers decide. More than 100 inboxes: refused.',
        '  --mail-from ADDR  envelope sender, used when the message has no From header.',
        '',
        'Exit status (sysexits, as MTAs expect):',
        '  0   stored',
        '  1   refused: too large, no or too many recipients, or bad usage',
        '  75  temporary failure (storage or configuration): the MTA should retry',
        '',
        'Postfix (master.cf; see docs/api.md for the whole setup):',
        '  inboxcapture unix - n n - - pipe user=inbox argv=/usr/bin/env',
        '    INBOX_CAPTURE_DATA_DIR=/srv/inbox-capture/data /usr/bin/node',
        '    /srv/inbox-capture/dist/adapters/cli/bin.js ingest',
        '    --mail-from=${sender} --recipient=${recipient}'
    ],
    options: {
        recipient: { type: 'string', multiple: true },
        'mail-from': { type: 'string' }
    },
    positionals: [0, 0],
    async run({ io, values, withCapture }) {
        const recipients = strings(values.recipient);
        const mailFrom = strings(values['mail-from'])[0];
        let ids: string[];
        try {
            ids = await withCapture(async (capture) => {
                const copies = await capture.ingestRawEmail(io.stdin, {
                    ...(recipients.length > 0 ? { recipients } : {}),
                    ...(mailFrom ? { mailFrom } : {})
                });
                return copies.map((c) => c.messageId);
            });
        }
        catch (err) {
            if (isInboxCaptureError(err) && PERMANENT_CODES.has(err.code)) {
                throw new CliError(`message refused (${err.code}): ${err.message}`, EXIT_FAILURE);
            }

            // Anything else, a bad configuration included, must not bounce the mail:
            // the MTA keeps it and retries once the cause is fixed.
            const detail = err instanceof Error ? err.message : String(err);
            throw new CliError(`message not stored, try again later: ${detail}`, EXIT_TEMPFAIL);
        }

        await write(io.stdout, ids.map((id) => `${id}\n`).join(''));
        return EXIT_OK;
    }
};
