import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { toInsertRow, toKeyInfo, toNumber, toRecord, type EmailRow } from '../../../../lib/record-store/sql/rows';
import { EMAIL_COLUMNS, KEY_COLUMNS } from '../../../../lib/record-store/sql/schema';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

function row(overrides: Partial<EmailRow> = {}): EmailRow {
    return {
        seq: 12,
        seen: 0,
        message_id: '<m@x>~a',
        source_id: '<m@x>',
        inbox: 'a',
        sender: 'from@x.test',
        recipient: 'a@x.test',
        subject: 'Hi',
        body: 'text',
        html_body: '<p>text</p>',
        received_at: 1700000000000,
        raw_key: 'k1',
        raw_size: 321,
        raw_sha256: 'f'.repeat(64),
        attachments: '[{"filename":"a.pdf","contentType":"application/pdf","size":9,"blobKey":"k2"}]',
        links: '[{"href":"https://x.test/a","text":"A"}]',
        codes: '["482913"]',
        tags: '["welcome"]',
        sender_name: 'From Name',
        client_address: null,
        client_helo: null,
        mail_from: null,
        ...overrides
    };
}

describe('rows', () => {

    describe('toRecord()', () => {

        it('maps every column to its record field', () => {
            expect(toRecord(row())).to.equal({
                messageId: '<m@x>~a',
                sourceId: '<m@x>',
                inbox: 'a',
                sender: 'from@x.test',
                senderName: 'From Name',
                recipient: 'a@x.test',
                subject: 'Hi',
                body: 'text',
                htmlBody: '<p>text</p>',
                receivedAt: 1700000000000,
                rawKey: 'k1',
                rawSize: 321,
                rawSha256: 'f'.repeat(64),
                attachments: [{ filename: 'a.pdf', contentType: 'application/pdf', size: 9, blobKey: 'k2' }],
                links: [{ href: 'https://x.test/a', text: 'A' }],
                codes: ['482913'],
                tags: ['welcome'],
                seen: false
            });
        });

        it('reads SQLite\'s 0 and 1 and Postgres\' booleans as seen', () => {
            expect(toRecord(row({ seen: 1 })).seen).to.be.true();
            expect(toRecord(row({ seen: true })).seen).to.be.true();
            expect(toRecord(row({ seen: false })).seen).to.be.false();
        });

        it('turns the bigint strings of node-postgres into numbers', () => {
            const record = toRecord(row({ received_at: '1700000000001', raw_size: '42' }));
            expect(record.receivedAt).to.equal(1700000000001);
            expect(record.rawSize).to.equal(42);
        });

        it('keeps only the known attachment fields, a Content-ID when one is stored', () => {
            const record = toRecord(row({ attachments: '[{"filename":"f","contentType":"t","size":1,"blobKey":"b","extra":true},{"filename":"g","contentType":"t","size":1,"blobKey":"c","contentId":"logo@x"}]' }));
            expect(record.attachments).to.equal([{ filename: 'f', contentType: 't', size: 1, blobKey: 'b' }, { filename: 'g', contentType: 't', size: 1, blobKey: 'c', contentId: 'logo@x' }]);
        });

        it('throws when the stored tags are not a JSON array', () => {
            expect(() => toRecord(row({ tags: '"a"' }))).to.throw('Stored tags are not a JSON array');
        });

        it('reads an empty attachment list', () => {
            expect(toRecord(row({ attachments: '[]' })).attachments).to.equal([]);
        });

        it('reads a row without links and codes (not back-filled yet) as none: it never works them out', () => {
            const old = row({ subject: 'Code 482913', body: 'Go to https://x.test/b.', html_body: '<A HREF=\'https://x.test/a\'>Open</A>', links: null, codes: null });
            expect(toRecord(old)).to.include({ links: [], codes: [] });
        });

        it('keeps only href and text of stored links', () => {
            expect(toRecord(row({ links: '[{"href":"https://x.test/","text":"t","extra":1}]' })).links).to.equal([{ href: 'https://x.test/', text: 't' }]);
        });

        it('throws when stored links or codes are not JSON arrays', () => {
            expect(() => toRecord(row({ links: '{}' }))).to.throw('Stored links are not a JSON array');
            expect(() => toRecord(row({ codes: '"1234"' }))).to.throw('Stored codes are not a JSON array');
        });

        it('throws when the stored attachments are not a JSON array', () => {
            expect(() => toRecord(row({ attachments: '{"filename":"f"}' }))).to.throw('Stored attachments are not a JSON array');
            expect(() => toRecord(row({ attachments: 'not json' }))).to.throw(SyntaxError);
        });
    });

    describe('toInsertRow()', () => {

        it('writes every record field, the digests, the folded text and the attachment flag', () => {
            const record = toRecord(row({ sender: 'From@X.test', subject: 'Hi There' }));
            expect(toInsertRow({ record, searchText: 'text', sourceHash: 'sh', messageHash: 'mh' })).to.equal({
                message_id: '<m@x>~a',
                message_id_hash: 'mh',
                source_id: '<m@x>',
                source_id_hash: 'sh',
                inbox: 'a',
                sender: 'From@X.test',
                recipient: 'a@x.test',
                subject: 'Hi There',
                sender_folded: 'from@x.test',
                subject_folded: 'hi there',
                body: 'text',
                html_body: '<p>text</p>',
                received_at: 1700000000000,
                raw_key: 'k1',
                raw_size: 321,
                raw_sha256: 'f'.repeat(64),
                has_attachments: true,
                attachments: '[{"filename":"a.pdf","contentType":"application/pdf","size":9,"blobKey":"k2"}]',
                links: '[{"href":"https://x.test/a","text":"A"}]',
                codes: '["482913"]',
                tags: '["welcome"]',
                sender_name: 'From Name',
                sender_name_folded: 'from name',
                recipient_folded: 'a@x.test',
                filenames_folded: 'a.pdf',
                body_folded: 'text',
                client_address: null,
                client_helo: null,
                mail_from: null
            });
        });

        it('keeps the SMTP session\'s address, HELO name and envelope sender, and reads them back; none of them: no smtpClient', () => {
            const record = toRecord(row({ client_address: '192.0.2.7', client_helo: 'mx.sender.test', mail_from: '' }));
            expect(record.smtpClient).to.equal({ address: '192.0.2.7', helo: 'mx.sender.test', mailFrom: '' });
            const inserted = toInsertRow({ record, searchText: 'text', sourceHash: 'sh', messageHash: 'mh' });
            expect(inserted).to.include({ client_address: '192.0.2.7', client_helo: 'mx.sender.test', mail_from: '' });
            expect(toRecord({ seq: 1, ...inserted } as unknown as EmailRow)).to.equal(record);
            expect(toRecord(row({ client_address: '192.0.2.7' })).smtpClient).to.equal({ address: '192.0.2.7', helo: null, mailFrom: null });
            expect(toRecord(row())).to.not.include('smtpClient');
        });

        it('reads back as the same record', () => {
            const record = toRecord(row());
            const inserted = toInsertRow({ record, searchText: 'text', sourceHash: 'sh', messageHash: 'mh' });
            expect(toRecord({ seq: 1, ...inserted } as unknown as EmailRow)).to.equal(record);
            expect(toInsertRow({ record: { ...record, attachments: [] }, searchText: 'text', sourceHash: 'sh', messageHash: 'mh' })).to.include({ has_attachments: false, attachments: '[]', filenames_folded: '' });
        });
    });

    describe('toKeyInfo()', () => {

        it('maps an active key', () => {
            expect(toKeyInfo({ name: 'ci', created_at: 5, revoked_at: null, inbox_prefix: null, read_only: false })).to.equal({ name: 'ci', createdAt: 5, revokedAt: null, inboxPrefix: null, readOnly: false });
        });

        it('maps a revoked key, bigint strings included', () => {
            expect(toKeyInfo({ name: 'old', created_at: '5', revoked_at: '9', inbox_prefix: null, read_only: false })).to.equal({ name: 'old', createdAt: 5, revokedAt: 9, inboxPrefix: null, readOnly: false });
        });

        it('maps a scope, SQLite\'s 0 and 1 as booleans', () => {
            expect(toKeyInfo({ name: 'agent', created_at: 5, revoked_at: null, inbox_prefix: 'team-a-', read_only: 1 })).to.include({ inboxPrefix: 'team-a-', readOnly: true });
            expect(toKeyInfo({ name: 'ci', created_at: 5, revoked_at: null, inbox_prefix: null, read_only: 0 })).to.include({ inboxPrefix: null, readOnly: false });
        });
    });

    describe('toNumber()', () => {

        it('passes numbers and converts numeric strings', () => {
            expect(toNumber(7)).to.equal(7);
            expect(toNumber('9007199254740991')).to.equal(Number.MAX_SAFE_INTEGER);
        });
    });

    describe('EMAIL_COLUMNS and KEY_COLUMNS', () => {

        it('select the columns the rows are read from, never the key hash', () => {
            expect(EMAIL_COLUMNS).to.equal([
                'seq', 'message_id', 'source_id', 'inbox', 'sender', 'recipient', 'subject', 'body', 'html_body', 'received_at', 'raw_key', 'raw_size',
                'raw_sha256', 'attachments', 'links', 'codes', 'tags', 'sender_name', 'client_address', 'client_helo', 'mail_from', 'seen'
            ]);
            expect(KEY_COLUMNS).to.equal(['name', 'created_at', 'revoked_at', 'inbox_prefix', 'read_only']);
        });
    });
});
