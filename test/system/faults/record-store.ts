import * as Code from '@hapi/code';
import * as Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';
import knexFactory, { type Knex } from 'knex';
import * as Fs from 'node:fs/promises';
import * as Net from 'node:net';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import * as Sqlite3 from 'sqlite3';
import { plugin } from '../../../adapters/hapi';
import { createSmtpListener, type SmtpListener } from '../../../adapters/smtp';
import type { BlobStore } from '../../../lib/blob-store/blob-store';
import { createFsBlobStore } from '../../../lib/blob-store/fs-blob-store';
import { createInboxCapture, type InboxCapture } from '../../../lib/service/inbox-capture';
import { createKnexRecordStore } from '../../../lib/record-store/knex-record-store';
import type { RecordStore } from '../../../lib/record-store/record-store';
import { postgresKnexConfig } from '../../../lib/record-store/postgres/postgres-knex';
import { openSqliteKnex } from '../../../lib/sqlite/knex';
import { startPostgres, type PostgresServer } from '../../helpers/postgres';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** Deliveries of one message racing each other (the figure). */
const CONCURRENT_DELIVERIES = 50;

/** Knex's own console warnings about lost connections: expected here, so kept out of the test output. */
const QUIET_LOG = { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined };

/** The product's Postgres Knex, without Knex's console warnings. */
function postgresKnex(url: string): Knex {
    return knexFactory({ ...postgresKnexConfig(url), log: QUIET_LOG });
}

/** The one body of every 503: the code, and nothing about the cause. */
const UNAVAILABLE = { error: 'SERVICE_UNAVAILABLE' };

/** What a test gets: the service on real stores, behind a real Hapi server and a real SMTP listener. */
interface Service {
    capture: InboxCapture;
    server: Hapi.Server;
    auth: { authorization: string };
    /** Sends one message over SMTP; resolves with the reply code (250, or the refusal's). */
    send(id: string, options?: { attachments?: boolean }): Promise<number>;
    /** Sends exactly these bytes over SMTP to faults@faults.test; resolves with the reply code. */
    sendRaw(raw: string): Promise<number>;
    /** Subjects in an inbox, newest first (read past the HTTP layer). */
    subjects(inbox: string): Promise<string[]>;
    /** Every blob key in the store, sorted. */
    blobKeys(): Promise<string[]>;
    /** Every blob key the records of these inboxes reference, sorted. */
    referencedKeys(inboxes: string[]): Promise<string[]>;
    stop(): Promise<void>;
}

function rawMessage(id: string, to: string, attachments: boolean): string {
    const head = [`From: sender@faults.test`, `To: ${to}`, `Subject: ${id}`, `Message-ID: <${id}@faults.test>`, 'MIME-Version: 1.0'];
    if (!attachments) {
        return [...head, 'Content-Type: text/plain', '', `Body of ${id}.`, ''].join('\r\n');
    }

    return [
        ...head,
        'Content-Type: multipart/mixed; boundary="b"',
        '',
        '--b',
        'Content-Type: text/plain',
        '',
        `Body of ${id}.`,
        '--b',
        'Content-Type: application/octet-stream; name="a.bin"',
        'Content-Disposition: attachment; filename="a.bin"',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from(`attachment of ${id}`).toString('base64'),
        '--b--',
        ''
    ].join('\r\n');
}

/** Starts the plugin and an SMTP listener on one service built from these stores. */
async function startService(recordStore: RecordStore, blobStore: BlobStore): Promise<Service> {
    const capture = createInboxCapture({ recordStore, blobStore });
    const server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false });
    await server.register({ plugin, options: { capture } });
    await server.initialize();
    const listener: SmtpListener = createSmtpListener({ capture, host: '127.0.0.1', port: 0 });
    const { port } = await listener.listen();
    const key = await capture.createKey('faults');
    const transports: Nodemailer.Transporter[] = [];

    const sendRaw = async (raw: string) => {
        const transport = Nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
        transports.push(transport);
        try {
            await transport.sendMail({ envelope: { from: 'sender@faults.test', to: ['faults@faults.test'] }, raw });
            return 250;
        }
        catch (err) {
            const code = (err as { responseCode?: number }).responseCode;
            if (code === undefined) {
                throw err;
            }

            return code;
        }
        finally {
            transport.close();
        }
    };

    return {
        capture,
        server,
        auth: { authorization: `Bearer ${key}` },
        send: (id, options = {}) => sendRaw(rawMessage(id, 'faults@faults.test', options.attachments ?? false)),
        sendRaw,
        async subjects(inbox) {
            return (await capture.listEmails({ inbox, limit: 100 })).records.map((r) => r.subject);
        },
        async blobKeys() {
            const keys: string[] = [];
            for await (const blob of blobStore.listBlobs()) {
                keys.push(blob.key);
            }

            return keys.sort();
        },
        async referencedKeys(inboxes) {
            const keys: string[] = [];
            for (const inbox of inboxes) {
                for (const record of (await capture.listEmails({ inbox, limit: 100 })).records) {
                    keys.push(record.rawKey, ...record.attachments.map((a) => a.blobKey));
                }
            }

            return keys.sort();
        },
        async stop() {
            transports.forEach((t) => t.close());
            await listener.close();
            await server.stop();
            await capture.close();
        }
    };
}

