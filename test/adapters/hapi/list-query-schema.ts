import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { parseBearer } from '../../../adapters/hapi/auth-scheme';
import { listQuerySchema, parseTimeFilter, queryErrorCode, toListQuery, type ListQueryValues } from '../../../adapters/hapi/list-query-schema';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('Hapi plugin list query', () => {

    describe('parseTimeFilter()', () => {
        const VALID: Array<[string, number]> = [
            ['0', 0],
            ['1700000000000', 1_700_000_000_000],
            ['8640000000000000', 8.64e15],
            ['2024-01-15', Date.UTC(2024, 0, 15)],
            ['2024-02-29', Date.UTC(2024, 1, 29)],
            ['2024-01-15T10:20', Date.UTC(2024, 0, 15, 10, 20)],
            ['2024-01-15T10:20:30', Date.UTC(2024, 0, 15, 10, 20, 30)],
            ['2024-01-15T10:20:30Z', Date.UTC(2024, 0, 15, 10, 20, 30)],
            ['2024-01-15t10:20:30z', Date.UTC(2024, 0, 15, 10, 20, 30)],
            ['2024-01-15T10:20:30.5Z', Date.UTC(2024, 0, 15, 10, 20, 30, 500)],
            ['2024-01-15T10:20:30.123456789Z', Date.UTC(2024, 0, 15, 10, 20, 30, 123)],
            ['2024-01-15T10:20:30+02:00', Date.UTC(2024, 0, 15, 8, 20, 30)],
            ['2024-01-15T10:20:30-0130', Date.UTC(2024, 0, 15, 11, 50, 30)],
            // Years below 100 stay themselves (Date.UTC would read 50 as 1950).
            ['0050-06-01', new Date('0050-06-01T00:00:00Z').getTime()],
            // Digits only are always Unix milliseconds, never a basic-format date.
            ['20240115', 20_240_115]
        ];

        for (const [input, expected] of VALID) {
            it(`reads ${input}`, () => {
                expect(parseTimeFilter(input)).to.equal(expected);
            });
        }

        const INVALID = ['', ' 1', '1 ', '-1', '1.5', '1e3', '0x10', '8640000000000001', '12345678901234567', 'yesterday',
            '2024-1-15', '2024-00-10', '2024-13-01', '2023-02-29', '2024-04-31', '2024-01-00', '2024-01-15T24:00', '2024-01-15T10:60',
            '2024-01-15T10:20:60', '2024-01-15T10', '2024-01-15 10:20', '2024-01-15T10:20+24:00', '2024-01-15T10:20+02:60', '2024-01-15T10:20:30.Z',
            'Mon, 15 Jan 2024 10:20:30 GMT'];

        for (const input of INVALID) {
            it(`refuses ${JSON.stringify(input)}`, () => {
                expect(parseTimeFilter(input)).to.be.null();
            });
        }
    });

    describe('queryErrorCode()', () => {
        const codeOf = (query: Record<string, unknown>) => {
            const { error } = listQuerySchema.validate(query, { abortEarly: false });
            return error ? queryErrorCode(error.details) : null;
        };

        it('orders MISSING_INBOX, INVALID_INBOX, INVALID_LIMIT, VALIDATION_ERROR', () => {
            expect(codeOf({ limit: '0', nope: '1' })).to.equal('MISSING_INBOX');
            expect(codeOf({ inbox: 'A', limit: '0', nope: '1' })).to.equal('INVALID_INBOX');
            expect(codeOf({ inbox: 'a', limit: '0', nope: '1' })).to.equal('INVALID_LIMIT');
            expect(codeOf({ inbox: 'a', nope: '1' })).to.equal('VALIDATION_ERROR');
            expect(codeOf({ inbox: 'a' })).to.be.null();
        });
    });

    describe('toListQuery()', () => {
        it('leaves out empty filters and converts the cursor', () => {
            const { value } = listQuerySchema.validate({ inbox: 'a', sender: '', subject: 'x', cursor: '5#id', receivedAfter: '10', hasAttachments: 'false' });
            expect(toListQuery(value as ListQueryValues)).to.equal({
                inbox: 'a',
                limit: 50,
                after: { receivedAt: 5, messageId: 'id' },
                subject: 'x',
                receivedAfter: 10,
                hasAttachments: false
            });
        });
    });

    describe('parseBearer()', () => {
        it('reads the token of a well-formed header only', () => {
            expect(parseBearer('Bearer abc')).to.equal('abc');
            expect(parseBearer('bearer a-b_c.d~e+f/g==')).to.equal('a-b_c.d~e+f/g==');
            expect(parseBearer(' Bearer abc\t')).to.equal('abc');
            for (const bad of [undefined, ['Bearer abc'], '', 'Bearer', 'Bearer ', 'Bearer  abc', 'Bearer a b', 'Bearer a=b', 'Bearer\tabc', 'Basic abc', `Bearer ${'a'.repeat(513)}`]) {
                expect(parseBearer(bad), JSON.stringify(bad)).to.be.null();
            }

            expect(parseBearer(`Bearer ${'a'.repeat(512)}`)).to.equal('a'.repeat(512));
        });
    });
});
