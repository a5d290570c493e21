import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { servedDocument, shapeMismatches, type ServedDocument, type ShapeClaims } from '../../helpers/openapi-shapes';

// The views the routes answer are typed from the records; the joi schemas say what the
// document promises. This keeps the two one shape: each view is compared with the
// served /openapi.json, field by field, both ways.

const { expect } = Code;
const { describe, it, before } = exports.lab = Lab.script();

const SERVER_TYPES = Path.join(__dirname, '..', '..', '..', 'adapters', 'hapi', 'api-types.ts');

const CLAIMS: ShapeClaims = {
    types: {
        Email: 'EmailView',
        Attachment: 'AttachmentView',
        Link: 'LinkView',
        EmailPage: 'EmailPage',
        Headers: 'HeadersView',
        HtmlCheck: 'HtmlCheckView',
        HtmlFinding: 'HtmlFindingView',
        Inbox: 'InboxView',
        InboxPage: 'InboxPageView',
        DeletedEmail: 'DeletedEmailView',
        TagsBody: 'TagsBodyView',
        SeenBody: 'SeenBodyView',
        DeletedInbox: 'DeletedInboxView',
        CurrentKey: 'CurrentKeyView',
        FaultRule: 'FaultRuleView',
        FaultList: 'FaultListView',
        DeletedFault: 'DeletedFaultView',
        DeletedFaults: 'DeletedFaultsView',
        Released: 'ReleasedView',
        LinkChecks: 'LinkChecksView',
        AuthCheck: 'AuthCheckView',
        SentEmail: 'SentEmailView',
        SentEmails: 'SentEmailsView',
        Health: 'HealthView',
        Version: 'VersionView'
    },
    unclaimed: {
        HeaderField: 'the items of Headers.headers, checked as that field',
        HeaderFields: 'the array of Headers.headers, checked as that field',
        FaultMatch: 'the match of FaultRule, checked as that field',
        HtmlCheckData: 'the data of HtmlCheck, checked as that field',
        FaultReply: 'the reply of FaultRule, checked as that field',
        FaultRuleInput: 'a request body: the core\'s FaultRuleInput, which the route hands over as it is',
        LinkCheck: 'the items of LinkChecks.links, checked as that field',
        AuthSpf: 'the spf of AuthCheck, checked as that field',
        AuthDkim: 'the items of AuthCheck.dkim, checked as that field',
        AuthDmarc: 'the dmarc of AuthCheck, checked as that field',
        AuthArc: 'the arc of AuthCheck, checked as that field',
        ReleaseRequest: 'a request body: its `to` is handed to the core as it is',
        Error: 'the served codes are those the routes declare, typed ApiErrorCode by errorResponses(); ApiErrorCode adds those hapi raises itself (405, 413, 415)'
    }
};

describe('adapters/hapi/api-types', () => {
    let document: ServedDocument;

    before(async () => {
        document = await servedDocument();
    });

    it('types each view as the object the server documents, field by field, both ways', async () => {
        expect(await shapeMismatches(document, SERVER_TYPES, CLAIMS)).to.equal([]);
    });

    it('fails on a documented field the view lacks, and on a view field left undocumented', async () => {
        const changed = structuredClone(document);
        const email = changed.components.schemas.Email;
        email.properties.spamScore = { type: 'number' };
        email.required.push('spamScore');
        const attachment = changed.components.schemas.Attachment;
        delete attachment.properties.size;
        attachment.required = attachment.required.filter((name) => name !== 'size');
        expect(await shapeMismatches(changed, SERVER_TYPES, CLAIMS)).to.equal([
            'Email vs EmailView: served fields the type lacks: "spamScore"',
            'Email vs EmailView: fields whose types differ: "attachments"',
            'Attachment vs AttachmentView: fields of the type the server does not serve: "size"',
            'EmailPage vs EmailPage: fields whose types differ: "emails"'
        ]);
    });

    it('fails on a served object no type claims, and on a claim of one not served', async () => {
        const changed = structuredClone(document);
        changed.components.schemas.Spam = { properties: { score: { type: 'number' } }, required: ['score'] };
        const claims = { ...CLAIMS, types: { ...CLAIMS.types, Ghost: 'EmailView' } };
        expect(await shapeMismatches(changed, SERVER_TYPES, claims)).to.equal([
            'Spam: served, but no type claims it and no reason says why',
            'Ghost: claimed, but not served'
        ]);
    });
});
