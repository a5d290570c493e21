import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { extractCodes, MAX_CODES } from '../../../lib/extract/codes';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** A real-world shape: subject and text body, and the codes it has (docs/api.md, "Links and codes"). */
interface Shape {
    name: string;
    subject: string;
    body: string;
    codes: string[];
}

const SHAPES: Shape[] = [
    { name: 'sign-up code in the body', subject: 'Confirm your email', body: 'Your verification code is 482913\nIt expires in 10 minutes.', codes: ['482913'] },
    { name: 'code at the end of the subject', subject: 'Your Example code: 739201', body: 'Use 739201 to sign in.', codes: ['739201'] },
    { name: 'code at the end of a sentence (`482913.`)', subject: '', body: 'Enter 482913. Do not share it.', codes: ['482913'] },
    { name: 'codes of 4 and 8 digits count; 3 and 9 do not', subject: '', body: 'PIN 4821, backup 12345678, short 123, long 123456789', codes: ['4821', '12345678'] },
    { name: 'a code split by a space (`123 456`): two 3-digit runs, no code', subject: 'Code: 123 456', body: 'Your code is 123 456', codes: [] },
    { name: 'password reset: token in the URL, code in the text', subject: 'Reset your password', body: 'Reset at https://x.test/reset?code=55667788&uid=1234 or type 908172 in the app.', codes: ['908172'] },
    {
        name: 'dates: ISO, slashed, dotted',
        subject: 'Invoice of 2024-05-17',
        body: 'Due 17/05/2025, paid 17.05.2025, period 20240517-20240617, 05-17-2026.',
        codes: []
    },
    { name: 'times and durations', subject: '', body: 'Meeting at 10:30, ends 1130:45, uptime 12:3456', codes: [] },
    {
        name: 'phone numbers with separators or a leading `+`',
        subject: '',
        body: 'Call +15551234567 or (555) 123-4567 or 555.123.4567 or +44-20-7946-0958 or 0800-1234.',
        codes: []
    },
    {
        name: 'phone numbers grouped with spaces: groups of 4 stand alone, so they are codes (on purpose)',
        subject: '',
        body: 'Support: +44 20 7946 0958',
        codes: ['7946', '0958']
    },
    { name: 'prices and decimals', subject: 'Order total 1299.00', body: 'Total: $1,299.00, €12.500,00, 0.12345 BTC, 1234,56 kr', codes: [] },
    { name: 'a price with no decimals is a bare number, so a code', subject: '', body: 'Only $4999 today', codes: ['4999'] },
    {
        name: 'order numbers with letters glued on',
        subject: 'Order #A12345 shipped',
        body: 'Ref ORD12345678X, SKU 12345B, invoice INV-2024-00017, tracking 1Z999AA10123456784',
        codes: []
    },
    { name: 'years 1900-2099 in footers are not codes; 1899 and 2100 are', subject: '', body: '© 2024 Example Inc. Since 1900. Until 2099. Founded 1899, plan 2100.', codes: ['1899', '2100'] },
    { name: 'version numbers', subject: 'Release 2.10.1234', body: 'Upgrade to 10.2.12345 or v1234 or 1.0.0-12345; build 5678-rc has letters after a dash, so it counts', codes: ['5678'] },
    { name: '`+` before digits is no code; `-` or `#` before them is fine', subject: '', body: 'Dial +123456, id -654321, #778899', codes: ['654321', '778899'] },
    {
        name: 'letters (any script) on either side',
        subject: '',
        body: 'abc123456 123456abc código123456 123456ü x 246810',
        codes: ['246810']
    },
    {
        name: 'e-mail addresses blanked: digits in them are no code',
        subject: 'From 123456@users.example',
        body: 'Write to john.doe+4567@x.test or 99887766@mail.x.test; your code is 314159',
        codes: ['314159']
    },
    {
        name: 'URLs blanked: digits in them are no code',
        subject: '',
        body: 'Track at https://x.test/t/123456789 or http://x.test:8080/98765?id=1234, code 271828',
        codes: ['271828']
    },
    {
        name: 'a blanked URL or address leaves the digits around it apart, each judged on its own',
        subject: '',
        body: '1234https://x.test/5678 and 12a@b.c34 and 4321 user@x.test8765',
        codes: ['1234', '4321']
    },
    {
        name: 'subject and body searched apart: the subject\'s last digits do not run into the body',
        subject: 'Code 1234',
        body: '5678 is your backup',
        codes: ['1234', '5678']
    },
    { name: 'distinct, in order of first appearance, subject first', subject: 'Code 777888', body: '111222 then 777888 then 111222 then 333444', codes: ['777888', '111222', '333444'] },
    { name: 'HTML-derived text: link targets in brackets blanked', subject: '', body: 'Verify [https://x.test/v/123456] code 654987', codes: ['654987'] },
    { name: 'non-ASCII digits next to a run count as digits; full-width digits are no code', subject: '', body: '١1234 ５６７８９０', codes: [] }
];

describe('codes', () => {

    describe('extractCodes()', () => {

        for (const shape of SHAPES) {
            it(shape.name, () => {
                expect(extractCodes(shape.subject, shape.body)).to.equal(shape.codes);
            });
        }

        it('keeps at most 10 codes', () => {
            const body = Array.from({ length: 15 }, (_, i) => String(500000 + i)).join(' ');
            const codes = extractCodes('Code 999999', body);
            expect(codes).to.have.length(MAX_CODES);
            expect(codes[0]).to.equal('999999');
            expect(codes[9]).to.equal('500008');
        });

        it('returns [] for empty texts', () => {
            expect(extractCodes('', '')).to.equal([]);
        });

        it('reads a long text with many `@` and URLs in linear time without failing', () => {
            const body = `${'a@'.repeat(100_000)} ${'https://x.test/'.repeat(10_000)} 112233`;
            expect(extractCodes('', body)).to.equal(['112233']);
        });
    });
});
