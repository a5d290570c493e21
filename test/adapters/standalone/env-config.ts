import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { ConfigError, describeStores, openStoresFromConfig, readEnvConfig } from '../../../adapters/standalone/env-config';
import { createSqliteBlobStore } from '../../../lib/blob-store/sqlite-blob-store';
import { createInboxCapture } from '../../../lib/service/inbox-capture';
import { blobKeys } from '../../helpers/blob-contents';
import { startPostgres } from '../../helpers/postgres';
import { startS3 } from '../../helpers/s3';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** Blobs in one of the data dir's SQLite files: inbox-capture.sqlite (small blobs committed with SQLite records) or blobs.sqlite (the others). */
async function smallBlobCount(dataDir: string, file = 'blobs.sqlite'): Promise<number> {
    const store = createSqliteBlobStore({ filename: Path.join(dataDir, file) });
    try {
        return (await blobKeys(store)).length;
    }
    finally {
        await store.close();
    }
}

const MAIL = 'From: a@example.test\r\nTo: cfg@example.test\r\nSubject: configured\r\nMessage-ID: <cfg-1@example.test>\r\n\r\nbody\r\n';

describe('env-config', () => {

    describe('readEnvConfig()', () => {

        it('reads INBOX_CAPTURE_LINK_CHECK_ALLOW into the linkCheck option; blank leaves the check off; a bad entry stops it, named', () => {
            expect(readEnvConfig({ INBOX_CAPTURE_LINK_CHECK_ALLOW: ' 127.0.0.1/32, *.shop.test ,public' }, '/srv/app').linkCheck).to.equal({ allow: ['127.0.0.1/32', '*.shop.test', 'public'] });
            expect(readEnvConfig({ INBOX_CAPTURE_LINK_CHECK_ALLOW: ' , ' }, '/srv/app').linkCheck).to.be.undefined();
            expect(() => readEnvConfig({ INBOX_CAPTURE_LINK_CHECK_ALLOW: 'shop.test,10.0.0.0/40' })).to.throw(ConfigError, 'INBOX_CAPTURE_LINK_CHECK_ALLOW: "10.0.0.0/40": the prefix length must be 0 to 32');
        });

        it('reads INBOX_CAPTURE_DNS_SERVERS into the authCheck option; blank leaves the system\'s; what is not a server stops it, named', () => {
            expect(readEnvConfig({ INBOX_CAPTURE_DNS_SERVERS: ' 127.0.0.1:5353, [::1]:53 ,10.0.0.2' }, '/srv/app').authCheck).to.equal({ dnsServers: ['127.0.0.1:5353', '[::1]:53', '10.0.0.2'] });
            expect(readEnvConfig({ INBOX_CAPTURE_DNS_SERVERS: ' , ' }, '/srv/app').authCheck).to.be.undefined();
            expect(() => readEnvConfig({ INBOX_CAPTURE_DNS_SERVERS: 'dns.example.test:53' })).to.throw(ConfigError, /^INBOX_CAPTURE_DNS_SERVERS must be comma-separated DNS servers/);
            expect(() => readEnvConfig({ INBOX_CAPTURE_DNS_SERVERS: '127.0.0.1:5353,300.1.1.1' })).to.throw(ConfigError, /300\.1\.1\.1 is not a DNS server address/);
        });

        it('applies the documented defaults to an empty environment', () => {
            // docs/api.md, "Environment variables"; docs/design.md, "Configuration".
            expect(readEnvConfig({}, '/srv/app')).to.equal({
                dataDir: '/srv/app/data',
                host: '127.0.0.1',
                port: 3000,
                smtpPort: 2525
            });
        });

        it('treats empty variables as unset', () => {
            expect(readEnvConfig({ PORT: '', HOST: ' ', DATABASE_URL: '', S3_BUCKET: '' }, '/srv/app').port).to.equal(3000);
        });

        it('reads every variable', () => {
            const config = readEnvConfig({
                INBOX_CAPTURE_DATA_DIR: 'mail',
                DATABASE_URL: 'postgresql://u:p@db.internal/capture',
                S3_BUCKET: 'captured',
                S3_ENDPOINT: 'http://127.0.0.1:9000',
                S3_REGION: 'eu-west-1',
                S3_FORCE_PATH_STYLE: 'true',
                HOST: '0.0.0.0',
                PORT: '8080',
                SMTP_PORT: '0',
                INBOX_CAPTURE_SIGNING_SECRET: 'sixteen chars at least'
            }, '/srv/app');
            expect(config).to.equal({
                dataDir: '/srv/app/mail',
                databaseUrl: 'postgresql://u:p@db.internal/capture',
                s3: { bucket: 'captured', endpoint: 'http://127.0.0.1:9000', region: 'eu-west-1', forcePathStyle: true },
                host: '0.0.0.0',
                port: 8080,
                smtpPort: 0,
                signingSecret: 'sixteen chars at least'
            });
        });

        it('takes the region from AWS_REGION when S3_REGION is unset', () => {
            expect(readEnvConfig({ S3_BUCKET: 'b', AWS_REGION: 'ap-south-1' }).s3!.region).to.equal('ap-south-1');
            expect(readEnvConfig({ S3_BUCKET: 'b' }).s3).to.equal({ bucket: 'b', endpoint: undefined, region: 'us-east-1', forcePathStyle: false });
        });

        it('refuses a bad port with the variable\'s name, its flag\'s and the value', () => {
            for (const [name, flag, value] of [['PORT', 'port', 'abc'], ['PORT', 'port', '70000'], ['PORT', 'port', '-1'], ['SMTP_PORT', 'smtp-port', '25.5'], ['SMTP_PORT', 'smtp-port', '0x19']]) {
                expect(() => readEnvConfig({ [name]: value })).to.throw(ConfigError, `${name} / --${flag} must be a port number 0..65535, got "${value}"`);
            }
        });

        it('refuses a DATABASE_URL that is not Postgres without echoing it', () => {
            const err = expect(() => readEnvConfig({ DATABASE_URL: 'mysql://root:hunter2@db/x' })).to.throw(ConfigError);
            expect(err.message).to.contain('DATABASE_URL');
            expect(err.message).to.not.contain('hunter2');
        });

        it('refuses a bad S3_ENDPOINT, S3_FORCE_PATH_STYLE or a short signing secret', () => {
            expect(() => readEnvConfig({ S3_BUCKET: 'b', S3_ENDPOINT: 'localhost:9000' })).to.throw(ConfigError, /S3_ENDPOINT/);
            expect(() => readEnvConfig({ S3_BUCKET: 'b', S3_FORCE_PATH_STYLE: 'yes please' })).to.throw(ConfigError, /S3_FORCE_PATH_STYLE/);
            expect(() => readEnvConfig({ INBOX_CAPTURE_SIGNING_SECRET: 'short' })).to.throw(ConfigError, /at least 16/);
        });

        it('reads INBOX_CAPTURE_MAX_MESSAGE_BYTES_IN_FLIGHT, unset by default, and refuses anything but a positive whole number', () => {
            expect(readEnvConfig({}).maxMessageBytesInFlight).to.be.undefined();
            expect(readEnvConfig({ INBOX_CAPTURE_MAX_MESSAGE_BYTES_IN_FLIGHT: '268435456' }).maxMessageBytesInFlight).to.equal(268435456);
            for (const bad of ['0', '-1', '1.5', '128MiB', '1e9', '9999999999999999']) {
                expect(() => readEnvConfig({ INBOX_CAPTURE_MAX_MESSAGE_BYTES_IN_FLIGHT: bad })).to.throw(ConfigError, /INBOX_CAPTURE_MAX_MESSAGE_BYTES_IN_FLIGHT/);
            }
        });

        it('reads INBOX_CAPTURE_MAIL_DOMAIN, unset by default, and refuses anything but a domain name', () => {
            expect(readEnvConfig({}).mailDomain).to.be.undefined();
            expect(readEnvConfig({ INBOX_CAPTURE_MAIL_DOMAIN: 'mail.example.test' }).mailDomain).to.equal('mail.example.test');
            for (const bad of ['a b', 'x@y.test', 'http://x.test', '-bad-.test']) {
                expect(() => readEnvConfig({ INBOX_CAPTURE_MAIL_DOMAIN: bad })).to.throw(ConfigError, /INBOX_CAPTURE_MAIL_DOMAIN/);
            }
        });

        it('reads INBOX_CAPTURE_MCP_ORIGINS as comma-separated origins, unset by default, and refuses anything else', () => {
            expect(readEnvConfig({}).mcpOrigins).to.be.undefined();
            expect(readEnvConfig({ INBOX_CAPTURE_MCP_ORIGINS: 'https://Agent.Example, http://127.0.0.1:5173' }).mcpOrigins).to.equal(['https://agent.example', 'http://127.0.0.1:5173']);
            for (const bad of ['agent.example', 'https://agent.example/mcp', '*']) {
                expect(() => readEnvConfig({ INBOX_CAPTURE_MCP_ORIGINS: bad })).to.throw(ConfigError, /INBOX_CAPTURE_MCP_ORIGINS/);
            }
        });

        it('reads INBOX_CAPTURE_METRICS as off, on or key, unset by default, and refuses anything else', () => {
            expect(readEnvConfig({}).metrics).to.be.undefined();
            for (const value of ['off', 'on', 'key'] as const) {
                expect(readEnvConfig({ INBOX_CAPTURE_METRICS: value }).metrics).to.equal(value);
            }

            for (const bad of ['true', 'ON', 'public']) {
                expect(() => readEnvConfig({ INBOX_CAPTURE_METRICS: bad })).to.throw(ConfigError, /INBOX_CAPTURE_METRICS/);
            }
        });

        it('reads INBOX_CAPTURE_MAX_HTTP_CONNECTIONS, unset by default, and refuses anything but a positive whole number', () => {
            expect(readEnvConfig({}).maxHttpConnections).to.be.undefined();
            expect(readEnvConfig({ INBOX_CAPTURE_MAX_HTTP_CONNECTIONS: '2000' }).maxHttpConnections).to.equal(2000);
            for (const bad of ['0', '-1', '1.5', '1e4', 'many', '1000000000']) {
                expect(() => readEnvConfig({ INBOX_CAPTURE_MAX_HTTP_CONNECTIONS: bad })).to.throw(ConfigError, /INBOX_CAPTURE_MAX_HTTP_CONNECTIONS/);
            }
        });
    });

    describe('describeStores()', () => {

        it('says where data goes without secrets', () => {
            const text = describeStores(readEnvConfig({ DATABASE_URL: 'postgres://u:hunter2@db/x', S3_BUCKET: 'mail' }, '/srv'));
            expect(text).to.equal('records in Postgres (DATABASE_URL), files in S3 bucket mail');
            expect(describeStores(readEnvConfig({}, '/srv'))).to.equal('records in /srv/data/inbox-capture.sqlite, small files in /srv/data/inbox-capture.sqlite with the records, large ones in /srv/data/blobs');
            expect(describeStores(readEnvConfig({ DATABASE_URL: 'postgres://db/x' }, '/srv'))).to.equal('records in Postgres (DATABASE_URL), small files in /srv/data/blobs.sqlite, large ones in /srv/data/blobs');
        });
    });

    describe('openStoresFromConfig()', () => {

        it('opens SQLite and files in the data dir by default', async () => {
            const dir = await tempDir('env');
            try {
                const config = readEnvConfig({ INBOX_CAPTURE_DATA_DIR: 'nested/data' }, dir);
                const capture = createInboxCapture(await openStoresFromConfig(config));
                try {
                    await capture.start();
                    const [copy] = await capture.ingestRawEmail(MAIL);
                    expect(copy.inbox).to.equal('cfg');
                    // A signed target, which the plugin serves under /v1/blobs.
                    expect(Object.keys(await capture.rawDownloadLink(copy.messageId) ?? {})).to.equal(['key', 'query']);
                }
                finally {
                    await capture.close();
                }

                await Fs.access(Path.join(dir, 'nested', 'data', 'inbox-capture.sqlite'));
                await Fs.access(Path.join(dir, 'nested', 'data', 'signing-secret'));
                // The small blobs were committed with the records, in their file: no blobs.sqlite.
                expect(await smallBlobCount(Path.join(dir, 'nested', 'data'), 'inbox-capture.sqlite')).to.be.above(0);
                await expect(Fs.access(Path.join(dir, 'nested', 'data', 'blobs.sqlite'))).to.reject();
            }
            finally {
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });

        it('uses INBOX_CAPTURE_SIGNING_SECRET instead of generating one', async () => {
            const dir = await tempDir('env');
            try {
                const config = readEnvConfig({ INBOX_CAPTURE_SIGNING_SECRET: 'a configured secret, long enough' }, dir);
                const stores = await openStoresFromConfig(config);
                await stores.recordStore.close();
                await stores.blobStore.close?.();
                await expect(Fs.access(Path.join(dir, 'data', 'signing-secret'))).to.reject();
            }
            finally {
                await Fs.rm(dir, { recursive: true, force: true });
            }
        });

        it('keeps records in Postgres with DATABASE_URL, files still in the data dir', async () => {
            const postgres = await startPostgres();
            const dir = await tempDir('env');
            try {
                const url = await postgres.createDatabase();
                const config = readEnvConfig({ DATABASE_URL: url }, dir);
                const first = createInboxCapture(await openStoresFromConfig(config));
                try {
                    await first.start();
                    await first.ingestRawEmail(MAIL);
                    await first.createKey('pg');
                }
                finally {
                    await first.close();
                }

                // A second process with the same variables sees the same records and keys.
                const second = createInboxCapture(await openStoresFromConfig(config));
                try {
                    await second.start();
                    expect((await second.listEmails({ inbox: 'cfg', limit: 10 })).records.map((r) => r.subject)).to.equal(['configured']);
                    expect((await second.listKeys()).map((k) => k.name)).to.equal(['pg']);
                }
                finally {
                    await second.close();
                }

                await expect(Fs.access(Path.join(dir, 'data', 'inbox-capture.sqlite'))).to.reject();
                expect(await smallBlobCount(Path.join(dir, 'data'))).to.be.above(0);
            }
            finally {
                await Fs.rm(dir, { recursive: true, force: true });
                await postgres.stop();
            }
        });

        it('stores files in S3 with S3_BUCKET, records still in SQLite', async () => {
            const s3 = await startS3();
            const dir = await tempDir('env');
            // The SDK's own credential chain: the environment, as a deployment would set it.
            const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
            process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
            process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
            try {
                const config = readEnvConfig({ S3_BUCKET: s3.bucket, S3_ENDPOINT: s3.endpoint, S3_FORCE_PATH_STYLE: 'true' }, dir);
                const capture = createInboxCapture(await openStoresFromConfig(config));
                try {
                    await capture.start();
                    const [copy] = await capture.ingestRawEmail(MAIL);
                    const found = await capture.rawDownloadLink(copy.messageId);
                    const link = found && 'url' in found ? found.url : '';
                    expect(link).to.startWith(`${s3.endpoint}/${s3.bucket}/`);
                    const res = await fetch(link);
                    expect(await res.text()).to.equal(MAIL);
                }
                finally {
                    await capture.close();
                }

                await Fs.access(Path.join(dir, 'data', 'inbox-capture.sqlite'));
                await expect(Fs.access(Path.join(dir, 'data', 'blobs'))).to.reject();
            }
            finally {
                process.env.AWS_ACCESS_KEY_ID = saved.id;
                process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
                if (saved.id === undefined) {
                    delete process.env.AWS_ACCESS_KEY_ID;
                }

                if (saved.secret === undefined) {
                    delete process.env.AWS_SECRET_ACCESS_KEY;
                }

                await Fs.rm(dir, { recursive: true, force: true });
                await s3.stop();
            }
        });
    });
});
