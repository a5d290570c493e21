import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { attachmentBlock, checkAttachmentSize, isTextual, MAX_ATTACHMENT_BYTES, MAX_TEXT_ATTACHMENT_BYTES } from '../../../adapters/mcp/attachment-content';
import { ToolError } from '../../../adapters/mcp/mail-access';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const meta = (contentType: string) => ({ messageId: 'a/b@c', filename: '0-x y', contentType });

describe('attachment content', () => {

    it('isTextual(): text/*, JSON and XML, with +json and +xml types, parameters ignored', () => {
        for (const type of ['text/plain', 'text/csv; charset=utf-8', 'TEXT/HTML', 'application/json', 'application/xml', 'application/ld+json', 'image/svg+xml']) {
            expect(isTextual(type), type).to.be.true();
        }

        for (const type of ['application/pdf', 'image/png', 'application/octet-stream', 'application/jsonx', 'application/javascript']) {
            expect(isTextual(type), type).to.be.false();
        }
    });

    it('gives textual UTF-8 up to 1 MiB as text', () => {
        expect(attachmentBlock(meta('application/json'), Buffer.from('{"a":"é"}'))).to.equal({ type: 'text', text: '{"a":"é"}' });
        const limit = Buffer.alloc(MAX_TEXT_ATTACHMENT_BYTES, 'a');
        expect(attachmentBlock(meta('text/plain'), limit).type).to.equal('text');
    });

    it('gives binary, larger text and text in another charset as a base64 resource', () => {
        const cases: Array<[string, Buffer]> = [
            ['image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47])],
            ['text/plain', Buffer.alloc(MAX_TEXT_ATTACHMENT_BYTES + 1, 'a')],
            ['text/plain', Buffer.from([0x63, 0x61, 0x66, 0xe9])]
        ];
        for (const [type, bytes] of cases) {
            const block = attachmentBlock(meta(type), bytes);
            expect(block.type).to.equal('resource');
            if (block.type === 'resource') {
                expect(Buffer.from(block.resource.blob, 'base64').equals(bytes)).to.be.true();
                expect(block.resource.mimeType).to.equal(type);
                expect(block.resource.uri).to.equal('inbox-capture://emails/a%2Fb%40c/attachments/0-x%20y');
            }
        }
    });

    it('refuses more than 10 MiB with ATTACHMENT_TOO_LARGE', () => {
        expect(() => checkAttachmentSize(MAX_ATTACHMENT_BYTES)).to.not.throw();
        const err = (() => {
            try {
                checkAttachmentSize(MAX_ATTACHMENT_BYTES + 1);
            }
            catch (e) {
                return e;
            }
        })();
        expect(err).to.be.an.instanceof(ToolError);
        expect((err as ToolError).code).to.equal('ATTACHMENT_TOO_LARGE');
    });
});
