import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createLineSplitter, parseCommand } from '../../../adapters/pop3/command-lines';
import { uidOf } from '../../../adapters/pop3/uidl';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('POP3 command lines', () => {

    it('splits lines across chunks, CRLF or bare LF, and stops at the first line past the limit', () => {
        const splitter = createLineSplitter(12);
        expect(splitter.push(Buffer.from('NOOP\r\nST'))).to.equal([{ kind: 'line', text: 'NOOP' }]);
        expect(splitter.push(Buffer.from('AT\nLIST 1\r\n'))).to.equal([{ kind: 'line', text: 'STAT' }, { kind: 'line', text: 'LIST 1' }]);
        // Twelve octets with the CRLF is a line; thirteen is not, and nothing after it is read.
        expect(splitter.push(Buffer.from('USER abcde\r\n'))).to.equal([{ kind: 'line', text: 'USER abcde' }]);
        expect(splitter.push(Buffer.from('USER abcdef\r\nNOOP\r\n'))).to.equal([{ kind: 'too-long' }]);
        expect(splitter.push(Buffer.from('NOOP\r\n'))).to.equal([]);

        // A line that never ends is caught at the limit, without waiting for its end.
        const endless = createLineSplitter(12);
        expect(endless.push(Buffer.from('USER abc'))).to.equal([]);
        expect(endless.push(Buffer.from('defghij'))).to.equal([{ kind: 'too-long' }]);
    });

    it('parses the keyword case-insensitively and keeps the arguments as given', () => {
        expect(parseCommand('uidl 3')).to.equal({ keyword: 'UIDL', args: ['3'] });
        expect(parseCommand('PASS ic_AbC')).to.equal({ keyword: 'PASS', args: ['ic_AbC'] });
        expect(parseCommand('')).to.equal({ keyword: '', args: [] });
    });

    it('uses an id of 1 to 70 printable characters as its UIDL, and hashes any other', () => {
        expect(uidOf('order-1@example.test')).to.equal('order-1@example.test');
        const seventy = 'x'.repeat(70);
        expect(uidOf(seventy)).to.equal(seventy);
        for (const id of ['x'.repeat(71), 'with space@example.test', 'caf\u00e9@example.test']) {
            const uid = uidOf(id);
            expect(uid).to.match(/^~[A-Za-z0-9_-]{43}$/);
            expect(uidOf(id)).to.equal(uid);
        }

        expect(uidOf('x'.repeat(71))).to.not.equal(uidOf('x'.repeat(72)));
    });
});
