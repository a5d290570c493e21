import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { shapeMismatches, type ShapeClaim } from '../../helpers/openapi-shapes';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';
import { removeDir, tempDir } from '../../helpers/temp-dir';

// The client's types are written by hand (it ships alone, with no dependency); this is
// what keeps them the served shapes: each is compared with /openapi.json, both ways.
// The default server (SQLite and the file store) serves every route, the file store's
// signed links included, so its document holds every shape and every error code.

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const CLIENT_TYPES = Path.join(__dirname, '..', '..', '..', 'adapters', 'client', 'types.ts');

/** Each served object and the client type of it. */
const CLAIMS: readonly ShapeClaim[] = [
    { schema: 'Email', type: 'Email' },
    { schema: 'Attachment', type: 'Attachment' },
    { schema: 'Link', type: 'Link' },
    { schema: 'EmailPage', type: 'EmailPage' },
    { schema: 'HeaderField', type: 'Header' },
    { schema: 'Headers', type: 'EmailHeaders' },
    { schema: 'Inbox', type: 'Inbox' },
    { schema: 'InboxPage', type: 'InboxPage' },
    { schema: 'DeletedEmail', type: 'DeletedEmail' },
    { schema: 'DeletedInbox', type: 'DeletedInbox' },
    { schema: 'Error', type: 'ErrorBody' }
];

/** Served schemas no client type claims, and why. */
const UNCLAIMED: Record<string, string> = {
    HeaderFields: 'the array of Headers.headers, checked as that field',
    Health: 'the client never calls /health',
    Version: 'the client never calls /version'
};

type Schemas = Record<string, { properties: Record<string, unknown>; required: string[] }>;

describe('adapters/client/types', () => {
    let p: ProvisionedServer;
    let document: { components: { schemas: Schemas } };

    before(async () => {
        p = await provisionServer();
        document = JSON.parse((await p.server.inject('/openapi.json')).payload);
    });

    after(() => p.cleanup());

    it('has a type for every object the server documents, or a reason why not', () => {
        const served = Object.keys(document.components.schemas).sort();
        expect(served).to.equal([...CLAIMS.map((c) => c.schema), ...Object.keys(UNCLAIMED)].sort());
    });

    it('matches every served object field by field, both ways', async () => {
        expect(await shapeMismatches(document, CLIENT_TYPES, CLAIMS)).to.equal([]);
    });

    it('fails on a field or an error code the server adds and the client lacks', async () => {
        const changed = structuredClone(document);
        const email = changed.components.schemas.Email;
        email.properties.spamScore = { type: 'number' };
        email.required.push('spamScore');
        (changed.components.schemas.Error.properties.error as { enum: string[] }).enum.push('TOO_MANY_REQUESTS');
        expect(await shapeMismatches(changed, CLIENT_TYPES, CLAIMS)).to.equal([
            'Email vs Email: served fields the type lacks: "spamScore"',
            // The email's page holds emails, so it differs too.
            'EmailPage vs EmailPage: fields whose types differ: "emails"',
            'Error vs ErrorBody: fields whose types differ: "error"'
        ]);
    });

    it('fails on a field the client adds, a field it types otherwise, and one it makes optional', async () => {
        const dir = await tempDir('client-types');
        try {
            let text = await Fs.readFile(CLIENT_TYPES, 'utf8');
            const edit = (from: string, to: string) => {
                expect(text.split(from).length, from).to.equal(2);
                text = text.replace(from, to);
            };

            edit('    codes: string[];\n}', '    codes: string[];\n    spamScore: number;\n}');
            edit('export interface Inbox {\n    name: string;\n    count: number;', 'export interface Inbox {\n    name: string;\n    count: string;');
            edit('export interface InboxPage {\n    inboxes: Inbox[];\n    hasMore: boolean;', 'export interface InboxPage {\n    inboxes: Inbox[];\n    hasMore?: boolean;');
            const copy = Path.join(dir, 'types.ts');
            await Fs.writeFile(copy, text);
            expect(await shapeMismatches(document, copy, CLAIMS)).to.equal([
                'Email vs Email: fields of the type the server does not serve: "spamScore"',
                // A difference shows again in every shape that holds it.
                'EmailPage vs EmailPage: fields whose types differ: "emails"',
                'Inbox vs Inbox: fields whose types differ: "count"',
                'InboxPage vs InboxPage: fields optional on one side only: "hasMore"',
                'InboxPage vs InboxPage: fields whose types differ: "hasMore" | "inboxes"'
            ]);
        }
        finally {
            await removeDir(dir);
        }
    });
});
