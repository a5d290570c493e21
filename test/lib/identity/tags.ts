import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { isValidTag, MAX_TAG_CHARS, MAX_TAGS, normaliseTags, tagsFromHeaders } from '../../../lib/identity/tags';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('tags', () => {

    describe('isValidTag()', () => {
        it('takes a-z 0-9 . _ - up to 32 characters', () => {
            expect(isValidTag('a')).to.be.true();
            expect(isValidTag('release-1.2_b')).to.be.true();
            expect(isValidTag('x'.repeat(MAX_TAG_CHARS))).to.be.true();
        });

        for (const bad of ['', 'A', 'a b', 'a,b', 'ü', 'a/b', '"a"', 'x'.repeat(MAX_TAG_CHARS + 1)]) {
            it(`refuses ${JSON.stringify(bad)}`, () => {
                expect(isValidTag(bad)).to.be.false();
            });
        }
    });

    describe('tagsFromHeaders()', () => {
        it('splits at commas, trims, lowercases, drops invalid and empty ones, keeps the first of repeats', () => {
            expect(tagsFromHeaders([' Welcome , beta,,bad tag, ünï, BETA ,x.y_z-1'])).to.equal(['welcome', 'beta', 'x.y_z-1']);
        });

        it('reads every field in order', () => {
            expect(tagsFromHeaders(['a, b', 'c', 'a'])).to.equal(['a', 'b', 'c']);
        });

        it('keeps the first 20 valid tags', () => {
            const many = Array.from({ length: 30 }, (_, i) => `t${i}`);
            expect(tagsFromHeaders([`!!, ${many.join(',')}`])).to.equal(many.slice(0, MAX_TAGS));
        });

        it('drops a tag of 33 characters', () => {
            expect(tagsFromHeaders([`${'x'.repeat(MAX_TAG_CHARS + 1)},ok`])).to.equal(['ok']);
        });

        it('answers [] for no header', () => {
            expect(tagsFromHeaders([])).to.equal([]);
        });
    });

    describe('normaliseTags()', () => {
        it('lowercases and keeps each tag once', () => {
            expect(normaliseTags(['Beta', 'beta', 'a'])).to.equal(['beta', 'a']);
            expect(normaliseTags([])).to.equal([]);
        });

        it('refuses a tag outside the alphabet, an empty one or a long one', () => {
            expect(normaliseTags(['ok', 'not ok'])).to.be.null();
            expect(normaliseTags([''])).to.be.null();
            expect(normaliseTags(['x'.repeat(MAX_TAG_CHARS + 1)])).to.be.null();
        });

        it('takes 20 tags and refuses 21 distinct ones', () => {
            const tags = Array.from({ length: MAX_TAGS + 1 }, (_, i) => `t${i}`);
            expect(normaliseTags(tags.slice(0, MAX_TAGS))).to.equal(tags.slice(0, MAX_TAGS));
            expect(normaliseTags(tags)).to.be.null();
            expect(normaliseTags([...tags.slice(0, MAX_TAGS), 't0'])).to.have.length(MAX_TAGS);
        });
    });
});
