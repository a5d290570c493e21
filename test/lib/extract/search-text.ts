import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { foldForSearch, SEARCH_PART_SEPARATOR, searchTextOf } from '../../../lib/extract/search-text';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('search text', () => {

    describe('foldForSearch()', () => {
        it('lowercases beyond ASCII', () => {
            expect(foldForSearch('ÄÖÜ Straße ΣΟΦΊΑ')).to.equal('äöü straße σοφία');
        });

        it('turns the three marks into U+FFFD, every time', () => {
            expect(foldForSearch('a\u0001b\u0002c\u0003d')).to.equal('a\uFFFDb\uFFFDc\uFFFDd');
            expect(foldForSearch('x\u0003')).to.equal('x\uFFFD');
            expect(foldForSearch('plain')).to.equal('plain');
        });
    });

    describe('searchTextOf()', () => {
        it('is the folded body when there is no HTML', () => {
            expect(searchTextOf('Hello World', '')).to.equal('hello world');
        });

        it('is the folded body once when the body is the HTML\'s text', () => {
            expect(searchTextOf('From HTML', 'From HTML')).to.equal('from html');
        });

        it('joins the body and the HTML\'s text with the separator, which no folded needle holds', () => {
            const text = searchTextOf('Text part', 'HTML part');
            expect(text).to.equal(`text part${SEARCH_PART_SEPARATOR}html part`);
            expect(text.includes(foldForSearch(`part${SEARCH_PART_SEPARATOR}html`))).to.be.false();
        });
    });
});
