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
