import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { servedDocument, shapeMismatches, type ServedDocument, type ShapeClaims } from '../../helpers/openapi-shapes';
import { removeDir, tempDir } from '../../helpers/temp-dir';

// The client's types are written by hand (it ships alone, with no dependency); this is
// what keeps them the served shapes: each is compared with /openapi.json, both ways.

const { expect } = Code;
const { describe, it, before } = exports.lab = Lab.script();

const CLIENT_TYPES = Path.join(__dirname, '..', '..', '..', 'adapters', 'client', 'types.ts');

const CLAIMS: ShapeClaims = {
    types: {
        Email: 'Email',
        Attachment: 'Attachment',
        Link: 'Link',
        EmailPage: 'EmailPage',
        HeaderField: 'Header',
        Headers: 'EmailHeaders',
        HtmlCheck: 'HtmlCheck',
        HtmlFinding: 'HtmlFinding',
        Inbox: 'Inbox',
        InboxPage: 'InboxPage',
        DeletedEmail: 'DeletedEmail',
        TagsBody: 'TagsBody',
        SeenBody: 'SeenBody',
        DeletedInbox: 'DeletedInbox',
        CurrentKey: 'CurrentKey',
        FaultRule: 'FaultRule',
        FaultRuleInput: 'FaultRuleInput',
        FaultMatch: 'FaultMatch',
        FaultReply: 'FaultReply',
        FaultList: 'FaultList',
        DeletedFault: 'DeletedFault',
        DeletedFaults: 'DeletedFaults',
        Released: 'Released',
        LinkChecks: 'LinkChecks',
        LinkCheck: 'LinkCheck',
        AuthCheck: 'AuthCheck',
        AuthSpf: 'AuthSpf',
        AuthDkim: 'AuthDkim',
        AuthDmarc: 'AuthDmarc',
        AuthArc: 'AuthArc',
        SentEmail: 'SentEmail',
        SentEmails: 'SentEmails',
        Error: 'ErrorBody'
    },
    unclaimed: {
        HeaderFields: 'the array of Headers.headers, checked as that field',
        HtmlCheckData: 'the data of HtmlCheck, checked as that field',
        Health: 'the client never calls /health',
        Version: 'the client never calls /version',
        ReleaseRequest: 'a request body: releaseEmail() takes its `to` as an argument'
    }
};

describe('adapters/client/types', () => {
    let document: ServedDocument;

    before(async () => {
        document = await servedDocument();
    });

    it('is every object the server documents, field by field, both ways (or says why not)', async () => {
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
            // A difference shows again in every shape that holds it.
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

            edit('set by `setSeen()`. */\n    seen: boolean;\n}', 'set by `setSeen()`. */\n    seen: boolean;\n    spamScore: number;\n}');
            edit('export interface Inbox {\n    name: string;\n    count: number;', 'export interface Inbox {\n    name: string;\n    count: string;');
            edit('export interface InboxPage {\n    inboxes: Inbox[];\n    hasMore: boolean;', 'export interface InboxPage {\n    inboxes: Inbox[];\n    hasMore?: boolean;');
            const copy = Path.join(dir, 'types.ts');
            await Fs.writeFile(copy, text);
            expect(await shapeMismatches(document, copy, CLAIMS)).to.equal([
                'Email vs Email: fields of the type the server does not serve: "spamScore"',
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
