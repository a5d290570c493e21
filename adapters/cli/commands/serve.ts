import { serve as runService } from '../../standalone/serve';
import type { Command } from '../command';

/** `serve`: the standalone service, HTTP and SMTP in one process, until SIGINT or SIGTERM. */
export const serve: Command = {
    name: 'serve',
    summary: 'run the service: HTTP API, /docs, /ui, SMTP, webhooks and sweeps',
    usage: 'serve',
    details: [
        'Runs the whole service in this process, configured only by environment',
        'variables (docs/api.md, "Environment variables"): the stores above, and',
        '  HOST           interface of HTTP and SMTP (default 127.0.0.1)',
        '  PORT           HTTP port (default 3000)',
        '  SMTP_PORT      SMTP port (default 2525; 0 turns SMTP off)',
        '  SMTP_AUTH, SMTP_TLS, INBOX_CAPTURE_RETENTION_*, INBOX_CAPTURE_WEBHOOK_URL, ...',
        'Prints where it listens once it does. SIGINT or SIGTERM stops it after what is',
        'in flight (a second one exits at once).',
        '',
        'Exit status: 0 stopped by a signal; 1 bad configuration or it could not start.'
    ],
    positionals: [0, 0],
    run({ io }) {
        return runService(io);
    }
};
