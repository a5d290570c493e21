import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { countReceivedFields, relayKeys } from '../../../lib/relay/relay-loop';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('lib/relay/relay-loop', () => {

    describe('relayKeys()', () => {
        const copy = { sourceId: 'order-1@shop.test', rawSha256: 'a'.repeat(64), recipient: 'Alice@Example.org' };

        it('names the message by its Message-ID and by its bytes, each with the recipient (case-insensitive)', () => {
            const keys = relayKeys(copy);
            expect(keys).to.have.length(2);
            expect(keys.every((k) => /^[0-9a-f]{64}$/.test(k))).to.be.true();
            expect(relayKeys({ ...copy, recipient: ' alice@example.org ' })).to.equal(keys);
            const other = relayKeys({ ...copy, recipient: 'bob@example.org' });
            expect(other.some((k) => keys.includes(k))).to.be.false();
            // The same Message-ID with other bytes (a server added a Received field) keeps its first key.
            expect(relayKeys({ ...copy, rawSha256: 'b'.repeat(64) })[0]).to.equal(keys[0]);
            // The same bytes under another id (a message without Message-ID gets a new one each time) keep the second.
            expect(relayKeys({ ...copy, sourceId: 'random@inbox-capture' })[1]).to.equal(keys[1]);
        });

        it('has no bytes key for a copy stored without its digest', () => {
            expect(relayKeys({ ...copy, rawSha256: '' })).to.have.length(1);
        });
    });

    describe('countReceivedFields()', () => {
        it('counts the Received fields of the top-level header section only, in any case, with CRLF or LF', () => {
            const head = 'Received: from a by b\r\n\tfolded line\r\nRECEIVED: from c\r\nSubject: received: not one\r\nreceived:from d\r\n';
            expect(countReceivedFields(Buffer.from(`${head}\r\nReceived: in the body\r\n`))).to.equal(3);
            expect(countReceivedFields(Buffer.from(`${head.replace(/\r\n/g, '\n')}\nReceived: in the body\n`))).to.equal(3);
            expect(countReceivedFields(Buffer.from('Subject: none\r\n\r\nbody'))).to.equal(0);
            expect(countReceivedFields(Buffer.from('Received: x\r\nReceived: y'))).to.equal(2);
        });
    });
});
