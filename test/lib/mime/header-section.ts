import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { Readable } from 'node:stream';
import { readHeaderSection } from '../../../lib/mime/header-section';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** A stream that hands out `chunks` one by one and remembers how many it was asked for and whether it was destroyed. */
function chunked(chunks: string[]): Readable & { pulled: number } {
    let next = 0;
    const stream = new Readable({
        highWaterMark: 1,
        read() {
            stream.pulled++;
            this.push(next < chunks.length ? Buffer.from(chunks[next++]) : null);
        }
    }) as Readable & { pulled: number };
    stream.pulled = 0;
    return stream;
}

describe('header-section', () => {

    describe('readHeaderSection()', () => {

        it('returns the bytes before the empty line (CRLF)', async () => {
            const section = await readHeaderSection(chunked(['Subject: a\r\nTo: b\r\n\r\nbody\r\n']));
            expect(section.toString()).to.equal('Subject: a\r\nTo: b\r\n');
        });

        it('returns the bytes before the empty line (LF)', async () => {
            const section = await readHeaderSection(chunked(['Subject: a\nTo: b\n\nbody\n']));
            expect(section.toString()).to.equal('Subject: a\nTo: b\n');
        });

        it('finds an empty line split across chunks', async () => {
            for (const split of [['Subject: a\r', '\n\r\nbody'], ['Subject: a\r\n', '\r\nbody'], ['Subject: a\r\n\r', '\nbody'], ['Subject: a\n', '\nbody']]) {
                const section = await readHeaderSection(chunked([...split, 'more body']));
                expect(section.toString().trimEnd(), JSON.stringify(split)).to.equal('Subject: a');
            }
        });

        it('stops reading at the empty line and destroys the stream', async () => {
            const stream = chunked(['Subject: a\r\n\r\n', 'x'.repeat(1000), 'y'.repeat(1000), 'z'.repeat(1000)]);
            await readHeaderSection(stream);
            expect(stream.pulled).to.be.below(3);
            expect(stream.destroyed).to.be.true();
        });

        it('stops at maxBytes when no empty line comes', async () => {
            const stream = chunked(Array.from({ length: 100 }, (_, i) => `X-Line-${i}: ${'v'.repeat(50)}\r\n`));
            const section = await readHeaderSection(stream, 300);
            expect(section.length).to.equal(300);
            expect(stream.pulled).to.be.below(10);
            expect(stream.destroyed).to.be.true();
        });

        it('returns an empty section for a message that starts with an empty line', async () => {
            expect((await readHeaderSection(chunked(['\r\nSubject: body']))).length).to.equal(0);
            expect((await readHeaderSection(chunked(['\nSubject: body']))).length).to.equal(0);
        });

        it('returns everything when the message has no body', async () => {
            expect((await readHeaderSection(chunked(['Subject: a\r\n', 'To: b']))).toString()).to.equal('Subject: a\r\nTo: b');
            expect((await readHeaderSection(chunked([]))).length).to.equal(0);
        });
    });
});
