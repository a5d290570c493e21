import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { generateTypes, typecheckAgainst } from '../../helpers/openapi-types';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';

// The component names code generators get for the links and codes of an email, the header
// fields and the inbox list (docs/api.md, "The OpenAPI document and code generators").

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const PROGRAM = `
import type { components, paths } from './api';
type S = components['schemas'];

export const link: S['Link'] = { href: 'https://x.test/verify', text: 'verify' };
export const links: S['Email']['links'] = [link];
export const codes: S['Email']['codes'] = ['482913'];
export const headers: S['Headers'] = { headers: [{ name: 'Subject', value: 'hi' }] };
export const inbox: S['Inbox'] = { name: 'signup', count: 2, lastReceivedAt: 1 };
export const page: S['InboxPage'] = { inboxes: [inbox], hasMore: false };
export const listed: paths['/v1/inboxes']['get']['responses'][200]['content']['application/json'] = page;
export const read: paths['/v1/emails/{messageId}/headers']['get']['responses'][200]['content']['application/json'] = headers;
`;

describe('adapters/hapi/openapi: the shapes of links and codes, header fields and inboxes', () => {
    let p: ProvisionedServer;
    let document: { components: { schemas: Record<string, unknown> } };

    before(async () => {
        p = await provisionServer();
        document = JSON.parse((await p.server.inject('/openapi.json')).payload);
    });

    after(() => p.cleanup());

    it('names Link, Inbox, InboxPage and Headers, and nothing after a property', () => {
        const names = Object.keys(document.components.schemas);
        expect(names).to.include(['Email', 'Attachment', 'Link', 'EmailPage', 'Inbox', 'InboxPage', 'Headers', 'Error']);
        expect(names.filter((name) => !/^[A-Z][A-Za-z]*$/.test(name))).to.equal([]);
    });

    it('gives openapi-typescript types that a program using them type-checks against', async () => {
        expect(await typecheckAgainst(await generateTypes(document), PROGRAM)).to.equal([]);
    });
});
