import { isInboxCaptureError } from '../../../lib/errors';
import { INBOX_PATTERN, MAX_INBOX_LENGTH } from '../../../lib/identity/recipients';
import type { KeyScope } from '../../../lib/types';
import { EXIT_OK, CliError, write, type Command, type CommandContext } from '../command';

/** Longest key name, characters: names are labels typed on a command line. */
const MAX_KEY_NAME_LENGTH = 100;

/** Printable, no spaces: a name must survive `keys list` columns and shell quoting mistakes. */
const KEY_NAME_PATTERN = /^[\x21-\x7e]+$/;

function checkName(name: string): string {
    if (name.length > MAX_KEY_NAME_LENGTH || !KEY_NAME_PATTERN.test(name)) {
        throw new CliError(`invalid key name "${name.slice(0, MAX_KEY_NAME_LENGTH)}": use 1 to ${MAX_KEY_NAME_LENGTH} printable ASCII characters without spaces`);
    }

    return name;
}

/** The scope `keys create` was given: an inbox prefix checked as an inbox name, and read-only. */
function scopeOf(values: CommandContext['values']): Partial<KeyScope> {
    const prefix = values['inbox-prefix'];
    if (prefix !== undefined && (typeof prefix !== 'string' || prefix.length > MAX_INBOX_LENGTH || !INBOX_PATTERN.test(prefix))) {
        throw new CliError(`keys create: --inbox-prefix must be 1 to ${MAX_INBOX_LENGTH} characters of a-z 0-9 . _ - (the start of inbox names), got "${String(prefix).slice(0, MAX_INBOX_LENGTH + 1)}"`);
    }

    return { inboxPrefix: prefix ?? null, readOnly: values['read-only'] === true };
}

/** How `keys list` shows a scope: `all` or `prefix=<P>`, then `read-only` or `read-write`. */
export function describeScope(scope: KeyScope): string {
    return `${scope.inboxPrefix === null ? 'all' : `prefix=${scope.inboxPrefix}`}\t${scope.readOnly ? 'read-only' : 'read-write'}`;
}

/** `keys create <name>`: prints only the new key, so `KEY=$(inbox-capture keys create ci)` works. */
export const keysCreate: Command = {
    name: 'keys create',
    summary: 'create an API key and print it (shown once)',
    usage: 'keys create <name> [--inbox-prefix P] [--read-only]',
    details: [
        'Creates an API key named <name> and prints the key, and nothing else, on stdout.',
        'Only its SHA-256 hash is stored: the key cannot be shown again.',
        '',
        'Options (a key without them reaches every inbox and may delete):',
        '  --inbox-prefix P  the key reaches only inboxes whose name starts with P: others',
        '                    are 403 by name and 404 by email, and are never listed',
        '  --read-only       the key may read but not delete (403)',
        '',
        'Example:  KEY=$(npx inbox-capture keys create ci)',
        '          AGENT_KEY=$(npx inbox-capture keys create agent --inbox-prefix agent- --read-only)',
        '',
        'Exit status: 0 created; 1 a key with that name exists, bad name or prefix, or other failure.'
    ],
    options: {
        'inbox-prefix': { type: 'string' },
        'read-only': { type: 'boolean' }
    },
    positionals: [1, 1],
    run({ io, positionals, values, withCapture }) {
        const name = checkName(positionals[0]);
        const scope = scopeOf(values);
        return withCapture(async (capture) => {
            let key: string;
            try {
                key = await capture.createKey(name, scope);
            }
            catch (err) {
                if (isInboxCaptureError(err, 'DUPLICATE_KEY')) {
                    throw new CliError(`a key named "${name}" already exists (revoked keys keep their name)`);
                }

                throw err;
            }

            await write(io.stdout, `${key}\n`);
            return EXIT_OK;
        });
    }
};

/** `keys list`: one line a key, never a hash. */
export const keysList: Command = {
    name: 'keys list',
    summary: 'list API keys: name, creation time, active or revoked, scope',
    usage: 'keys list',
    details: [
        'Prints one line a key, oldest first, fields separated by a tab:',
        '  <name>  <created, ISO 8601 UTC>  active|revoked  all|prefix=<P>  read-write|read-only',
        'Keys themselves and their hashes are never shown. No keys: no output.'
    ],
    positionals: [0, 0],
    run({ io, withCapture }) {
        return withCapture(async (capture) => {
            const keys = await capture.listKeys();
            const lines = keys.map((k) => `${k.name}\t${new Date(k.createdAt).toISOString()}\t${k.revokedAt === null ? 'active' : 'revoked'}\t${describeScope(k)}\n`);
            await write(io.stdout, lines.join(''));
            return EXIT_OK;
        });
    }
};

/** `keys revoke <name>`: the key stops working at once. */
export const keysRevoke: Command = {
    name: 'keys revoke',
    summary: 'revoke an API key by name',
    usage: 'keys revoke <name>',
    details: [
        'Revokes the active key named <name>: requests with it get 401 from now on.',
        'The name stays taken (see keys list).',
        '',
        'Exit status: 0 revoked; 1 no active key has that name, or other failure.'
    ],
    positionals: [1, 1],
    run({ io, positionals, withCapture }) {
        const name = positionals[0];
        return withCapture(async (capture) => {
            if (!(await capture.revokeKey(name))) {
                throw new CliError(`no active key named "${name}"`);
            }

            await write(io.stdout, `revoked key "${name}"\n`);
            return EXIT_OK;
        });
    }
};
