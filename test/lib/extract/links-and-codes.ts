import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { linksAndCodesInSlices, linksAndCodesOf, SEARCH_SLICE_CHARS } from '../../../lib/extract/links-and-codes';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** Lines of 100 characters; `special(i)` replaces line i when it gives one. */
function body(lines: number, special: (i: number) => string | undefined): string {
    const filler = `${'x'.repeat(99)}\n`;
    return Array.from({ length: lines }, (_, i) => {
        const line = special(i);
        return line === undefined ? filler : `${line}\n`;
    }).join('');
}

describe('links-and-codes', () => {

    describe('linksAndCodesInSlices()', () => {

        // Lines around each place a slice ends (the line break after every SEARCH_SLICE_CHARS).
        const nearEdge = (i: number) => [1, 2, 3].some((k) => Math.abs(i - k * SEARCH_SLICE_CHARS / 100) <= 3);

        it('answers what linksAndCodesOf() answers for a body of several slices, URLs, addresses and codes at the edges', async () => {
            // A slice ends after line 10,485 (then 20,971 and 31,457): each line here ends in a URL, every third in a code.
            const text = body(3.5 * SEARCH_SLICE_CHARS / 100, (i) => (nearEdge(i) ? `a${i}@b.test 2024-01-${i % 28} v1.${i} https://x.test/${i}.${i % 3 === 0 ? ` ${4000 + i}` : ''}` : undefined));
            const fields = { subject: 'Your code 918273', body: text, htmlBody: '<a href="https://h.test/">h</a>' };
            const expected = linksAndCodesOf(fields);
            expect(expected.links).to.have.length(1 + 3 * 6);
            expect(expected.codes).to.have.length(1 + 3 * 2);
            expect(await linksAndCodesInSlices(fields)).to.equal(expected);
        });

        it('ends at the caps as linksAndCodesOf() does, with repeats across slices', async () => {
            const text = body(3.5 * SEARCH_SLICE_CHARS / 100, (i) => (i % 200 === 0 ? `see https://x.test/${i % 50_000} and https://y.test/${i} code ${100_000 + (i % 3000)}` : undefined));
            const fields = { subject: '', body: text, htmlBody: '' };
            const expected = linksAndCodesOf(fields);
            expect(expected.links).to.have.length(100);
            expect(await linksAndCodesInSlices(fields)).to.equal(expected);
        });

        it('lets the event loop run between slices', async () => {
            const text = body(2.5 * SEARCH_SLICE_CHARS / 100, () => undefined);
            let turns = 0;
            let running = true;
            const tick = () => {
                turns++;
                if (running) {
                    setImmediate(tick);
                }
            };

            setImmediate(tick);
            const found = await linksAndCodesInSlices({ subject: '', body: text, htmlBody: '' });
            running = false;
            expect(found).to.equal({ links: [], codes: [] });
            expect(turns).to.be.at.least(3);
        });

        it('searches a short body in one step', async () => {
            const fields = { subject: 'code 4821', body: 'go to https://x.test/a, code 99137.', htmlBody: '' };
            expect(await linksAndCodesInSlices(fields)).to.equal(linksAndCodesOf(fields));
        });
    });
});
