import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { cleanMailText } from '../../../lib/mime/mail-text';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('mail-text', () => {

    describe('cleanMailText()', () => {

        it('drops every C0 control character but TAB, LF and CR', () => {
            const every = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');
            expect(cleanMailText(`a${every}b`)).to.equal('a\t\n\rb');
        });

        it('keeps DEL, C1 controls, astral characters and paired surrogates', () => {
            const kept = 'x\u007f\u0085\u{1f389}ü東';
            expect(cleanMailText(kept)).to.equal(kept);
        });

        it('replaces a lone surrogate with U+FFFD', () => {
            expect(cleanMailText('a\uD800b\uDC00')).to.equal('a\uFFFDb\uFFFD');
        });

        it('keeps an email\'s JSON within about twice its text: every character left escapes to at most 2 bytes per byte', () => {
            const worst = Array.from({ length: 0x800 }, (_, i) => String.fromCharCode(i)).join('').repeat(8);
            const cleaned = cleanMailText(worst);
            expect(Buffer.byteLength(JSON.stringify(cleaned))).to.be.at.most(2 * Buffer.byteLength(cleaned) + 2);
            // Before: control characters are six bytes each in JSON.
            expect(Buffer.byteLength(JSON.stringify('\u0001'.repeat(1000)))).to.equal(6002);
        });
    });
});
