import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { htmlToPlainText } from '../../../lib/extract/html-text';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('html-text', () => {

    describe('htmlToPlainText()', () => {

        it('keeps the text and drops the tags', () => {
            expect(htmlToPlainText('<b>bold</b> and <i>italic</i>')).to.equal('bold and italic');
        });

        it('collapses whitespace runs as a browser does', () => {
            expect(htmlToPlainText('  a \n\t b  ')).to.equal('a b');
        });

        it('puts blocks on their own lines and paragraphs apart', () => {
            expect(htmlToPlainText('<div>one</div><div>two</div><p>three</p><p>four</p>')).to.equal('one\ntwo\n\nthree\n\nfour');
        });

        it('turns each <br> into a line break', () => {
            expect(htmlToPlainText('a<br>b<br/><br />c')).to.equal('a\nb\n\nc');
        });

        it('separates table cells and rows', () => {
            expect(htmlToPlainText('<table><tr><td>Code</td><td>123456</td></tr><tr><td>x</td></tr></table>')).to.equal('Code 123456\nx');
        });

        it('keeps the whitespace of <pre>', () => {
            expect(htmlToPlainText('<pre>a\r\n  b</pre>after')).to.equal('a\n  b\n\nafter');
        });

        it('drops head, title, style and script content', () => {
            expect(htmlToPlainText('<head><title>T</title><style>p{}</style></head><script>x<y</script><SCRIPT type="a">z</SCRIPT>shown')).to.equal('shown');
        });

        it('drops comments, conditional comments and doctype', () => {
            expect(htmlToPlainText('<!DOCTYPE html><!--[if mso]><p>mso</p><![endif]-->a<!-- c -->b')).to.equal('ab');
        });

        it('writes an http link as text [url] with entities decoded', () => {
            expect(htmlToPlainText('<a href="https://x.test/?a=1&amp;b=2">Verify</a>')).to.equal('Verify [https://x.test/?a=1&b=2]');
        });

        it('writes a link whose text is its url only once', () => {
            expect(htmlToPlainText('<a href=\'https://x.test/\'>https://x.test/</a>')).to.equal('https://x.test/');
        });

        it('leaves out non-http link targets', () => {
            expect(htmlToPlainText('<a href="javascript:alert(1)">x</a> <a href="#top">y</a> <a name="n">z</a>')).to.equal('x y z');
        });

        it('decodes named and numeric character references', () => {
            expect(htmlToPlainText('&lt;&gt;&amp;&quot;&#39;&#x1F389;&euro;&nbsp;&unknown;')).to.equal('<>&"\'🎉€\u00a0&unknown;');
        });

        it('leaves references named after Object.prototype members as written', () => {
            expect(htmlToPlainText('&constructor; &toString; &__proto__; &hasOwnProperty;')).to.equal('&constructor; &toString; &__proto__; &hasOwnProperty;');
        });

        it('decodes uppercase legacy references', () => {
            expect(htmlToPlainText('&AMP; &LT;')).to.equal('& <');
        });

        it('writes the target of a link without text, with no leading space', () => {
            expect(htmlToPlainText('<a href="https://x.test/"><img src="logo.png"></a>')).to.equal('[https://x.test/]');
        });

        it('decodes invalid numeric references to U+FFFD', () => {
            expect(htmlToPlainText('&#0;&#xD800;&#x110000;')).to.equal('\ufffd\ufffd\ufffd');
        });

        it('treats a lone < as text', () => {
            expect(htmlToPlainText('1 < 2 and 3 <4')).to.equal('1 < 2 and 3 <4');
        });

        it('does not end a tag at a > inside a quoted attribute', () => {
            expect(htmlToPlainText('<img alt="a > b" src="x">after')).to.equal('after');
        });

        it('reads HTML nested 100,000 elements deep without recursion', () => {
            const html = '<div><span>'.repeat(50_000) + 'deep' + '</span></div>'.repeat(50_000);
            expect(htmlToPlainText(html)).to.equal('deep');
        });

        it('ends at an unterminated tag, comment or script', () => {
            expect(htmlToPlainText('a<div class="x')).to.equal('a');
            expect(htmlToPlainText('a<!-- never closed')).to.equal('a');
            expect(htmlToPlainText('a<script>never closed')).to.equal('a');
        });

        it('returns "" for markup without text', () => {
            expect(htmlToPlainText('<html><body><img src="x"></body></html>')).to.equal('');
        });
    });
});
