import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { attachmentDisposition } from '../../../lib/blob-store/content-disposition';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

// The header grammar we promise: a quoted ASCII fallback without `"` or `\` inside,
// then an RFC 5987 value made only of attr-chars and %XX escapes.
const WELL_FORMED = /^attachment; filename="[\x20\x21\x23-\x5b\x5d-\x7e]*"; filename\*=UTF-8''(?:[A-Za-z0-9!#$&+\-.^_`|~]|%[0-9A-F]{2})+$/;

function parse(header: string): { fallback: string; name: string } {
    const match = /^attachment; filename="([^"]*)"; filename\*=UTF-8''(.+)$/.exec(header);
    expect(match, header).to.exist();
    return { fallback: match![1], name: decodeURIComponent(match![2]) };
}

describe('content-disposition', () => {

    describe('attachmentDisposition()', () => {
        const cases: { name: string; input: string; fallback: string; decoded: string }[] = [
            { name: 'keeps a plain ASCII name', input: '1-report.pdf', fallback: '1-report.pdf', decoded: '1-report.pdf' },
            { name: 'keeps spaces and punctuation', input: "2-a b (c) it's [x].txt", fallback: "2-a b (c) it's [x].txt", decoded: "2-a b (c) it's [x].txt" },
            { name: 'replaces non-ASCII in the fallback and keeps it in filename*', input: '3-r\u00e9sum\u00e9 \u62a5\u544a.pdf', fallback: '3-r_sum_ __.pdf', decoded: '3-r\u00e9sum\u00e9 \u62a5\u544a.pdf' },
            { name: 'replaces an emoji by one character', input: '\ud83d\udce7.eml', fallback: '_.eml', decoded: '\ud83d\udce7.eml' },
            { name: 'cannot be ended early by a double quote', input: 'a"; filename="evil.html', fallback: 'a_; filename=_evil.html', decoded: 'a"; filename="evil.html' },
            { name: 'cannot escape the quote with a backslash', input: 'a\\', fallback: 'a_', decoded: 'a\\' },
            { name: 'removes CR and LF from both forms', input: 'a\r\nSet-Cookie: x=1', fallback: 'a__Set-Cookie: x=1', decoded: 'a__Set-Cookie: x=1' },
            { name: 'removes other control characters and DEL', input: 'a\u0000b\u0007c\u007fd\u0085e', fallback: 'a_b_c_d_e', decoded: 'a_b_c_d_e' },
            { name: 'removes a right-to-left override from both forms', input: 'invoice\u202efdp.exe', fallback: 'invoice_fdp.exe', decoded: 'invoice_fdp.exe' },
            { name: 'removes the other bidi controls', input: 'a\u2066b\u200fc\u061cd', fallback: 'a_b_c_d', decoded: 'a_b_c_d' },
            { name: 'names an empty file name "download"', input: '', fallback: 'download', decoded: 'download' },
            { name: 'names a blank file name "download"', input: '  ', fallback: 'download', decoded: 'download' },
            { name: 'keeps percent signs out of the fallback', input: '100%25.txt', fallback: '100_25.txt', decoded: '100%25.txt' },
            { name: 'keeps slashes out of the fallback', input: '../etc/passwd', fallback: '.._etc_passwd', decoded: '../etc/passwd' },
            { name: 'survives a lone surrogate', input: 'a\ud800b', fallback: 'a_b', decoded: 'a_b' },
            { name: 'percent-encodes the characters RFC 5987 reserves', input: "it's (1)*.txt", fallback: "it's (1)*.txt", decoded: "it's (1)*.txt" }
        ];

        for (const { name, input, fallback, decoded } of cases) {
            it(name, () => {
                const header = attachmentDisposition(input);

                expect(header).to.match(WELL_FORMED);
                expect(parse(header)).to.equal({ fallback, name: decoded });
            });
        }

        it('encodes the RFC 5987 reserved characters rather than leaving them bare', () => {
            expect(attachmentDisposition("it's (1)*.txt")).to.endWith("filename*=UTF-8''it%27s%20%281%29%2A.txt");
        });

        it('bounds the length of what it puts in the header', () => {
            const header = attachmentDisposition('x'.repeat(100_000));

            expect(header).to.match(WELL_FORMED);
            expect(header.length).to.be.below(3000);
        });
    });
});
