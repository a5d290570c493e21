import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { extractLinks, MAX_LINKS } from '../../../lib/extract/links';
import type { Link } from '../../../lib/types';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** A real-world shape: the HTML and text bodies, and the links they have (docs/api.md, "Links and codes"). */
interface Shape {
    name: string;
    html: string;
    body: string;
    links: Link[];
}

const SHAPES: Shape[] = [
    {
        name: 'sign-up confirmation: a button, the same URL again in the text part',
        html: '<table><tr><td><a href="https://app.example.com/confirm?token=abc123" class="btn">Confirm my account</a></td></tr></table>',
        body: 'Welcome!\n\nConfirm your account: https://app.example.com/confirm?token=abc123\n',
        links: [{ href: 'https://app.example.com/confirm?token=abc123', text: 'Confirm my account' }]
    },
    {
        name: 'password reset: button, footer links, a mailto',
        html: '<p>Someone asked to reset your password.</p>' +
            '<p><a href="https://example.com/reset/7f3a9c">Reset password</a></p>' +
            '<p>Not you? <a href="mailto:security@example.com">Tell us</a> &middot; <a href="https://example.com/help">Help</a></p>',
        body: '',
        links: [
            { href: 'https://example.com/reset/7f3a9c', text: 'Reset password' },
            { href: 'mailto:security@example.com', text: 'Tell us' },
            { href: 'https://example.com/help', text: 'Help' }
        ]
    },
    {
        name: 'magic link through tracking redirects: hrefs kept as written, not followed or normalised',
        html: '<a href="https://click.mailer.example/ls/click?upn=aB3-_xY%3D%3D&amp;u=1">Sign in to Example</a>' +
            '<img src="https://click.mailer.example/wf/open?upn=zz" width="1" height="1">',
        body: 'Sign in: https://click.mailer.example/ls/click?upn=aB3-_xY%3D%3D&u=1\n',
        links: [{ href: 'https://click.mailer.example/ls/click?upn=aB3-_xY%3D%3D&u=1', text: 'Sign in to Example' }]
    },
    {
        name: 'entities in hrefs: named, decimal and hex references decoded, HTTPS scheme in capitals kept',
        html: '<a href="HTTPS://x.test/a?b=1&amp;c=2&#38;d=3&#x26;e=4">Go</a>',
        body: '',
        links: [{ href: 'HTTPS://x.test/a?b=1&c=2&d=3&e=4', text: 'Go' }]
    },
    {
        name: 'upper-case tags, single-quoted and unquoted attributes, spaces around the href',
        html: "<A HREF='https://x.test/one'>One</A> <a class=btn href=https://x.test/two>Two</a> <a href = \"  https://x.test/three \n\">Three</a>",
        body: '',
        links: [
            { href: 'https://x.test/one', text: 'One' },
            { href: 'https://x.test/two', text: 'Two' },
            { href: 'https://x.test/three', text: 'Three' }
        ]
    },
    {
        name: 'nested elements joined, entities decoded, whitespace collapsed, blocks and <br> separate words',
        html: '<a href="https://x.test/v">\n  <span style="color:red">Ver</span><b>ify</b>&nbsp;your\n\n  <i>e&#8209;mail</i><br>now<div>please</div></a>',
        body: '',
        links: [{ href: 'https://x.test/v', text: 'Verify your e\u2011mail now please' }]
    },
    {
        name: 'image-only button: text is ""',
        html: '<a href="https://x.test/img"><img src="cid:button" alt="Click"></a>',
        body: '',
        links: [{ href: 'https://x.test/img', text: '' }]
    },
    {
        name: 'anchors that are not links: fragments, javascript:, tel:, relative, no href, "http:" without slashes',
        html: '<a name="top">Top</a><a href="#x">Jump</a><a href="javascript:void(0)">JS</a><a href="tel:+15551234567">Call</a>' +
            '<a href="/relative">Rel</a><a href="http:x.test">Odd</a><a href="ftp://x.test/f">FTP</a><a href="https://x.test/ok">OK</a>',
        body: '',
        links: [{ href: 'https://x.test/ok', text: 'OK' }]
    },
    {
        name: 'anchors in comments, scripts, styles and Outlook conditionals are not shown, so not links',
        html: '<!-- <a href="https://x.test/comment">c</a> --><script>var s = \'<a href="https://x.test/script">s</a>\';</script>' +
            '<style>a[href="https://x.test/style"] { color: red }</style><!--[if mso]><a href="https://x.test/mso">m</a><![endif]-->' +
            '<a href="https://x.test/shown">Shown<!-- hidden --><script>x()</script></a>',
        body: '',
        links: [{ href: 'https://x.test/shown', text: 'Shown' }]
    },
    {
        name: 'an unclosed anchor ends at the next anchor, the last one at the end of the document',
        html: '<a href="https://x.test/1">first <a href="https://x.test/2">second',
        body: '',
        links: [{ href: 'https://x.test/1', text: 'first' }, { href: 'https://x.test/2', text: 'second' }]
    },
    {
        name: 'an attribute value holding `>` or another href does not fool the scan',
        html: '<a title="a > b href=https://x.test/fake" data-href="https://x.test/data" href="https://x.test/real">Real</a>',
        body: '',
        links: [{ href: 'https://x.test/real', text: 'Real' }]
    },
    {
        name: 'links only in the text part',
        html: '',
        body: 'Hi,\nverify here: https://x.test/verify?t=1\nor read https://x.test/faq.\n',
        links: [{ href: 'https://x.test/verify?t=1', text: 'https://x.test/verify?t=1' }, { href: 'https://x.test/faq', text: 'https://x.test/faq' }]
    },
    {
        name: 'text URLs: trailing punctuation dropped, ends at whitespace < > ", inner punctuation kept',
        html: '',
        body: '(see https://x.test/a)... "https://x.test/b" <https://x.test/c> https://x.test/d?x=1,2;y=3!? ' +
            '[https://x.test/e] \'https://x.test/f\' https://x.test/g:8080/h.html, HTTP://X.TEST/I',
        links: ['https://x.test/a', 'https://x.test/b', 'https://x.test/c', 'https://x.test/d?x=1,2;y=3', 'https://x.test/e',
            'https://x.test/f', 'https://x.test/g:8080/h.html', 'HTTP://X.TEST/I'].map((href) => ({ href, text: href }))
    },
    {
        name: 'text part: no mailto, no bare scheme, no www. without scheme',
        html: '',
        body: 'Write to mailto:a@x.test or a@x.test, visit www.x.test, or https:// alone, or https://.',
        links: []
    },
    {
        name: 'deduplicated by exact href, the HTML first: its text wins; another case or a slash is another href',
        html: '<a href="https://x.test/a">First</a><a href="https://x.test/a">Second</a><a href="https://x.test/A">Upper</a>',
        body: 'https://x.test/a https://x.test/a/ https://x.test/b https://x.test/b',
        links: [
            { href: 'https://x.test/a', text: 'First' },
            { href: 'https://x.test/A', text: 'Upper' },
            { href: 'https://x.test/a/', text: 'https://x.test/a/' },
            { href: 'https://x.test/b', text: 'https://x.test/b' }
        ]
    },
    {
        name: 'the body derived from HTML (`text [url]`) adds nothing new',
        html: '<p>Hello <a href="https://x.test/go">Go</a></p>',
        body: 'Hello Go [https://x.test/go]',
        links: [{ href: 'https://x.test/go', text: 'Go' }]
    }
];

