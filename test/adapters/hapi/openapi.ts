import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { generateTypes, typecheckAgainst } from '../../helpers/openapi-types';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

// A user's test code written against the types generated from the served document.
const PROGRAM = `
import type { components, paths } from './api';

type Email = components['schemas']['Email'];
type Page = paths['/v1/emails']['get']['responses'][200]['content']['application/json'];
type NotFound = paths['/v1/emails/{messageId}']['get']['responses'][404]['content']['application/json'];

const attachment: components['schemas']['Attachment'] = { filename: '0-a.pdf', contentType: 'application/pdf', size: 3, url: '/v1/emails/x/attachments/0-a.pdf', contentId: '' };
export const email: Email = {
    messageId: 'x@y', inbox: 'signup', sender: 'a@b', senderName: 'A', recipient: 'signup@b', subject: 's', body: 'b', htmlBody: '',
    attachments: [attachment], receivedAt: 1, rawUrl: '/v1/emails/x%40y/raw',
    links: [{ href: 'https://x.test/verify', text: 'verify' }], codes: ['482913'], tags: ['welcome'], size: 2048, seen: false
};
export const tagged: paths['/v1/emails/{messageId}/tags']['put']['responses'][200]['content']['application/json'] = email;
export const tagsBody: NonNullable<paths['/v1/emails/{messageId}/tags']['put']['requestBody']>['content']['application/json'] = { tags: ['a'] };
export const seenBody: NonNullable<paths['/v1/emails/{messageId}/seen']['put']['requestBody']>['content']['application/json'] = { seen: true };
export const search: paths['/v1/emails']['get']['parameters']['query'] = { inbox: 'signup', q: 'from:shop "order 4242"' };
export const page: components['schemas']['EmailPage'] = { emails: [email], hasMore: true, nextCursor: '1#x@y' };
export const same: Page = page;
export const error: components['schemas']['Error'] = { error: 'NOT_FOUND' };
export const notFound: NotFound = { error: 'NOT_FOUND' };
export const size: number = page.emails[0].attachments[0].size;
`;

// The same with mistakes a generated type must catch.
const WRONG = `
import type { components, paths } from './api';
export const email: components['schemas']['Email'] = { messageId: 1 } as unknown as components['schemas']['Email'];
export const missing: components['schemas']['EmailPage'] = { emails: [] };
export const code: components['schemas']['Error'] = { error: 'NO_SUCH_CODE' };
export const narrowed: paths['/v1/emails/{messageId}']['get']['responses'][404]['content']['application/json'] = { error: 'INVALID_LIMIT' };
`;

describe('adapters/hapi/openapi', () => {
    let p: ProvisionedServer;
    let document: { components: { schemas: Record<string, unknown> } };
    let types: string;

    before(async () => {
        p = await provisionServer();
        const res = await p.server.inject('/openapi.json');
        expect(res.statusCode).to.equal(200);
        document = JSON.parse(res.payload);
        types = await generateTypes(document);
    });

    after(() => p.cleanup());

    describe('openapiRoute()', () => {
        it('names every component schema after an API shape, none after a property or with a number', () => {
            const names = Object.keys(document.components.schemas);
            expect(names).to.include(['Email', 'Attachment', 'EmailPage', 'Error']);
            expect(names.filter((name) => !/^[A-Z][A-Za-z]*$/.test(name))).to.equal([]);
        });

        it('gives openapi-typescript types that a user\'s program type-checks against', async () => {
            expect(types).to.include('Email: {');
            expect(await typecheckAgainst(types, PROGRAM)).to.equal([]);
        });

        it('gives types that reject wrong shapes and codes', async () => {
            const errors = await typecheckAgainst(types, WRONG);
            expect(errors.some((e) => e.includes('TS2741') && e.includes('hasMore'))).to.be.true();
            expect(errors.some((e) => e.includes('NO_SUCH_CODE'))).to.be.true();
            expect(errors.some((e) => e.includes('INVALID_LIMIT'))).to.be.true();
        });
    });
});
