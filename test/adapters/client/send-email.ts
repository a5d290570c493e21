import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { InboxCaptureApiError, InboxCaptureClient } from '../../../adapters/client';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('InboxCaptureClient sendEmail()', () => {
    let p: ProvisionedServer;

    before(async () => {
        p = await provisionServer({ listen: true, plugin: { maxMessageBytes: 20_000 } });
    });

    after(() => p?.cleanup());

    it('sends the JSON form and resolves to the stored copies, which read back with their attachment', async () => {
        const client = new InboxCaptureClient({ baseUrl: p.server.info.uri, apiKey: p.apiKey });
        const sent = await client.sendEmail({
            from: 'Seeder <seed@x.test>',
            to: ['seed-a@x.test', 'seed-b@x.test'],
            subject: 'Seeded',
            text: 'Your code is 314159.',
            attachments: [{ filename: 'hello.txt', contentBase64: btoa('hello') }]
        });
        expect(sent.map((s) => s.inbox).sort()).to.equal(['seed-a', 'seed-b']);
        const email = await client.getEmail(sent[0]!.messageId);
        expect(email.subject).to.equal('Seeded');
        expect(email.codes).to.equal(['314159']);
        expect(new TextDecoder().decode(await client.downloadAttachment(email.messageId, email.attachments[0]!.filename))).to.equal('hello');
    });

    it('rejects with TOO_LARGE past the size cap and FORBIDDEN with a read-only key', async () => {
        const client = new InboxCaptureClient({ baseUrl: p.server.info.uri, apiKey: p.apiKey });
        const big = await expect(client.sendEmail({ from: 'a@x.test', to: 'big@x.test', subject: 'big', text: 'x'.repeat(20_000) })).to.reject(InboxCaptureApiError);
        expect([big.status, big.code]).to.equal([413, 'TOO_LARGE']);
        const reader = new InboxCaptureClient({ baseUrl: p.server.info.uri, apiKey: await p.api.capture.createKey('reader', { readOnly: true }) });
        const forbidden = await expect(reader.sendEmail({ from: 'a@x.test', to: 'r@x.test', subject: 'no' })).to.reject(InboxCaptureApiError);
        expect([forbidden.status, forbidden.code]).to.equal([403, 'FORBIDDEN']);
    });
});
