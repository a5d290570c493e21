import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { deniedRange, embeddedIpv4, ipv6Groups } from '../../../lib/link-check/denied-ranges';
import { inNetwork, ipBytes } from '../../../lib/link-check/ip-address';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('lib/link-check/denied-ranges', () => {

    it('names the range of every address a link may not reach', () => {
        const denied: Array<[string, string]> = [
            ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'], ['0.0.0.0', 'unspecified'], ['10.9.8.7', 'private'],
            ['172.31.255.255', 'private'], ['192.168.0.1', 'private'], ['100.64.0.1', 'CGNAT'], ['100.127.255.255', 'CGNAT'],
            ['169.254.169.254', 'link-local'], ['224.0.0.251', 'multicast'], ['255.255.255.255', 'reserved and broadcast'],
            ['::', 'unspecified, loopback and IPv4-compatible'], ['::1', 'unspecified, loopback and IPv4-compatible'],
            ['fc00::1', 'unique local'], ['fdff::1', 'unique local'], ['fe80::1', 'link-local'], ['ff02::1', 'multicast'],
            ['64:ff9b:1::1', 'local-use NAT64'],
            ['::ffff:127.0.0.1', 'loopback (inside ::ffff:127.0.0.1)'], ['::ffff:a00:1', 'private (inside ::ffff:a00:1)'],
            ['64:ff9b::7f00:1', 'loopback (inside 64:ff9b::7f00:1)'], ['64:ff9b::169.254.169.254', 'link-local (inside 64:ff9b::169.254.169.254)'],
            ['2002:7f00:1::', 'loopback (inside 2002:7f00:1::)'], ['2002:c0a8:101::1', 'private (inside 2002:c0a8:101::1)'],
            ['2001:0:7f00:1::', 'loopback (inside 2001:0:7f00:1::)'], ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback (inside 2001:0:4136:e378:8000:63bf:80ff:fffe)']
        ];
        expect(denied.map(([address]) => [address, deniedRange(address)])).to.equal(denied);
    });

    it('lets public addresses through, in IPv6 transition forms too', () => {
        for (const address of ['8.8.8.8', '93.184.216.34', '100.128.0.1', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) {
            expect(deniedRange(address), address).to.be.undefined();
        }

        expect(deniedRange('localhost')).to.equal('not an IP address');
    });

    it('reads IPv6 groups and the IPv4 addresses inside them', () => {
        expect(ipv6Groups('::ffff:1.2.3.4')).to.equal([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
        expect(ipv6Groups('1::')).to.equal([1, 0, 0, 0, 0, 0, 0, 0]);
        expect(embeddedIpv4('2001:0:4136:e378:8000:63bf:3fff:fdd2')).to.equal(['65.54.227.120', '192.0.2.45']);
        expect(embeddedIpv4('2606:4700::1111')).to.equal([]);
    });

    it('reads only whole addresses as addresses, and matches networks bit by bit', () => {
        expect(ipBytes('10.0.0.1')).to.equal([10, 0, 0, 1]);
        expect(ipBytes('::ffff:1.2.3.4')).to.equal([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4]);
        for (const text of ['1.2.3', '01.2.3.4', '256.1.1.1', '1.2.3.4.5', '1::2::3', ':::', '12345::', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7', 'fe80::1%eth0', 'localhost', '']) {
            expect(ipBytes(text), text).to.be.undefined();
        }

        expect(inNetwork(ipBytes('100.127.255.255')!, { bytes: ipBytes('100.64.0.0')!, prefix: 10 })).to.be.true();
        expect(inNetwork(ipBytes('100.128.0.0')!, { bytes: ipBytes('100.64.0.0')!, prefix: 10 })).to.be.false();
        expect(inNetwork(ipBytes('::1')!, { bytes: ipBytes('0.0.0.0')!, prefix: 0 })).to.be.false();
    });
});
