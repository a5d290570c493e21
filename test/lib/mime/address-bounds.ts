import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { boundAddressLine, hasOverlongLabel, MAX_ADDRESS_FIELD_CHARS, MAX_ADDRESSES_PER_FIELD } from '../../../lib/mime/address-bounds';
import { parseMessage } from '../../../lib/mime/parse';
import { hostileLabel, nestedGroupsMessage, punycodeMessage } from '../../helpers/hostile-addresses';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** Far above what a bounded parse of these shapes takes (milliseconds), far below the unbounded one (2.3 to 25 s). */
const FAR_BOUND_MS = 1000;

async function timedParse(raw: Buffer) {
    const started = process.hrtime.bigint();
    const parsed = await parseMessage(raw);
    return { parsed, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

describe('address-bounds', () => {

    describe('boundAddressLine()', () => {

        it('leaves a field within the bounds as it is, quoted and commented separators included', () => {
            const line = 'To: "Doe, Jane: the first" <jane@x.test>, (a, comment; here) bob@x.test, team: c@x.test, d@x.test;';
            expect(boundAddressLine(line)).to.equal(line);
        });

        it(`cuts a field at the last separator before ${MAX_ADDRESS_FIELD_CHARS} characters`, () => {
            const line = `To: ${Array.from({ length: 900 }, (_, i) => `u${i}.${'x'.repeat(90)}@x.test`).join(', ')}`;
            const bounded = boundAddressLine(line);
            expect(bounded.length).to.be.within(MAX_ADDRESS_FIELD_CHARS - 20, MAX_ADDRESS_FIELD_CHARS + 4);
            expect(line.startsWith(bounded)).to.be.true();
            expect(line[bounded.length]).to.equal(',');
        });

        it(`keeps ${MAX_ADDRESSES_PER_FIELD} addresses of a longer list`, () => {
            const line = `Cc: ${Array.from({ length: 1500 }, (_, i) => `${i}@x`).join(',')}`;
            expect(boundAddressLine(line).slice(4).split(',')).to.have.length(MAX_ADDRESSES_PER_FIELD);
        });

        it('cuts a group nested in a group where the nested one starts', () => {
            expect(boundAddressLine('To: a@x.test, outer: b@x.test, inner: c@x.test;;')).to.equal('To: a@x.test, outer: b@x.test');
            expect(boundAddressLine('To: g: a@x.test; h: b@x.test;')).to.equal('To: g: a@x.test; h: b@x.test;');
        });

        it('cuts a single address longer than the bound to nothing', () => {
            expect(boundAddressLine(`To: r@${hostileLabel(100_000)}`)).to.equal('To:');
        });
    });

    describe('hasOverlongLabel()', () => {

        it('finds a label over 63 characters anywhere in the domain', () => {
            expect(hasOverlongLabel(`${'a'.repeat(63)}.example`)).to.be.false();
            expect(hasOverlongLabel(`${'a'.repeat(64)}.example`)).to.be.true();
            expect(hasOverlongLabel(`sub.${'a'.repeat(64)}`)).to.be.true();
            expect(hasOverlongLabel('')).to.be.false();
        });
    });

    describe('parseMessage() of hostile address fields', () => {

        it('parses a To of one `xn--` label of a million characters in milliseconds (25 s unbounded)', async () => {
            const { parsed, ms } = await timedParse(punycodeMessage());
            expect(ms).to.be.below(FAR_BOUND_MS);
            expect(parsed.to).to.equal([]);
            expect(parsed.subject).to.equal('punycode');
        });

        it('keeps an address whose `xn--` label is over 63 characters but within the field bound, undecoded', async () => {
            const label = hostileLabel(60_000);
            const { parsed, ms } = await timedParse(Buffer.from(`To: r@${label}, s@xn--mnchen-3ya.test\r\nSubject: long label\r\n\r\nbody\r\n`));
            expect(ms).to.be.below(FAR_BOUND_MS);
            expect(parsed.to).to.equal([`r@${label}`, 's@münchen.test']);
        });

        it('parses a To of nested groups 830 KB long in milliseconds (2.3 s unbounded), the addresses of the outer group kept', async () => {
            const { parsed, ms } = await timedParse(nestedGroupsMessage());
            expect(ms).to.be.below(FAR_BOUND_MS);
            expect(parsed.subject).to.equal('nested');
            expect(parsed.to).to.equal([]);
        });

        it('still decodes an ordinary punycode domain and a flat list of many addresses', async () => {
            const list = Array.from({ length: 200 }, (_, i) => `"User ${i}" <u${i}@xn--bcher-kva.test>`).join(', ');
            const { parsed } = await timedParse(Buffer.from(`From: a@xn--mnchen-3ya.test\r\nTo: ${list}\r\n\r\nbody\r\n`));
            expect(parsed.from).to.equal('a@münchen.test');
            expect(parsed.to).to.have.length(200);
            expect(parsed.to[199]).to.equal('u199@bücher.test');
        });
    });
});
