import { newWebhookSecret } from '../../webhooks/webhook-secret';
import { EXIT_OK, write, type Command } from '../command';

/** `webhook-secret`: prints a new secret for INBOX_CAPTURE_WEBHOOK_SECRET or a webhook's `secret`. */
export const webhookSecret: Command = {
    name: 'webhook-secret',
    summary: 'print a new webhook signing secret (whsec_…)',
    usage: 'webhook-secret',
    details: [
        'Prints a new random secret, whsec_ and the base64 of 32 bytes, and nothing',
        'else, so that SECRET=$(npx inbox-capture webhook-secret) works. Give the same',
        'secret to the service (INBOX_CAPTURE_WEBHOOK_SECRET, or a webhook\'s secret)',
        'and to the receiver, which verifies with any Standard Webhooks library',
        '(docs/api.md, "Webhooks"). Opens no store.'
    ],
    positionals: [0, 0],
    async run({ io }) {
        await write(io.stdout, `${newWebhookSecret()}\n`);
        return EXIT_OK;
    }
};
