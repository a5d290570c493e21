import { DEFAULT_DATA_DIR } from '../../../lib/defaults';
import { DEFAULT_SMTP_PORT } from '../../smtp/smtp-defaults';
import { DEFAULT_HOST, DEFAULT_HTTP_PORT } from '../../standalone/http-defaults';
import { SERVE_FLAGS, withServeFlags } from '../../standalone/serve-flags';
import type { Command } from '../command';

/** What each flag sets, for help; the defaults are the environment reader's own. */
const FLAG_HELP: Record<string, string> = {
    'port': `HTTP port (default ${DEFAULT_HTTP_PORT})`,
    'smtp-port': `SMTP port (default ${DEFAULT_SMTP_PORT}; 0 turns SMTP off)`,
    'host': `interface of HTTP and SMTP (default ${DEFAULT_HOST})`,
    'data-dir': `SQLite file and stored files (default ${DEFAULT_DATA_DIR})`
};

function flagLines(): string[] {
    const usages = SERVE_FLAGS.map((f) => `--${f.flag} ${f.value}`);
    const width = Math.max(...usages.map((u) => u.length));
    return SERVE_FLAGS.map((f, i) => `  ${usages[i]!.padEnd(width)}  ${f.variable.padEnd(22)} ${FLAG_HELP[f.flag]}`);
}

/** `serve`: the standalone service, HTTP and SMTP in one process, until SIGINT or SIGTERM. */
export const serve: Command = {
    name: 'serve',
    summary: 'run the service: HTTP API, /docs, /ui, SMTP, webhooks and sweeps',
    usage: 'serve [--port <port>] [--smtp-port <port>] [--host <address>] [--data-dir <dir>]',
    details: [
        'Runs the whole service in this process, configured by environment variables',
        '(docs/api.md, "Environment variables"). Four of them can also be given as flags;',
        'a flag wins over its variable:',
        ...flagLines(),
        'and the stores above, SMTP_AUTH, SMTP_TLS, INBOX_CAPTURE_RETENTION_*,',
        'INBOX_CAPTURE_WEBHOOK_URL, INBOX_CAPTURE_RELAY_URL, ...',
        'Prints where it listens once it does. SIGINT or SIGTERM stops it after what is',
        'in flight (a second one exits at once); started by npx or an npm script, it also',
        'stops so when that npm process ends.',
        '',
        'Exit status: 0 stopped; 1 bad configuration or it could not start.'
    ],
    options: Object.fromEntries(SERVE_FLAGS.map((f) => [f.flag, { type: 'string' as const }])),
    positionals: [0, 0],
    async run({ io, values }) {
        // Loaded here: the service's modules are most of what the CLI would load, and other commands need none of them.
        const { serve: runService } = await import('../../standalone/serve');
        return runService({ ...io, env: withServeFlags(io.env, values) });
    }
};
