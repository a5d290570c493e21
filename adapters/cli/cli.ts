import { parseArgs } from 'node:util';
import { packageVersion } from '../../lib/util/package-version';
import { ConfigError } from '../standalone/config-error';
import { CliError, EXIT_FAILURE, EXIT_OK, write, withCaptureFromEnv, type CliIo, type Command } from './command';
import { gc } from './commands/gc';
import { ingest } from './commands/ingest';
import { keysCreate, keysList, keysRevoke } from './commands/keys';
import { smtpUsersCreate, smtpUsersDelete, smtpUsersList } from './commands/smtp-users';
import { mcp } from './commands/mcp';
import { migrate } from './commands/migrate';
import { prune } from './commands/prune';
import { serve } from './commands/serve';
import { webhookSecret } from './commands/webhook-secret';

/** The program name in messages and help. */
export const PROGRAM = 'inbox-capture';

/** Every command, in the order help lists them. */
export const COMMANDS: Command[] = [serve, keysCreate, keysList, keysRevoke, smtpUsersCreate, smtpUsersList, smtpUsersDelete, migrate, ingest, gc, prune, webhookSecret, mcp];

/** Command groups: `keys` (or `smtp-users`) alone is not a command but names one of these. */
const GROUPS: Record<string, string> = { keys: 'keys create|list|revoke', 'smtp-users': 'smtp-users create|list|delete' };

const ENVIRONMENT_HELP = [
    'Environment (the same for every command; serve also reads HOST, PORT, SMTP_*):',
    '  INBOX_CAPTURE_DATA_DIR        SQLite file and stored files (default ./data of the',
    '                                current directory: the service\'s, or no key matches)',
    '  DATABASE_URL                  postgres://… selects Postgres instead of SQLite',
    '  S3_BUCKET                     selects S3 for stored files (with S3_ENDPOINT,',
    '                                S3_REGION, S3_FORCE_PATH_STYLE, AWS credentials)',
    '  INBOX_CAPTURE_SIGNING_SECRET  key for file download links (default: generated',
    '                                once, kept in the data dir)',
    '  INBOX_CAPTURE_RETENTION_MAX_AGE, INBOX_CAPTURE_RETENTION_MAX_PER_INBOX',
    '                                the rules prune applies without flags',
    '  INBOX_CAPTURE_URL, INBOX_CAPTURE_API_KEY, INBOX_CAPTURE_MAIL_DOMAIN',
    '                                the service, key and mail domain of mcp'
];

function mainHelp(): string {
    const width = Math.max(...COMMANDS.map((c) => c.usage.length));
    return [
        `Usage: ${PROGRAM} <command> [options]`,
        '',
        'Commands:',
        ...COMMANDS.map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`),
        `  ${'help <command>'.padEnd(width)}  show help for a command`,
        '',
        'Options:',
        '  -h, --help     show help (also after any command)',
        '  -v, --version  print the version',
        '',
        ...ENVIRONMENT_HELP,
        '',
        'Exit status: 0 success; 1 error or bad usage (message on stderr); 75 ingest',
        'could not store the message for now (an MTA retries).',
        ''
    ].join('\n');
}

function commandHelp(command: Command): string {
    return [`Usage: ${PROGRAM} ${command.usage}`, '', command.summary, '', ...command.details, ''].join('\n');
}

function groupHelp(group: string): string {
    const members = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
    const width = Math.max(...members.map((c) => c.usage.length));
    return [`Usage: ${PROGRAM} ${GROUPS[group]}`, '', ...members.map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`), ''].join('\n');
}

/** Splits argv into the command it names and the arguments after its words. */
function findCommand(argv: string[]): { command: Command; rest: string[] } | null {
    for (const command of COMMANDS) {
        const words = command.name.split(' ');
        if (words.every((word, i) => argv[i] === word)) {
            return { command, rest: argv.slice(words.length) };
        }
    }

    return null;
}

/** Where a word the CLI does not know leads the user. */
function unknownCommand(argv: string[]): CliError {
    const first = argv[0];
    if (first in GROUPS) {
        const sub = argv[1];
        return new CliError(sub === undefined || sub.startsWith('-')
            ? `"${first}" needs a subcommand: ${GROUPS[first]} (see ${PROGRAM} help ${first})`
            : `unknown command "${first} ${sub}" (see ${PROGRAM} help ${first})`);
    }

    return new CliError(`unknown command "${first}" (see ${PROGRAM} --help)`);
}

function wantsHelp(args: string[]): boolean {
    // Only before a `--`, so that a value such as `--recipient --help` stays a value.
    const end = args.indexOf('--');
    return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

async function dispatch(argv: string[], io: CliIo): Promise<number> {
    if (argv.length === 0) {
        throw new CliError(`a command is needed (see ${PROGRAM} --help)`);
    }

    const [first] = argv;
    if (first === '--help' || first === '-h' || (first === 'help' && argv.length === 1)) {
        await write(io.stdout, mainHelp());
        return EXIT_OK;
    }

    if (first === '--version' || first === '-v') {
        await write(io.stdout, `${packageVersion()}\n`);
        return EXIT_OK;
    }

    if (first === 'help') {
        const topic = argv.slice(1);
        const found = findCommand(topic);
        if (found && found.rest.length === 0) {
            await write(io.stdout, commandHelp(found.command));
            return EXIT_OK;
        }

        if (topic.length === 1 && topic[0] in GROUPS) {
            await write(io.stdout, groupHelp(topic[0]));
            return EXIT_OK;
        }

        throw new CliError(`no help for "${topic.join(' ')}": not a command (see ${PROGRAM} --help)`);
    }

    const found = findCommand(argv);
    if (!found) {
        if (first in GROUPS && wantsHelp(argv.slice(1, 2))) {
            await write(io.stdout, groupHelp(first));
            return EXIT_OK;
        }

        throw unknownCommand(argv);
    }

    const { command, rest } = found;
    if (wantsHelp(rest)) {
        await write(io.stdout, commandHelp(command));
        return EXIT_OK;
    }

    let parsed: ReturnType<typeof parseArgs>;
    try {
        parsed = parseArgs({ args: rest, options: command.options ?? {}, allowPositionals: true, strict: true });
    }
    catch (err) {
        // parseArgs explains well ("Unknown option '--x'"); add where to look.
        throw new CliError(`${command.name}: ${(err as Error).message.replace(/\.? To specify a positional.*$/s, '')} (see ${PROGRAM} help ${command.name})`);
    }

    const [min, max] = command.positionals;
    if (parsed.positionals.length < min || parsed.positionals.length > max) {
        throw new CliError(`usage: ${PROGRAM} ${command.usage} (see ${PROGRAM} help ${command.name})`);
    }

    return command.run({
        io,
        positionals: parsed.positionals,
        values: parsed.values,
        withCapture: (fn) => withCaptureFromEnv(io, fn)
    });
}

/**
 * Runs the CLI with `argv` (without node and script) and returns the exit code.
 * Never throws: every failure becomes one line on stderr.
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
    try {
        return await dispatch(argv, io);
    }
    catch (err) {
        let message: string;
        let code = EXIT_FAILURE;
        if (err instanceof CliError) {
            message = err.message;
            code = err.exitCode;
        }
        else if (err instanceof ConfigError) {
            message = `configuration: ${err.message}`;
        }
        else {
            // Unexpected (a database that cannot be opened, a full disk): the message, not a stack.
            message = err instanceof Error ? err.message : String(err);
        }

        await write(io.stderr, `${PROGRAM}: ${message.replace(/\s*\n\s*/g, ' ')}\n`).catch(() => undefined);
        return code;
    }
}
