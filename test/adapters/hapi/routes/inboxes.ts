import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { buildMail } from '../../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

interface SchemaObject {
    $ref?: string;
    type?: string;
    required?: string[];
    properties?: Record<string, SchemaObject>;
    items?: SchemaObject;
}

describe('routes/inboxes', () => {
    let p: ProvisionedServer;

    before(async () => {
        p = await provisionServer({ prefix: '/mail' });
    });

    after(() => p.cleanup());

    it('serves GET /v1/inboxes under the plugin\'s route prefix', async () => {
        await p.api.ingestForApi(buildMail(), { recipients: ['prefixed@example.com'], receivedAt: 1_700_000_000_000 });
        const res = await p.server.inject({ url: '/mail/v1/inboxes', headers: p.auth });
        expect(res.statusCode).to.equal(200);
        expect(res.result).to.equal({ inboxes: [{ name: 'prefixed', count: 1, lastReceivedAt: 1_700_000_000_000 }], hasMore: false });
    });

    it('documents the answer as the named schemas InboxPage and Inbox', async () => {
        // docs/api.md, "The OpenAPI document and code generators".
        const res = await p.server.inject('/mail/openapi.json');
        const doc = JSON.parse(res.payload) as { paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: SchemaObject }> }> }>>; components: { schemas: Record<string, SchemaObject> } };
        const ok = doc.paths['/mail/v1/inboxes']!.get!.responses['200']!.content['application/json']!.schema;
        expect(ok.$ref).to.equal('#/components/schemas/InboxPage');
        const page = doc.components.schemas.InboxPage!;
        expect(Object.keys(page.properties!)).to.equal(['inboxes', 'hasMore', 'nextCursor']);
        expect(page.required).to.equal(['inboxes', 'hasMore']);
        // The array itself may sit behind a reference of its own (hapi-swagger hoists arrays).
        const resolve = (schema: SchemaObject) => (schema.$ref ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')]! : schema);
        expect(resolve(page.properties!.inboxes!).items!.$ref).to.equal('#/components/schemas/Inbox');
        const inbox = doc.components.schemas.Inbox!;
        expect(inbox.required).to.equal(['name', 'count', 'lastReceivedAt']);
        expect(inbox.properties!.count!.type).to.equal('integer');
    });
});
