import * as Code from '@hapi/code';
import * as Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { inboxCapturePlugin, plugin } from '../../../adapters/hapi';
import type { EmailPage } from '../../../adapters/hapi/api-types';
import type { SignedLinkTarget } from '../../../lib/blob-store/blob-store';
import { createFsBlobStore } from '../../../lib/blob-store/fs-blob-store';
import { openEmbeddedRecordStore } from '../../../lib/service/embedded-stores';
import { createInboxCapture } from '../../../lib/service/inbox-capture';
import { isInboxCaptureError } from '../../../lib/errors';
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MESSAGE_BUDGET_BYTES } from '../../../lib/defaults';
import { buildMail } from '../../helpers/mail';
import { followDownload } from '../../helpers/downloads';
import { provisionServer } from '../../helpers/provision-server';
import { tempDir } from '../../helpers/temp-dir';
import { TEST_SIGNING_SECRET } from '../../helpers/test-stores';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const newServer = () => Hapi.server({ host: '127.0.0.1', port: 0, debug: false });

async function exists(path: string): Promise<boolean> {
    return Fs.access(path).then(() => true, () => false);
}

describe('Hapi plugin', () => {

    describe('register()', () => {

        it('works with no options on embedded defaults in ./data, migrating on start', async () => {
            const dir = await tempDir('cwd');
            const cwd = process.cwd();
            process.chdir(dir);
            const server = newServer();
            try {
                await server.register(inboxCapturePlugin);
                await server.initialize();
                const api = server.plugins['inbox-capture'];
                const key = await api.capture.createKey('default');
                await api.ingestForApi(buildMail({ messageId: 'embedded@x' }), { recipients: ['embedded@x'] });
                const res = await server.inject({ url: '/v1/emails?inbox=embedded', headers: { authorization: `Bearer ${key}` } });
                expect((res.result as EmailPage).emails.map((e) => e.messageId)).to.equal(['embedded@x']);
                expect(await exists(Path.join(dir, 'data', 'inbox-capture.sqlite'))).to.be.true();
                expect(await exists(Path.join(dir, 'data', 'signing-secret'))).to.be.true();
                // Small blobs commit with the records, in their file: no blobs.sqlite.
                expect(await exists(Path.join(dir, 'data', 'blobs.sqlite'))).to.be.false();
                const raw = await server.inject({ url: '/v1/emails/embedded%40x/raw', headers: { authorization: `Bearer ${key}` } });
                expect((await followDownload(server, raw.headers.location as string)).statusCode).to.equal(200);
            }
            finally {
                await server.stop();
                process.chdir(cwd);
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });

        it('keeps its data in dataDir, and closes the stores it opened when the server stops', async () => {
            const dir = await tempDir('data-dir');
            const server = newServer();
            try {
                await server.register({ plugin, options: { dataDir: Path.join(dir, 'nested', 'data') } });
                await server.initialize();
                const { capture } = server.plugins['inbox-capture'];
                await capture.ingestRawEmail(buildMail(), { recipients: ['kept@x'] });
                expect(await exists(Path.join(dir, 'nested', 'data', 'inbox-capture.sqlite'))).to.be.true();
                await server.stop();
                await expect(capture.listEmails({ inbox: 'kept', limit: 1 })).to.reject();

                // The data outlives the server: a new one on the same dir sees the mail.
                const again = newServer();
                await again.register({ plugin, options: { dataDir: Path.join(dir, 'nested', 'data') } });
                await again.initialize();
                const page = await again.plugins['inbox-capture'].capture.listEmails({ inbox: 'kept', limit: 5 });
                expect(page.records).to.have.length(1);
                await again.stop();
            }
            finally {
                await server.stop();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });

        it('signs embedded download links with the signingSecret option', async () => {
            const dir = await tempDir('secret');
            const server = newServer();
            try {
                await server.register({ plugin, options: { dataDir: dir, signingSecret: TEST_SIGNING_SECRET } });
                await server.initialize();
                const { capture } = server.plugins['inbox-capture'];
                const [view] = await capture.ingestRawEmail(buildMail(), { recipients: ['secret@x'] });
                const link = (await capture.rawDownloadLink(view.messageId)) as SignedLinkTarget;
                const sameSecret = createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: TEST_SIGNING_SECRET });
                expect(sameSecret.verifyDownload(link.key, link.query)).to.not.be.null();
                expect(await exists(Path.join(dir, 'signing-secret'))).to.be.false();
            }
            finally {
                await server.stop();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });

        it('applies maxMessageBytes, downloadTtlSeconds and inboxFromAddress', async () => {
            const dir = await tempDir('options');
            const server = newServer();
            try {
                await server.register({
                    plugin,
                    options: {
                        dataDir: dir,
                        maxMessageBytes: 2000,
                        downloadTtlSeconds: 60,
                        inboxFromAddress: (address: string) => `mapped-${address.split('@')[0].toLowerCase()}`
                    }
                });
                await server.initialize();
                const { ingestForApi, capture } = server.plugins['inbox-capture'];
                const [view] = await ingestForApi(buildMail({ messageId: 'opt@x' }), { recipients: ['Who@x'] });
                expect(view.inbox).to.equal('mapped-who');
                const link = (await capture.rawDownloadLink('opt@x')) as SignedLinkTarget;
                const expires = Number(link.query.expires);
                expect(expires - Math.floor(Date.now() / 1000)).to.be.within(58, 60);
                const error = await expect(ingestForApi(buildMail({ text: 'x'.repeat(3000) }), { recipients: ['a@x'] })).to.reject();
                expect(isInboxCaptureError(error, 'TOO_LARGE')).to.be.true();
            }
            finally {
                await server.stop();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });

        it('gives its service a budget of maxMessageBytesInFlight, one of the default size without it, never shared', async () => {
            const dir = await tempDir('budget');
            const otherDir = await tempDir('budget-shared');
            const server = newServer();
            const other = newServer();
            try {
                await server.register({ plugin, options: { dataDir: dir, maxMessageBytesInFlight: 4096 } });
                await other.register({ plugin, options: { dataDir: otherDir } });
                const { capture, ingestForApi } = server.plugins['inbox-capture'];
                expect(capture.messageBudget.limitBytes).to.equal(4096);
                // No process-wide budget: each service has its own, of the one default size.
                const otherBudget = other.plugins['inbox-capture'].capture.messageBudget;
                expect(otherBudget.limitBytes).to.equal(DEFAULT_MESSAGE_BUDGET_BYTES);
                expect(otherBudget).to.not.shallow.equal(capture.messageBudget);
                expect(other.plugins['inbox-capture'].capture.maxMessageBytes).to.equal(DEFAULT_MAX_MESSAGE_BYTES);
                const held = capture.messageBudget.reserve(4000)!;
                const error = await expect(ingestForApi(buildMail({ text: 'x'.repeat(500) }), { recipients: ['a@x'] })).to.reject();
                expect(isInboxCaptureError(error, 'BUSY')).to.be.true();
                held.release();
            }
            finally {
                await server.stop();
                await other.stop();
                await Fs.rm(dir, { recursive: true, force: true });
                await Fs.rm(otherDir, { recursive: true, force: true });
            }
        });

        it('uses a ready capture as it is, and leaves closing it to its owner', async () => {
            const dir = await tempDir('capture');
            const recordStore = await openEmbeddedRecordStore({ dataDir: dir });
            const blobStore = createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: TEST_SIGNING_SECRET });
            const capture = createInboxCapture({ recordStore, blobStore });
            const server = newServer();
            try {
                await server.register({ plugin, options: { capture } });
                await server.initialize();
                expect(server.plugins['inbox-capture'].capture).to.shallow.equal(capture);
                // Mail ingested by the owner (an SMTP listener, say) is what the routes serve.
                const key = await capture.createKey('shared');
                await capture.ingestRawEmail(buildMail({ messageId: 'shared@x' }), { recipients: ['shared@x'] });
                const res = await server.inject({ url: '/v1/emails/shared%40x', headers: { authorization: `Bearer ${key}` } });
                expect(res.statusCode).to.equal(200);
                await server.stop();
                expect(await capture.getEmail('shared@x')).to.not.be.null();
            }
            finally {
                await server.stop();
                await capture.close();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });

        it('leaves a given record store open, closing only the blob store it opened', async () => {
            const dir = await tempDir('given-store');
            const recordStore = await openEmbeddedRecordStore({ dataDir: Path.join(dir, 'own') });
            const server = newServer();
            try {
                await server.register({ plugin, options: { recordStore, dataDir: Path.join(dir, 'plugin') } });
                await server.initialize();
                await server.plugins['inbox-capture'].ingestForApi(buildMail(), { recipients: ['given@x'] });
                expect(await exists(Path.join(dir, 'plugin', 'blobs.sqlite'))).to.be.true();
                expect(await exists(Path.join(dir, 'plugin', 'inbox-capture.sqlite'))).to.be.false();
                await server.stop();
                expect((await recordStore.listEmails({ inbox: 'given', limit: 5 })).records).to.have.length(1);
            }
            finally {
                await server.stop();
                await recordStore.close();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });

        it('exposes ingestForApi, which answers the email objects the routes serve', async () => {
            const p = await provisionServer();
            try {
                const [view] = await p.server.plugins['inbox-capture'].ingestForApi(buildMail({ messageId: 'exposed@x' }), { recipients: ['exposed@x'] });
                const res = await p.server.inject({ url: '/v1/emails?inbox=exposed', headers: p.auth });
                expect((res.result as EmailPage).emails).to.equal([view]);
                // One name, one meaning: the service's ingestRawEmail answers records; the plugin exposes no function of that name.
                expect(Object.keys(p.server.plugins['inbox-capture']).sort()).to.equal(['capture', 'ingestForApi']);
            }
            finally {
                await p.cleanup();
            }
        });

        it('does not touch the caller\'s options object', async () => {
            const dir = await tempDir('frozen');
            const options = Object.freeze({ dataDir: dir, publicRoutes: Object.freeze({ docs: false }) });
            const server = newServer();
            try {
                await server.register({ plugin, options });
                expect(options).to.equal({ dataDir: dir, publicRoutes: { docs: false } });
            }
            finally {
                await server.stop();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });

        it('refuses to be registered twice on one server', async () => {
            const p = await provisionServer();
            try {
                await expect(p.server.register({ plugin, options: { recordStore: p.stores.recordStore, blobStore: p.stores.blobStore } })).to.reject(/already registered/);
            }
            finally {
                await p.cleanup();
            }
        });

        it('fails registration, closing what it opened, when migrations fail', async () => {
            const dir = await tempDir('broken');
            const recordStore = await openEmbeddedRecordStore({ dataDir: dir });
            recordStore.migrate = () => Promise.reject(new Error('database is read-only'));
            const blobStore = createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: TEST_SIGNING_SECRET });
            const server = newServer();
            try {
                await expect(server.register({ plugin, options: { recordStore, blobStore } })).to.reject(/read-only/);
            }
            finally {
                await recordStore.close();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });
    });

    describe('options', () => {
        const WRONG: Array<[string, Record<string, unknown>, RegExp]> = [
            ['an unknown option', { dataDr: './x' }, /"dataDr" is not allowed/],
            ['maxMessageBytes as a string', { maxMessageBytes: '1000' }, /"maxMessageBytes" must be a number/],
            ['maxMessageBytes of 0', { maxMessageBytes: 0 }, /"maxMessageBytes" must be greater than or equal to 1/],
            ['a fractional maxMessageBytesInFlight', { maxMessageBytesInFlight: 1.5 }, /"maxMessageBytesInFlight" must be an integer/],
            ['a fractional downloadTtlSeconds', { downloadTtlSeconds: 1.5 }, /"downloadTtlSeconds" must be an integer/],
            ['downloadTtlSeconds beyond 7 days', { downloadTtlSeconds: 7 * 24 * 3600 + 1 }, /"downloadTtlSeconds" must be less than or equal to 604800/],
            ['docs as a string', { docs: 'yes' }, /"docs" must be a boolean/],
            ['an unknown public route', { publicRoutes: { helth: false } }, /"publicRoutes.helth" is not allowed/],
            ['a public route as a string', { publicRoutes: { health: 'off' } }, /"publicRoutes.health" must be a boolean/],
            ['the docs page without the document', { publicRoutes: { openapi: false } }, /"publicRoutes.docs" needs "publicRoutes.openapi"/],
            ['publicRoutes as a string', { publicRoutes: 'off' }, /"publicRoutes" must be one of \[boolean, object\]/],
            ['a public prefix without its slash', { publicRoutes: { prefix: 'inbox-capture' } }, /"publicRoutes.prefix" with value "inbox-capture" fails to match/],
            ['a public prefix with a trailing slash', { publicRoutes: { prefix: '/inbox-capture/' } }, /"publicRoutes.prefix" with value "\/inbox-capture\/" fails to match/],
            ['a public prefix that climbs', { publicRoutes: { prefix: '/../health' } }, /"publicRoutes.prefix" with value "\/..\/health" fails to match/],
            ['a public prefix of a path parameter', { publicRoutes: { prefix: '/{x}' } }, /"publicRoutes.prefix" with value "\/{x}" fails to match/],
            ['an empty dataDir', { dataDir: '' }, /"dataDir" is not allowed to be empty/],
            ['a short signingSecret', { signingSecret: 'short' }, /"signingSecret" length must be at least 16/],
            ['a record store without methods', { recordStore: {} }, /"recordStore" lacks migrate\(\)/],
            ['a blob store that is a number', { blobStore: 42 }, /"blobStore" must be an object/],
            ['inboxFromAddress as a string', { inboxFromAddress: 'local' }, /"inboxFromAddress" must be of type function/],
            ['a capture without methods', { capture: { start() {} } }, /"capture" lacks ingestRawEmail\(\), listEmails\(\)/],
            ['a capture with store options', { capture: createInboxCapture({ recordStore: {} as never, blobStore: {} as never }), dataDir: './x' }, /"capture" is a ready service; do not also pass "dataDir"/]
        ];

        for (const [name, options, message] of WRONG) {
            it(`fails registration with a clear error for ${name}`, async () => {
                const server = newServer();
                const error = await expect(server.register({ plugin, options: options as never })).to.reject() as Error;
                expect(error.message).to.startWith('inbox-capture plugin: ');
                expect(error.message).to.match(message);
                expect(server.table()).to.equal([]);
            });
        }

        it('reports every wrong option at once', async () => {
            const error = await expect(newServer().register({ plugin, options: { docs: 1, maxMessageBytes: -1 } as never })).to.reject() as Error;
            expect(error.message).to.include('"docs"');
            expect(error.message).to.include('"maxMessageBytes"');
        });
    });
});