/** Expects the plugin's 503: exact body, Retry-After, and no word about the cause. */
function expectUnavailable(res: Hapi.ServerInjectResponse, ...secrets: string[]): void {
    expect(res.statusCode, res.payload).to.equal(503);
    expect(res.result).to.equal(UNAVAILABLE);
    expect(res.headers['retry-after']).to.equal('5');
    expect(res.headers['www-authenticate']).to.not.exist();
    for (const secret of secrets) {
        expect(res.payload).to.not.include(secret);
    }
}

/** Another connection to the SQLite file, as another process (the CLI, a backup) would open it. */
async function openOtherConnection(filename: string): Promise<{ exec(sql: string): Promise<void>; close(): Promise<void> }> {
    const db = await new Promise<Sqlite3.Database>((resolve, reject) => {
        const opened: Sqlite3.Database = new Sqlite3.Database(filename, (err) => (err ? reject(err) : resolve(opened)));
    });
    return {
        exec: (sql) => new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve()))),
        close: () => new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())))
    };
}

/** A loopback TCP proxy in front of the database: cut() makes it unreachable, restore() brings it back. */
interface Proxy {
    port: number;
    /** Stops accepting (new connections are refused) and drops every open connection. */
    cut(): Promise<void>;
    /** Accepts again on the same port. */
    restore(): Promise<void>;
    close(): Promise<void>;
}

async function startProxy(target: { host: string; port: number }): Promise<Proxy> {
    const sockets = new Set<Net.Socket>();
    const server = Net.createServer((client) => {
        const upstream = Net.connect(target.port, target.host);
        sockets.add(client);
        sockets.add(upstream);
        const drop = () => {
            client.destroy();
            upstream.destroy();
            sockets.delete(client);
            sockets.delete(upstream);
        };

        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
        client.pipe(upstream);
        upstream.pipe(client);
    });

    const listen = (port: number) => new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
            server.off('error', reject);
            resolve((server.address() as Net.AddressInfo).port);
        });
    });

    const stop = () => new Promise<void>((resolve) => {
        if (!server.listening) {
            resolve();
            return;
        }

        server.close(() => resolve());
        for (const socket of sockets) {
            socket.destroy();
        }
    });

    const port = await listen(0);
    return {
        port,
        cut: stop,
        restore: async () => {
            await listen(port);
        },
        close: stop
    };
}

