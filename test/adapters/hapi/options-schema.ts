import * as Code from '@hapi/code';
import * as Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import { plugin } from '../../../adapters/hapi';
import { validateOptions } from '../../../adapters/hapi/options-schema';
import { createInboxCapture } from '../../../lib/service/inbox-capture';
import { BASE_TIME } from '../../helpers/email-draft';
import { buildMail } from '../../helpers/mail';
import { tempDir } from '../../helpers/temp-dir';
import { waitUntil } from '../../helpers/wait-until';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const invalid = (options: unknown) => {
    try {
        validateOptions(options);
    }
    catch (err) {
        return (err as Error).message;
    }

    throw new Error('the options were accepted');
};

describe('options-schema', () => {

    describe('validateOptions() of mcp and mailDomain', () => {

        it('turns /mcp on with new_inbox at inbox-capture.test by default', () => {
            expect(validateOptions({})).to.include({ mcp: true, mailDomain: 'inbox-capture.test' });
            expect(validateOptions({ mcp: false, mailDomain: 'mail.example.test' })).to.include({ mcp: false, mailDomain: 'mail.example.test' });
        });

        it('refuses a mail domain that is not a domain name, and a non-boolean mcp', () => {
            expect(invalid({ mailDomain: 'x@y.test' })).to.contain('"mailDomain"');
            expect(invalid({ mailDomain: '' })).to.contain('"mailDomain"');
            expect(invalid({ mcp: 'yes' })).to.contain('"mcp"');
        });
    });

    describe('validateOptions() of mcpOrigins', () => {

        it('lists no origin by default, and keeps each given one as its origin, lowercased', () => {
            expect(validateOptions({}).mcpOrigins).to.equal([]);
            expect(validateOptions({ mcpOrigins: ['https://Agent.Example', 'http://127.0.0.1:5173'] }).mcpOrigins).to.equal(['https://agent.example', 'http://127.0.0.1:5173']);
        });

        it('refuses what is not an origin', () => {
            for (const bad of ['agent.example', 'https://agent.example/path', 'https://agent.example/', 'ftp://agent.example', 'https://user@agent.example', '*']) {
                expect(invalid({ mcpOrigins: [bad] }), bad).to.contain('"mcpOrigins[0]"');
            }
        });
    });

    describe('validateOptions() of retention', () => {

        it('leaves retention off by default, and its interval to the service (which owns the default)', () => {
            expect(validateOptions({}).retention).to.be.undefined();
            expect(validateOptions({ retention: { maxAgeMs: 3_600_000 } }).retention).to.equal({ maxAgeMs: 3_600_000 });
            expect(validateOptions({ retention: { maxPerInbox: 1, intervalMs: 1000 } }).retention).to.equal({ maxPerInbox: 1, intervalMs: 1000 });
        });

        const WRONG: Array<[string, unknown, RegExp]> = [
            ['no rule', { intervalMs: 5000 }, /"retention" must contain at least one of \[maxAgeMs, maxPerInbox\]/],
            ['a maxAgeMs under 1 s', { maxAgeMs: 999 }, /"retention.maxAgeMs" must be greater than or equal to 1000/],
            ['a maxAgeMs as a duration string', { maxAgeMs: '7d' }, /"retention.maxAgeMs" must be a number/],
            ['a maxPerInbox of 0', { maxPerInbox: 0 }, /"retention.maxPerInbox" must be greater than or equal to 1/],
            ['a fractional maxPerInbox', { maxPerInbox: 2.5 }, /"retention.maxPerInbox" must be an integer/],
            ['an interval under 1 s', { maxPerInbox: 5, intervalMs: 10 }, /"retention.intervalMs" must be greater than or equal to 1000/],
            ['an unknown key', { maxAge: 1000 }, /"retention.maxAge" is not allowed/]
        ];

        for (const [name, retention, message] of WRONG) {
            it(`refuses ${name}`, () => {
                expect(invalid({ retention })).to.match(message);
            });
        }

        it('refuses retention next to a ready capture: it is configured where the service is created', () => {
            const capture = createInboxCapture({ recordStore: {} as never, blobStore: {} as never });
            expect(invalid({ capture, retention: { maxPerInbox: 5 } })).to.include('"capture" is a ready service; do not also pass "retention"');
        });
    });

    describe('validateOptions() of authCheck', () => {

        it('leaves the DNS servers to the system by default, and keeps given ones', () => {
            expect(validateOptions({}).authCheck).to.be.undefined();
            expect(validateOptions({ authCheck: { dnsServers: ['127.0.0.1:5353', '[::1]'] } }).authCheck).to.equal({ dnsServers: ['127.0.0.1:5353', '[::1]'] });
        });

        it('refuses what Node\'s resolver would not take', () => {
            expect(() => validateOptions({ authCheck: { dnsServers: ['dns.example.test'] } })).to.throw(/"authCheck.dnsServers\[0\]" with value "dns.example.test" fails to match/);
            expect(() => validateOptions({ authCheck: { dnsServers: ['999.0.0.1:53'] } })).to.throw(/999.0.0.1:53 is not a DNS server address/);
            expect(() => validateOptions({ authCheck: { dnsServers: [] } })).to.throw(/must contain at least 1 items/);
        });
    });

    describe('validateOptions() of relay', () => {

        it('takes a relay with its allow-list, the URL and list checked as they will be used', () => {
            const relay = { url: 'smtps://user:pass@relay.example.test', allow: ['*@example.org'], autoMatch: 'tag:release', delivery: { firstRetryMs: 100 } };
            expect(validateOptions({ relay }).relay).to.equal(relay);
        });

        const WRONG: Array<[string, unknown, RegExp]> = [
            ['no allow-list', { url: 'smtp://relay.test' }, /"relay.allow" is required/],
            ['an empty allow-list', { url: 'smtp://relay.test', allow: [] }, /"relay.allow" must contain at least 1 items/],
            ['an allow-list of everything', { url: 'smtp://relay.test', allow: ['*'] }, /"relay.allow": relay allow-list/],
            ['an http URL', { url: 'http://relay.test', allow: ['*@example.org'] }, /"relay.url": the relay URL must be smtp/],
            ['a URL with a path', { url: 'smtp://relay.test/x', allow: ['*@example.org'] }, /"relay.url": the relay URL must be smtp/],
            ['an unknown key', { url: 'smtp://relay.test', allow: ['*@example.org'], to: 'x' }, /"relay.to" is not allowed/]
        ];

        for (const [name, relay, message] of WRONG) {
            it(`refuses ${name}`, () => {
                expect(invalid({ relay })).to.match(message);
            });
        }

        it('fails registration for an auto-relay query that is not of the search language, naming the setting; a good one registers', async () => {
            const server = Hapi.server();
            const dataDir = await tempDir('relay-options');
            try {
                await expect(server.register({ plugin, options: { dataDir, ui: false, relay: { url: 'smtp://127.0.0.1:1', allow: ['*@example.org'], autoMatch: 'subject:"unclosed' } } })).to.reject(/INBOX_CAPTURE_RELAY_AUTO_MATCH/);
                const good = Hapi.server();
                const goodDir = await tempDir('relay-options');
                await good.register({ plugin, options: { dataDir: goodDir, ui: false, relay: { url: 'smtp://127.0.0.1:1', allow: ['*@example.org'], autoMatch: 'tag:release' } } });
                await good.initialize();
                await good.stop();
                await Fs.rm(goodDir, { recursive: true, force: true });
            }
            finally {
                await server.stop();
                await Fs.rm(dataDir, { recursive: true, force: true });
            }
        });
    });

    describe('the retention option of a registered plugin', () => {

        it('sweeps the plugin\'s stores every intervalMs while the server runs', async () => {
            const dir = await tempDir('plugin-retention');
            const server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false });
            try {
                await server.register({ plugin, options: { dataDir: dir, retention: { maxAgeMs: 60_000, intervalMs: 1000 } } });
                await server.initialize();
                const { capture } = server.plugins['inbox-capture'];
                const [old] = await capture.ingestRawEmail(buildMail({ to: 'old@test.example' }), { receivedAt: BASE_TIME });
                const [young] = await capture.ingestRawEmail(buildMail({ to: 'old@test.example' }));
                await waitUntil('the old email is swept', async () => await capture.getEmail(old!.messageId) === null);
                expect(await capture.getEmail(young!.messageId)).to.not.be.null();
            }
            finally {
                await server.stop();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });
    });
});
