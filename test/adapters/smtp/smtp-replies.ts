import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { busyReply, replyForIngestError } from '../../../adapters/smtp/smtp-replies';
import { InboxCaptureError } from '../../../lib/errors';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('smtp replies', () => {

    describe('replyForIngestError()', () => {

        it('answers a spent memory budget (BUSY) with the temporary 452, other failures as before', () => {
            expect(replyForIngestError(new InboxCaptureError('BUSY', 'x'), 100).responseCode).to.equal(452);
            expect(replyForIngestError(new InboxCaptureError('TOO_LARGE', 'x'), 100).responseCode).to.equal(552);
            expect(replyForIngestError(new InboxCaptureError('RECORD_STORE_UNAVAILABLE', 'x'), 100).responseCode).to.equal(451);
        });
    });

    describe('busyReply()', () => {

        it('is 452 and tells the sender to retry, nothing internal', () => {
            const reply = busyReply();
            expect(reply.responseCode).to.equal(452);
            expect(reply.message).to.equal('Error: too many messages in flight, try again later');
        });
    });
});