describe('links', () => {

    describe('extractLinks()', () => {

        for (const shape of SHAPES) {
            it(shape.name, () => {
                expect(extractLinks(shape.html, shape.body)).to.equal(shape.links);
            });
        }

        it('keeps the first 100 distinct links, counted after deduplication', () => {
            const html = Array.from({ length: 80 }, (_, i) => `<a href="https://x.test/${i}">${i}</a><a href="https://x.test/${i}">again</a>`).join('');
            const body = Array.from({ length: 80 }, (_, i) => `https://x.test/${i + 40}`).join('\n');
            const links = extractLinks(html, body);
            expect(links).to.have.length(MAX_LINKS);
            expect(links[79]).to.equal({ href: 'https://x.test/79', text: '79' });
            expect(links[80]).to.equal({ href: 'https://x.test/80', text: 'https://x.test/80' });
            expect(links[99].href).to.equal('https://x.test/99');
        });

        it('stops at 100 links from the HTML alone', () => {
            const html = Array.from({ length: 150 }, (_, i) => `<a href="https://x.test/${i}">${i}</a>`).join('');
            const links = extractLinks(html, 'https://x.test/from-text');
            expect(links).to.have.length(MAX_LINKS);
            expect(links[99].href).to.equal('https://x.test/99');
        });

        it('returns [] for empty bodies', () => {
            expect(extractLinks('', '')).to.equal([]);
        });

        it('keeps an href longer than 16 KiB whole', () => {
            const href = `https://x.test/?q=${'a'.repeat(20_000)}`;
            expect(extractLinks(`<a href="${href}">Long</a>`, '')).to.equal([{ href, text: 'Long' }]);
        });

        it('reads deeply nested and unterminated markup without failing', () => {
            const html = `<a href="https://x.test/deep">${'<span>'.repeat(50_000)}deep${'</span>'.repeat(50_000)}</a><a href="https://x.test/cut`;
            expect(extractLinks(html, '')).to.equal([{ href: 'https://x.test/deep', text: 'deep' }, { href: 'https://x.test/cut', text: '' }]);
        });
    });
});
