import { isInboxCaptureError } from '../../../lib/errors';
import { EXIT_OK, CliError, write, type Command } from '../command';

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

/** `keys create <name>`: prints only the new key, so `KEY=$(inbox-capture keys create ci)` works. */
export const keysCreate: Command = {
    name: 'keys create',
    summary: 'create an API key and print it (shown once)',
    usage: 'keys create <name>',
    details: [
        'Creates an API key named <name> and prints the key, and nothing else, on stdout.',
        'Only its SHA-256 hash is stored: the key cannot be shown again.',
        '',
        'Example:  KEY=$(npx inbox-capture keys create ci)',
        '',
        'Exit status: 0 created; 1 a key with that name exists, bad name or other failure.'
    ],
    positionals: [1, 1],
    run({ io, positionals, withCapture }) {
        const name = checkName(positionals[0]);
        return withCapture(async (capture) => {
            let key: string;
            try {
                key = await capture.createKey(name);
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
    summary: 'list API keys: name, creation time, active or revoked',
    usage: 'keys list',
    details: [
        'Prints one line a key, oldest first, fields separated by a tab:',
        '  <name>  <created, ISO 8601 UTC>  active|revoked',
        'Keys themselves and their hashes are never shown. No keys: no output.'
    ],
    positionals: [0, 0],
    run({ io, withCapture }) {
        return withCapture(async (capture) => {
            const keys = await capture.listKeys();
            const lines = keys.map((k) => `${k.name}\t${new Date(k.createdAt).toISOString()}\t${k.revokedAt === null ? 'active' : 'revoked'}\n`);
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
