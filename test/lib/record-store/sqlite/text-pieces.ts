import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { textPieces } from '../../../../lib/record-store/sqlite/text-pieces';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('text-pieces', () => {

    describe('textPieces()', () => {

        it('cuts a text into pieces of at most the size, joined back to the text', () => {
            expect(textPieces('abcdefg', 3)).to.equal(['abc', 'def', 'g']);
            expect(textPieces('abc', 3)).to.equal(['abc']);
            expect(textPieces('', 3)).to.equal([]);
        });

        it('moves a cut that would split a surrogate pair before the pair', () => {
            const text = 'ab\u{1f389}cd';
            const pieces = textPieces(text, 3);
            expect(pieces).to.equal(['ab', '\u{1f389}c', 'd']);
            expect(pieces.join('')).to.equal(text);
        });

        it('still makes progress when a piece of one character holds a high surrogate', () => {
            expect(textPieces('\u{1f389}', 1).join('')).to.equal('\u{1f389}');
        });
    });
});
