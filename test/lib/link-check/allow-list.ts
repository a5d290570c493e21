import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { parseLinkAllowList } from '../../../lib/link-check/allow-list';
import { linkTargets, MAX_CHECKED_LINKS } from '../../../lib/link-check/link-targets';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('lib/link-check', () => {

    describe('parseLinkAllowList()', () => {

        it('allows names, subdomains, addresses, networks and public addresses, each as it says', () => {
            const list = parseLinkAllowList(['Example.com', '*.shop.test', '203.0.113.7', '10.0.0.0/8', '[fd00::1]:8080']);
            const allowed = (host: string, address: string, port = 443) => list.verdict(host, address, port, []) === undefined;
            expect(allowed('example.com', '93.184.216.34')).to.be.true();
            expect(allowed('EXAMPLE.COM.', '93.184.216.34')).to.be.true();
            expect(allowed('www.example.com', '93.184.216.34')).to.be.false();
            expect(allowed('a.shop.test', '93.184.216.34')).to.be.true();
            expect(allowed('shop.test', '93.184.216.34')).to.be.false();
            expect(allowed('evilshop.test', '93.184.216.34')).to.be.false();
            // A listed name reaching a denied address is refused; a listed address or network is not.
            expect(allowed('example.com', '127.0.0.1')).to.be.false();
            expect(allowed('203.0.113.7', '203.0.113.7')).to.be.true();
            expect(allowed('anything.test', '10.1.2.3')).to.be.true();
            expect(allowed('anything.test', '11.1.2.3')).to.be.false();
            expect(allowed('fd00::1', 'fd00::1', 8080)).to.be.true();
            expect(allowed('fd00::1', 'fd00::1', 8081)).to.be.false();
            expect(parseLinkAllowList(['public']).verdict('any.test', '8.8.8.8', 80, [])).to.be.undefined();
            expect(parseLinkAllowList(['public']).verdict('any.test', '::ffff:7f00:1', 80, [])).to.match(/loopback/);
        });

        it('refuses the service\'s own ports on a denied address unless an entry names the port', () => {
            expect(parseLinkAllowList(['127.0.0.1/32']).verdict('127.0.0.1', '127.0.0.1', 8025, [8025])).to.match(/own/);
            expect(parseLinkAllowList(['127.0.0.1/32']).verdict('127.0.0.1', '127.0.0.1', 3000, [8025])).to.be.undefined();
            expect(parseLinkAllowList(['127.0.0.1:8025']).verdict('127.0.0.1', '127.0.0.1', 8025, [8025])).to.be.undefined();
        });

        it('throws on an empty list and on an entry that is none of the kinds, naming it', () => {
            expect(() => parseLinkAllowList([])).to.throw('the allow-list is empty');
            for (const entry of ['http://example.com', '10.0.0.0/33', '*.', 'exa mple.com', '127.0.0.1:0', '1.2.3', '[::1]:99999']) {
                expect(() => parseLinkAllowList([entry]), entry).to.throw(new RegExp(JSON.stringify(entry).replace(/[.*[\]/]/g, '\\$&')));
            }
        });
    });

    describe('linkTargets()', () => {

        it('keeps the http(s) links in order and at most 100', () => {
            const links = [{ href: 'mailto:a@b.test', text: '' }, { href: 'HTTPS://x.test/', text: '' }, { href: 'ftp://x.test/', text: '' }, { href: 'http://y.test/', text: '' }];
            expect(linkTargets(links)).to.equal(['HTTPS://x.test/', 'http://y.test/']);
            const many = Array.from({ length: 150 }, (_, i) => ({ href: `http://x.test/${i}`, text: '' }));
            expect(linkTargets(many)).to.have.length(MAX_CHECKED_LINKS);
            expect(linkTargets(many).at(-1)).to.equal('http://x.test/99');
        });
    });
});
