import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { InboxCaptureClient } from '../../adapters/client';
import { runNode } from '../helpers/child-process';
import { serviceBackends } from '../helpers/service-backends';
import { spawnStandalone } from '../helpers/standalone-service';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');

/**
 * Starts `examples/standalone.js` with `env`, sends mail over SMTP and searches it with the
 * client: a wait for "the mail that contains this order number" started before the mail,
 * tags from X-Tags, the HTML's text, tags replaced, delete by search.
 */
async function searchOverSmtp(env: NodeJS.ProcessEnv): Promise<void> {
    const service = await spawnStandalone(env);
    const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: service.smtpPort, secure: false, ignoreTLS: true });
    try {
        const created = await runNode([BIN, 'keys', 'create', 'search'], { cwd: ROOT, env });
        expect(created.code, created.stderr).to.equal(0);
        const client = new InboxCaptureClient({ baseUrl: service.base, apiKey: created.stdout.trim() });
        const { inbox, address } = client.newInbox({ prefix: 'search-', domain: 'example.test' });

        // The wait starts first; other orders' mail must not end it.
        const waiting = client.waitForEmail({ inbox, q: 'body:"order ORD-4242"', timeoutMs: 20_000 });
        const send = (mail: Nodemailer.SendMailOptions) => transport.sendMail({ from: 'Shop Team <shop@example.test>', to: address, ...mail });
        await send({ subject: 'Order shipped', text: 'Your order ORD-4241 has shipped.' });
        await send({
            subject: 'Order shipped',
            text: 'See the HTML part.',
            html: '<p>Your <b>order ORD-4242</b> has shipped.</p>',
            headers: { 'X-Tags': 'Orders, shipping, not a tag' }
        });
        const found = await waiting;
        expect(found).to.include({ subject: 'Order shipped', sender: 'shop@example.test', senderName: 'Shop Team', tags: ['orders', 'shipping'] });

        const subjects = async (q?: string) => {
            const ids: string[] = [];
            for await (const email of client.emails({ inbox, ...(q === undefined ? {} : { q }), limit: 1 })) {
                ids.push(email.messageId);
            }

            return ids;
        };

        expect(await subjects('body:ord-4242')).to.equal([found.messageId]);
        expect(await subjects('tag:shipping')).to.equal([found.messageId]);
        expect(await subjects('shipped -tag:orders')).to.have.length(1);
        expect(await subjects('from:"shop@example.test" after:2020-01-01')).to.have.length(2);

        const retagged = await client.setTags(found.messageId, ['done']);
        expect(retagged.tags).to.equal(['done']);
        expect(await subjects('tag:orders')).to.equal([]);

        expect(await client.deleteInbox(inbox, { q: 'tag:done' })).to.equal(1);
        expect(await subjects()).to.have.length(1);
        // An empty q is refused, not taken as no search: a DELETE with it must not empty the inbox.
        await expect(subjects('')).to.reject(/VALIDATION_ERROR: q: must not be empty/);
        expect(await subjects('ORD-4242')).to.equal([]);
    }
    finally {
        transport.close();
        service.child.kill('SIGKILL');
        await service.exited;
    }
}

describe('search end to end (standalone service, real SMTP, the client)', () => {
    for (const [name, env] of serviceBackends({ before, after })) {
        it(`finds mail sent over SMTP by its body, its tags and its sender, on ${name}`, async () => {
            await searchOverSmtp(await env());
        });
    }
});
