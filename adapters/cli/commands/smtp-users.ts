import { MAX_TENANT_PREFIX_LENGTH, isTenantPrefix } from '../../../lib/identity/tenant-prefix';
import { MAX_SMTP_USER_NAME_LENGTH } from '../../../lib/service/smtp-users';
import { EXIT_OK, CliError, write, type Command, type CommandContext } from '../command';

/** Printable, no spaces: what a mail library's user name setting and a shell both take. */
const NAME_PATTERN = /^[\x21-\x7e]+$/;

function checkName(name: string): string {
    if (name.length > MAX_SMTP_USER_NAME_LENGTH || !NAME_PATTERN.test(name)) {
        throw new CliError(`invalid SMTP user name "${name.slice(0, MAX_SMTP_USER_NAME_LENGTH)}": use 1 to ${MAX_SMTP_USER_NAME_LENGTH} printable ASCII characters without spaces`);
    }

    return name;
}

/** The prefix `smtp-users create` was given, checked here so a mistake is one clear line. */
function prefixOf(values: CommandContext['values']): string {
    const prefix = values['inbox-prefix'];
    if (prefix === undefined) {
        throw new CliError('smtp-users create: --inbox-prefix P is needed: the start of every inbox this user\'s mail goes to, e.g. team-a-');
    }

    if (!isTenantPrefix(prefix)) {
        throw new CliError(`smtp-users create: --inbox-prefix must be 1 to ${MAX_TENANT_PREFIX_LENGTH} characters of a-z 0-9 . _ - ending in -, . or _ (so team-a- never also matches team-ab...), got "${String(prefix).slice(0, MAX_TENANT_PREFIX_LENGTH + 1)}"`);
    }

    return prefix;
}

/** `smtp-users create <name> --inbox-prefix P`: prints only the password, so `PASS=$(...)` works. */
export const smtpUsersCreate: Command = {
    name: 'smtp-users create',
    summary: 'create an SMTP user whose mail goes under an inbox prefix, print its password (shown once)',
    usage: 'smtp-users create <name> --inbox-prefix P',
    details: [
        'Creates an SMTP user named <name> and prints its password, and nothing else, on stdout.',
        'Only a salted scrypt hash of the password is stored: it cannot be shown again.',
        'A running service with SMTP_AUTH=users or accept-any takes the user at its next AUTH.',
        '',
        'Mail sent in a session logged in as this user goes, for each recipient, to the inbox',
        'P + <inbox of the address> (signup@app.test: P + signup); a key made with',
        '`keys create <name> --inbox-prefix P` sees exactly that mail.',
        '',
        'Options:',
        '  --inbox-prefix P  1 to 32 characters of a-z 0-9 . _ - ending in -, . or _',
        '',
        'Example:  PASS=$(npx inbox-capture smtp-users create team-a --inbox-prefix team-a-)',
        '',
        'Exit status: 0 created; 1 a user with that name exists, bad name or prefix, or other failure.'
    ],
    options: {
        'inbox-prefix': { type: 'string' }
    },
    positionals: [1, 1],
    run({ io, positionals, values, withCapture }) {
        const name = checkName(positionals[0]);
        const prefix = prefixOf(values);
        return withCapture(async (capture) => {
            const password = await capture.createSmtpUser(name, prefix);
            if (password === null) {
                throw new CliError(`an SMTP user named "${name}" already exists`);
            }

            await write(io.stdout, `${password}\n`);
            return EXIT_OK;
        });
    }
};

/** `smtp-users list`: one line a user, never a password or hash. */
export const smtpUsersList: Command = {
    name: 'smtp-users list',
    summary: 'list SMTP users: name, creation time, inbox prefix',
    usage: 'smtp-users list',
    details: [
        'Prints one line an SMTP user, oldest first, fields separated by a tab:',
        '  <name>  <created, ISO 8601 UTC>  prefix=<P>',
        'Passwords and their hashes are never shown. No users: no output.'
    ],
    positionals: [0, 0],
    run({ io, withCapture }) {
        return withCapture(async (capture) => {
            const users = await capture.listSmtpUsers();
            await write(io.stdout, users.map((u) => `${u.name}\t${new Date(u.createdAt).toISOString()}\tprefix=${u.inboxPrefix}\n`).join(''));
            return EXIT_OK;
        });
    }
};

/** `smtp-users delete <name>`: the user's next AUTH fails. */
export const smtpUsersDelete: Command = {
    name: 'smtp-users delete',
    summary: 'delete an SMTP user by name',
    usage: 'smtp-users delete <name>',
    details: [
        'Deletes the SMTP user named <name>: its next AUTH is refused (535). Mail it sent stays.',
        '',
        'Exit status: 0 deleted; 1 no SMTP user has that name, or other failure.'
    ],
    positionals: [1, 1],
    run({ io, positionals, withCapture }) {
        const name = positionals[0];
        return withCapture(async (capture) => {
            if (!(await capture.deleteSmtpUser(name))) {
                throw new CliError(`no SMTP user named "${name}"`);
            }

            await write(io.stdout, `deleted SMTP user "${name}"\n`);
            return EXIT_OK;
        });
    }
};
