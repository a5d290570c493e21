import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { shapeMismatches, type ShapeClaim } from '../../helpers/openapi-shapes';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';

// The views the routes answer are typed from the records; the joi schemas say what the
// document promises. This keeps the two one shape: each view is compared with the
// served /openapi.json, field by field, both ways.

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const SERVER_TYPES = Path.join(__dirname, '..', '..', '..', 'adapters', 'hapi', 'api-types.ts');

/** Each served object and the server's type of it. */
const CLAIMS: readonly ShapeClaim[] = [
    { schema: 'Email', type: 'EmailView' },
    { schema: 'Attachment', type: 'AttachmentView' },
    { schema: 'Link', type: 'LinkView' },
    { schema: 'EmailPage', type: 'EmailPage' },
    { schema: 'Headers', type: 'HeadersView' },
    { schema: 'Inbox', type: 'InboxView' },
    { schema: 'InboxPage', type: 'InboxPageView' },
    { schema: 'DeletedEmail', type: 'DeletedEmailView' },
    { schema: 'DeletedInbox', type: 'DeletedInboxView' },
    { schema: 'Health', type: 'HealthView' },
    { schema: 'Version', type: 'VersionView' }
];

/** Served schemas no view type claims, and why. */
const UNCLAIMED: Record<string, string> = {
    HeaderField: 'the items of Headers.headers, checked as that field',
    HeaderFields: 'the array of Headers.headers, checked as that field',
    Error: 'the served codes are those the routes declare, typed ApiErrorCode by errorResponses(); ApiErrorCode adds the ones hapi raises itself (405, 413, 415)'
};

type Schemas = Record<string, { properties: Record<string, unknown>; required: string[] }>;

describe('adapters/hapi/api-types', () => {
    let p: ProvisionedServer;
    let document: { components: { schemas: Schemas } };

    before(async () => {
        p = await provisionServer();
        document = JSON.parse((await p.server.inject('/openapi.json')).payload);
    });

    after(() => p.cleanup());

    it('has a view for every object the server documents, or a reason why not', () => {
        const served = Object.keys(document.components.schemas).sort();
        expect(served).to.equal([...CLAIMS.map((c) => c.schema), ...Object.keys(UNCLAIMED)].sort());
    });

    it('types each view as the served object, field by field, both ways', async () => {
        expect(await shapeMismatches(document, SERVER_TYPES, CLAIMS)).to.equal([]);
    });

    it('fails on a documented field the view lacks, and on a view field left undocumented', async () => {
        const changed = structuredClone(document);
        const email = changed.components.schemas.Email;
        email.properties.spamScore = { type: 'number' };
        email.required.push('spamScore');
        delete changed.components.schemas.Attachment.properties.size;
        changed.components.schemas.Attachment.required = changed.components.schemas.Attachment.required.filter((name) => name !== 'size');
        expect(await shapeMismatches(changed, SERVER_TYPES, CLAIMS)).to.equal([
            'Email vs EmailView: served fields the type lacks: "spamScore"',
            'Email vs EmailView: fields whose types differ: "attachments"',
            'Attachment vs AttachmentView: fields of the type the server does not serve: "size"',
            'EmailPage vs EmailPage: fields whose types differ: "emails"'
        ]);
    });
});
