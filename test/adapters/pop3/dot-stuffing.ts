import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { Readable } from 'node:stream';
import { dotStuffed } from '../../../adapters/pop3/dot-stuffing';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** The answer for `chunks`, as one string. */
async function stuffed(chunks: string[], bodyLines?: number): Promise<string> {
    const parts: Buffer[] = [];
    for await (const part of dotStuffed(Readable.from(chunks.map((c) => Buffer.from(c, 'latin1'))), bodyLines)) {
        parts.push(part);
    }

    return Buffer.concat(parts).toString('latin1');
}

/** Every way of cutting `text` in two. */
function everySplit(text: string): string[][] {
    return Array.from({ length: text.length + 1 }, (_, i) => [text.slice(0, i), text.slice(i)]);
}

describe('dot-stuffing', () => {

    it('doubles the dot that starts a line, wherever the store cuts its chunks, and nothing else', async () => {
        const raw = '.first\r\nSubject: a.b\r\n\r\n.\r\n..\r\nx.\r\n.end';
        const expected = '..first\r\nSubject: a.b\r\n\r\n..\r\n...\r\nx.\r\n..end\r\n';
        for (const chunks of everySplit(raw)) {
            expect(await stuffed(chunks)).to.equal(expected);
        }

        // A bare LF ends a line too: the dot after it is stuffed, the LF kept as it is.
        expect(await stuffed(['a\n.b\n'])).to.equal('a\n..b\n');
    });

    it('adds CRLF only to a message that does not end with a line break', async () => {
        expect(await stuffed(['a\r\n'])).to.equal('a\r\n');
        expect(await stuffed(['a'])).to.equal('a\r\n');
        expect(await stuffed([])).to.equal('');
    });

    it('TOP: the header, the blank line and n lines of the body, however the chunks fall', async () => {
        const raw = 'A: 1\r\nB: 2\r\n\r\n.one\r\ntwo\r\nthree\r\n';
        for (const chunks of everySplit(raw)) {
            expect(await stuffed(chunks, 0)).to.equal('A: 1\r\nB: 2\r\n\r\n');
            expect(await stuffed(chunks, 1)).to.equal('A: 1\r\nB: 2\r\n\r\n..one\r\n');
            expect(await stuffed(chunks, 2)).to.equal('A: 1\r\nB: 2\r\n\r\n..one\r\ntwo\r\n');
            expect(await stuffed(chunks, 9)).to.equal('A: 1\r\nB: 2\r\n\r\n..one\r\ntwo\r\nthree\r\n');
        }

        // No blank line: the whole message is header.
        expect(await stuffed(['A: 1\r\nB: 2'], 0)).to.equal('A: 1\r\nB: 2\r\n');
    });

    it('stops reading the source once TOP has its lines', async () => {
        let pulled = 0;
        async function* source() {
            for (const chunk of ['H: 1\r\n\r\n', 'one\r\n', 'two\r\n', 'three\r\n']) {
                pulled++;
                yield Buffer.from(chunk);
            }
        }

        const parts: Buffer[] = [];
        for await (const part of dotStuffed(source(), 1)) {
            parts.push(part);
        }

        expect(Buffer.concat(parts).toString()).to.equal('H: 1\r\n\r\none\r\n');
        expect(pulled).to.equal(2);
    });
});