describe('record store faults', () => {

    describe('SQLite locked by another connection', () => {
        let dir: string;
        let file: string;
        let service: Service;

        before(async () => {
            dir = await tempDir('record-faults');
            file = Path.join(dir, 'records.sqlite');
            // The product's own opener: a save that meets the other writer's lock fails at
            // once (a reader cannot wait its way into a write in WAL mode) and is retried.
            // Only "locked" matters here: a short wait for the lock, not the default's seconds a try.
            const recordStore = createKnexRecordStore({ knex: openSqliteKnex(file, { busyTimeoutMs: 50 }), destroyKnexOnClose: true });
            const blobStore = createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: 'record faults test secret' });
            service = await startService(recordStore, blobStore);
        });

        after(async () => {
            await service.stop();
            await Fs.rm(dir, { recursive: true, force: true });
        });

        it('answers writes with 503 and SMTP 451 while the lock is held, keeps reads working, and recovers when it is released', async () => {
            expect(await service.send('sqlite-before', { attachments: true })).to.equal(250);
            const other = await openOtherConnection(file);
            try {
                // A write transaction of another process that outlasts the busy timeout.
                await other.exec('BEGIN IMMEDIATE');

                expect(await service.send('sqlite-during', { attachments: true })).to.equal(451);

                const deleted = await service.server.inject({ method: 'DELETE', url: '/v1/emails/sqlite-before%40faults.test', headers: service.auth });
                expectUnavailable(deleted, 'SQLITE', 'locked');

                // WAL: readers never wait for the writer, so the API keeps answering reads.
                const list = await service.server.inject({ url: '/v1/emails?inbox=faults', headers: service.auth });
                expect(list.statusCode).to.equal(200);
                expect((list.result as { emails: { subject: string }[] }).emails.map((e) => e.subject)).to.equal(['sqlite-before']);
                const one = await service.server.inject({ url: '/v1/emails/sqlite-before%40faults.test', headers: service.auth });
                expect(one.statusCode).to.equal(200);

                // The refused message left nothing: its blobs went with the failed save.
                expect(await service.blobKeys()).to.equal(await service.referencedKeys(['faults']));
            }
            finally {
                await other.exec('ROLLBACK').catch(() => undefined);
                await other.close();
            }

            // Recovered by itself: same process, same pool.
            expect(await service.send('sqlite-during', { attachments: true })).to.equal(250);
            const deleted = await service.server.inject({ method: 'DELETE', url: '/v1/emails/sqlite-before%40faults.test', headers: service.auth });
            expect(deleted.statusCode).to.equal(200);
            expect(await service.subjects('faults')).to.equal(['sqlite-during']);
            expect(await service.blobKeys()).to.equal(await service.referencedKeys(['faults']));
        });
    });

    describe('Postgres', () => {
        let pg: PostgresServer;
        let proxy: Proxy;
        let service: Service;
        let dir: string;
        let database: string;
        let admin: Knex;

        before(async () => {
            pg = await startPostgres();
            const url = new URL(pg.connectionString);
            database = decodeURIComponent(url.pathname.slice(1));
            proxy = await startProxy({ host: url.hostname, port: Number(url.port) });
            const proxied = new URL(pg.connectionString);
            proxied.port = String(proxy.port);

            dir = await tempDir('record-faults-pg');
            const recordStore = createKnexRecordStore({ knex: postgresKnex(proxied.toString()), destroyKnexOnClose: true });
            const blobStore = createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: 'record faults test secret' });
            service = await startService(recordStore, blobStore);
            // Straight to the server, past the proxy, under a name of its own.
            admin = knexFactory({ client: 'pg', connection: { connectionString: pg.connectionString, application_name: 'faults-admin' }, pool: { min: 0, max: 2 }, log: QUIET_LOG });
        });

        after(async () => {
            await proxy.restore().catch(() => undefined);
            await service.stop();
            await admin.destroy();
            await proxy.close();
            await pg.stop();
            await Fs.rm(dir, { recursive: true, force: true });
        });

        it('answers 503 (never 401 or 500) on auth, list, get, long-poll and delete while the database is unreachable, SMTP 451, and recovers when it returns', async () => {
            expect(await service.send('pg-before')).to.equal(250);
            await proxy.cut();
            try {
                const secrets = ['ECONNREFUSED', 'connect', String(proxy.port), '127.0.0.1'];
                for (const url of ['/v1/emails?inbox=faults', '/v1/emails/pg-before%40faults.test', '/v1/emails?inbox=faults&wait=true&timeout=1']) {
                    expectUnavailable(await service.server.inject({ url, headers: service.auth }), ...secrets);
                }

                expectUnavailable(await service.server.inject({ method: 'DELETE', url: '/v1/emails/pg-before%40faults.test', headers: service.auth }), ...secrets);

                // A key that may or may not exist cannot be checked: 503, not a 401 that would
                // tell a client with a valid key to give up.
                expectUnavailable(await service.server.inject({ url: '/v1/emails?inbox=faults', headers: { authorization: 'Bearer ic_not_a_key_we_know' } }));
                // A malformed header never reaches the store.
                expect((await service.server.inject({ url: '/v1/emails?inbox=faults', headers: { authorization: 'Basic x' } })).statusCode).to.equal(401);

                expect(await service.send('pg-during', { attachments: true })).to.equal(451);
            }
            finally {
                await proxy.restore();
            }

            // Recovered by itself: the pool opens new connections, nothing restarted.
            const list = await service.server.inject({ url: '/v1/emails?inbox=faults', headers: service.auth });
            expect(list.statusCode).to.equal(200);
            expect(await service.send('pg-during', { attachments: true })).to.equal(250);
            expect(await service.subjects('faults')).to.equal(['pg-during', 'pg-before']);

            // Whether the refused delivery committed could not be checked while the database
            // was away, so its blobs were left to the orphan sweep; every record has its blobs.
            const referenced = await service.referencedKeys(['faults']);
            const all = await service.blobKeys();
            expect(all).to.include(referenced);
            const orphans = all.length - referenced.length;
            expect(orphans).to.equal(2);
            expect(await service.capture.sweepOrphanBlobs({ graceMs: 0 })).to.equal(orphans);
            expect(await service.blobKeys()).to.equal(referenced);
        });

        it('answers 503 and SMTP 451 when the server terminates the connections serving them (57P01), and recovers', async () => {
            expect(await service.send('pg-terminated-before')).to.equal(250);
            const trx = await admin.transaction();
            let pending: [Promise<Hapi.ServerInjectResponse>, Promise<number>];
            try {
                // Every reader and writer of emails now waits on this lock...
                await trx.raw('LOCK TABLE emails IN ACCESS EXCLUSIVE MODE');
                pending = [
                    service.server.inject({ url: '/v1/emails?inbox=faults', headers: service.auth }),
                    service.send('pg-terminated', { attachments: true })
                ];

                // ... and the backends serving the request and the delivery are terminated, as
                // a restart, a failover or an administrator would.
                let waiting: { pid: number }[] = [];
                for (let tries = 0; waiting.length < 2; tries++) {
                    expect(tries, 'the request and the delivery never waited on the lock').to.be.below(500);
                    await new Promise((resolve) => setTimeout(resolve, 20));
                    waiting = (await admin.raw(
                        `SELECT pid FROM pg_stat_activity WHERE datname = ? AND application_name = 'inbox-capture' AND wait_event_type = 'Lock'`,
                        [database]
                    )).rows as { pid: number }[];
                }

                for (const { pid } of waiting) {
                    await admin.raw('SELECT pg_terminate_backend(?)', [pid]);
                }

                const [list, delivery] = await Promise.all(pending);
                expectUnavailable(list, '57P01', 'terminat');
                expect(delivery).to.equal(451);
            }
            finally {
                await trx.rollback().catch(() => undefined);
            }

            const list = await service.server.inject({ url: '/v1/emails?inbox=faults', headers: service.auth });
            expect(list.statusCode).to.equal(200);
            expect(await service.send('pg-terminated', { attachments: true })).to.equal(250);
            expect((await service.subjects('faults')).slice(0, 2)).to.equal(['pg-terminated', 'pg-terminated-before']);
            // The failed save's blobs are gone, or, when its cleanup query met the other
            // just-terminated pooled connection and could not check, left as orphans that the
            // sweep removes. Either way every record keeps its blobs.
            const referenced = await service.referencedKeys(['faults']);
            const all = await service.blobKeys();
            expect(all).to.include(referenced);
            expect(all.length - referenced.length).to.be.between(-1, 3);
            expect(await service.capture.sweepOrphanBlobs({ graceMs: 0 })).to.equal(all.length - referenced.length);
            expect(await service.blobKeys()).to.equal(referenced);
        });
    });

    describe(`the same message delivered ${CONCURRENT_DELIVERIES} times at once`, () => {
        const backends: Array<{ name: string; open(dir: string): Promise<{ recordStore: RecordStore; release(): Promise<void> }> }> = [
            {
                name: 'SQLite',
                open: async (dir) => ({
                    recordStore: createKnexRecordStore({ knex: openSqliteKnex(Path.join(dir, 'records.sqlite')), destroyKnexOnClose: true }),
                    release: async () => undefined
                })
            },
            {
                name: 'Postgres',
                async open() {
                    const pg = await startPostgres();
                    return {
                        recordStore: createKnexRecordStore({ knex: postgresKnex(pg.connectionString), destroyKnexOnClose: true }),
                        release: () => pg.stop()
                    };
                }
            }
        ];

        for (const backend of backends) {
            it(`stores exactly one record and the blobs of exactly one copy on ${backend.name}, every delivery answered 250`, async () => {
                const dir = await tempDir('record-race');
                const { recordStore, release } = await backend.open(dir);
                const service = await startService(recordStore, createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: 'record faults test secret' }));
                try {
                    const raw = rawMessage('raced', 'faults@faults.test', true);
                    const codes = await Promise.all(Array.from({ length: CONCURRENT_DELIVERIES }, () => service.sendRaw(raw)));
                    expect(codes).to.equal(Array.from({ length: CONCURRENT_DELIVERIES }, () => 250));

                    const records = (await service.capture.listEmails({ inbox: 'faults', limit: 100 })).records;
                    expect(records.map((r) => r.messageId)).to.equal(['raced@faults.test']);
                    // Each replaced copy's blobs went with it: only the survivor's raw message and attachment remain.
                    expect(await service.blobKeys()).to.equal([records[0].rawKey, records[0].attachments[0].blobKey].sort());
                }
                finally {
                    await service.stop();
                    await release();
                    await Fs.rm(dir, { recursive: true, force: true });
                }
            });
        }
    });
});
