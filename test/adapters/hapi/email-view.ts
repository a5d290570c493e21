import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { attachmentUrl, rawUrl, toEmailPage, toEmailView } from '../../../adapters/hapi/email-view';
import type { EmailRecord } from '../../../lib/types';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** A stored copy as the core returns it: blob keys and all. */
function record(overrides: Partial<EmailRecord> = {}): EmailRecord {
    return {
        messageId: 'plain-1@example.com',
        seen: false,
        sourceId: 'plain-1@example.com',
        inbox: 'inbox',
        sender: 'sender@example.com',
        recipient: 'inbox@example.com',
        subject: 'Plain text',
        body: 'Hello,\nthis is the plain text body.\n',
        htmlBody: '',
        receivedAt: 1_750_000_000_000,
        rawKey: '0123456789abcdef01234567/raw.eml',
        rawSize: 321,
        rawSha256: 'a'.repeat(64),
        attachments: [],
        links: [],
        codes: [],
        tags: [],
        senderName: '',
        ...overrides
    };
}

/** The attachments of the attachments.eml fixture, as stored. */
const ATTACHMENTS: EmailRecord['attachments'] = [
    { filename: '0-logo.png', contentType: 'image/png', size: 70, blobKey: '0123456789abcdef01234567/att/0', contentId: 'logo@example.com' },
    { filename: '1-report.pdf', contentType: 'application/pdf', size: 77, blobKey: '0123456789abcdef01234567/att/1' },
    { filename: '2-attachment.bin', contentType: 'application/octet-stream', size: 256, blobKey: '0123456789abcdef01234567/att/2' }
];

describe('email-view', () => {

    describe('rawUrl()', () => {

        it('puts the id percent-encoded as one path segment', () => {
            expect(rawUrl('plain-1@example.com')).to.equal('/v1/emails/plain-1%40example.com/raw');
            expect(rawUrl('a/b+c%d#e?f&g=h@example.com')).to.equal('/v1/emails/a%2Fb%2Bc%25d%23e%3Ff%26g%3Dh%40example.com/raw');
            expect(rawUrl('with some spaces@example.com')).to.equal('/v1/emails/with%20some%20spaces%40example.com/raw');
        });

        it('starts with the route prefix when one is given', () => {
            expect(rawUrl('pre/fixed@x', '/mail')).to.equal('/mail/v1/emails/pre%2Ffixed%40x/raw');
        });
    });

    describe('attachmentUrl()', () => {

        it('puts id and file name percent-encoded as one path segment each', () => {
            expect(attachmentUrl('att-1@example.com', '0-logo.png')).to.equal('/v1/emails/att-1%40example.com/attachments/0-logo.png');
            expect(attachmentUrl('encoded-1@example.com', '0-Rechnung März.txt')).to.equal('/v1/emails/encoded-1%40example.com/attachments/0-Rechnung%20M%C3%A4rz.txt');
            expect(attachmentUrl('a/b@x', '0-a/b?c#d.txt')).to.equal('/v1/emails/a%2Fb%40x/attachments/0-a%2Fb%3Fc%23d.txt');
        });

        it('starts with the route prefix when one is given', () => {
            expect(attachmentUrl('a@x', '0-a.txt', '/mail')).to.equal('/mail/v1/emails/a%40x/attachments/0-a.txt');
        });
    });

    describe('toEmailView()', () => {

        it('gives every field of the email object', () => {
            expect(toEmailView(record())).to.equal({
                messageId: 'plain-1@example.com',
                inbox: 'inbox',
                sender: 'sender@example.com',
                senderName: '',
                recipient: 'inbox@example.com',
                subject: 'Plain text',
                body: 'Hello,\nthis is the plain text body.\n',
                htmlBody: '',
                attachments: [],
                receivedAt: 1_750_000_000_000,
                rawUrl: '/v1/emails/plain-1%40example.com/raw',
                links: [],
                codes: [],
                tags: [],
                size: 321,
                seen: false
            });
        });

        it('gives the sender name and the tags of the record, the tags as a copy', () => {
            const tags = ['welcome'];
            const view = toEmailView(record({ senderName: 'Sender Name', tags }));
            expect(view).to.include({ senderName: 'Sender Name', tags });
            expect(view.tags).to.not.shallow.equal(tags);
        });

        it('gives the links and codes of the record, as copies', () => {
            // docs/api.md, "Links and codes": worked out at ingest, so the view only copies them.
            const links = [{ href: 'https://x.test/verify', text: 'Verify' }];
            const codes = ['482913'];
            const view = toEmailView(record({ links, codes }));
            expect(view.links).to.equal(links);
            expect(view.codes).to.equal(codes);
            expect(view.links).to.not.shallow.equal(links);
            expect(view.codes).to.not.shallow.equal(codes);
        });

        it('lists the attachments in order with their download URLs', () => {
            const view = toEmailView(record({ messageId: 'att-1@example.com', attachments: ATTACHMENTS }));
            expect(view.attachments).to.equal([
                { filename: '0-logo.png', contentType: 'image/png', size: 70, url: '/v1/emails/att-1%40example.com/attachments/0-logo.png', contentId: 'logo@example.com' },
                { filename: '1-report.pdf', contentType: 'application/pdf', size: 77, url: '/v1/emails/att-1%40example.com/attachments/1-report.pdf', contentId: '' },
                { filename: '2-attachment.bin', contentType: 'application/octet-stream', size: 256, url: '/v1/emails/att-1%40example.com/attachments/2-attachment.bin', contentId: '' }
            ]);
        });

        it('keeps blob keys and source id inside; the raw size is `size`', () => {
            const view = toEmailView(record({ attachments: ATTACHMENTS }));
            expect(Object.keys(view).sort()).to.equal(['attachments', 'body', 'codes', 'htmlBody', 'inbox', 'links', 'messageId', 'rawUrl', 'receivedAt', 'recipient', 'seen', 'sender', 'senderName', 'size', 'subject', 'tags']);
            expect(Object.keys(view.attachments[0]).sort()).to.equal(['contentId', 'contentType', 'filename', 'size', 'url']);
            expect(JSON.stringify(view)).to.not.contain('raw.eml');
            expect(JSON.stringify(view)).to.not.contain('/att/');
        });

        it('puts the route prefix on every URL', () => {
            const view = toEmailView(record({ messageId: 'pre/fixed@x', attachments: ATTACHMENTS.slice(0, 1) }), '/mail');
            expect(view.rawUrl).to.equal('/mail/v1/emails/pre%2Ffixed%40x/raw');
            expect(view.attachments[0].url).to.equal('/mail/v1/emails/pre%2Ffixed%40x/attachments/0-logo.png');
        });
    });

    describe('toEmailPage()', () => {

        it('answers the views of the records, with a cursor after the last one when there is more', () => {
            const first = record({ messageId: 'b@x', receivedAt: 2000 });
            const last = record({ messageId: 'a#1@x', receivedAt: 1000 });
            expect(toEmailPage({ records: [first, last], hasMore: true }, '/mail')).to.equal({
                emails: [toEmailView(first, '/mail'), toEmailView(last, '/mail')],
                hasMore: true,
                nextCursor: '1000#a#1@x'
            });
        });

        it('has no cursor on the last page', () => {
            const page = toEmailPage({ records: [record()], hasMore: false });
            expect(page).to.equal({ emails: [toEmailView(record())], hasMore: false });
            expect(Object.keys(page)).to.not.include('nextCursor');
        });

        it('answers an empty page', () => {
            expect(toEmailPage({ records: [], hasMore: false })).to.equal({ emails: [], hasMore: false });
        });
    });
});
