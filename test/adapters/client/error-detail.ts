import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { InboxCaptureApiError, InboxCaptureClient, UNEXPECTED_RESPONSE } from '../../../adapters/client';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('InboxCaptureApiError: what the server said is wrong', () => {
    let p: ProvisionedServer;
    let client: InboxCaptureClient;

    before(async () => {
        p = await provisionServer({ listen: true });
        client = new InboxCaptureClient({ baseUrl: p.server.info.uri, apiKey: p.apiKey });
    });

    after(() => p.cleanup());

    it('carries the detail header as .detail, and its message is CODE: detail', async () => {
        const search = await expect(client.listEmails({ inbox: 'orders', q: 'subject:"unclosed' })).to.reject(InboxCaptureApiError);
        expect(search.status).to.equal(400);
        expect(search.code).to.equal('VALIDATION_ERROR');
        expect(search.detail).to.equal('q: unclosed quote at character 9');
        expect(search.message).to.equal('VALIDATION_ERROR: q: unclosed quote at character 9');

        const inbox = await expect(client.listEmails({ inbox: 'Orders' })).to.reject(InboxCaptureApiError);
        expect(inbox.message).to.equal('INVALID_INBOX: inbox: "Orders" has uppercase letters; inbox names are lowercase (did you mean "orders"?)');

        const tags = await expect(client.setTags('nobody@example.test', ['has space'])).to.reject(InboxCaptureApiError);
        expect(tags.message).to.equal('VALIDATION_ERROR: tags[0]: "has space" may hold only a-z 0-9 . _ -');

        const missing = await expect(client.getEmail('nobody@example.test')).to.reject(InboxCaptureApiError);
        expect(missing.message).to.equal('NOT_FOUND: messageId: no email "nobody@example.test"');
    });

    it('a 401 has no detail: its message is the code alone', async () => {
        const stranger = new InboxCaptureClient({ baseUrl: p.server.info.uri, apiKey: 'ic_not-a-key' });
        const err = await expect(stranger.listEmails({ inbox: 'orders' })).to.reject(InboxCaptureApiError);
        expect(err.status).to.equal(401);
        expect(err.detail).to.be.undefined();
        expect(err.message).to.equal('UNAUTHORIZED');
    });

    it('an answer that is not the API\'s takes no detail from its headers', async () => {
        const proxy = new InboxCaptureClient({
            baseUrl: 'http://proxy.test',
            apiKey: p.apiKey,
            fetch: () => Promise.resolve(new Response('<html>Bad gateway</html>', { status: 502, headers: { 'Inbox-Capture-Error-Detail': 'not ours' } }))
        });
        const err = await expect(proxy.getEmail('x@y')).to.reject(InboxCaptureApiError);
        expect(err.code).to.equal(UNEXPECTED_RESPONSE);
        expect(err.detail).to.be.undefined();
        expect(err.message).to.equal(UNEXPECTED_RESPONSE);
    });
});
