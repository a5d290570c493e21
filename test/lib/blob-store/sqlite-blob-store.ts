import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { randomBytes } from 'node:crypto';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Sqlite3 from 'sqlite3';
import { createFsBlobStore } from '../../../lib/blob-store/fs-blob-store';
import { createSqliteBlobStore, type SqliteBlobStoreOptions } from '../../../lib/blob-store/sqlite-blob-store';
import { blobStoreContract } from '../../contracts/blob-store-contract';
import { readBlob } from '../../helpers/blob-contents';
import { chunked } from '../../helpers/streams';
import { run } from '../../helpers/child-process';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const SECRET = 'a test secret of at least sixteen bytes';

/** Puts the child makes at once: enough that a store committing each alone is plain to see. */
const CONCURRENT_PUTS = 20;


// Links are signed by an fs store that never touches its root: it only signs.
const signer = () => createFsBlobStore({ root: '/nonexistent-root-never-touched', signingSecret: SECRET });

/** A store on `<dir>/blobs.sqlite` that records each commit's item count in `commits`. */
function openStore(dir: string, extra: Partial<SqliteBlobStoreOptions> = {}) {
    const commits: number[] = [];
    const store = createSqliteBlobStore({
        filename: Path.join(dir, 'blobs.sqlite'),
        links: signer(),
        onCommit: (items) => commits.push(items),
        ...extra
    });
    return { store, commits };
}

/** Runs one statement on a connection of the test's own, as another process would. */
function openRaw(filename: string): Promise<Sqlite3.Database> {
    return new Promise((resolve, reject) => {
        const db = new Sqlite3.Database(filename, (err) => (err ? reject(err) : resolve(db)));
    });
}

function exec(db: Sqlite3.Database, sql: string): Promise<void> {
    return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

function all<T>(db: Sqlite3.Database, sql: string): Promise<T[]> {
    return new Promise((resolve, reject) => db.all<T>(sql, (err, rows) => (err ? reject(err) : resolve(rows))));
}

function closeRaw(db: Sqlite3.Database): Promise<void> {
    return new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
}

blobStoreContract({ describe, it, before, after }, {
    name: 'sqlite',
    async provision() {
        const dir = await tempDir('sqlite-blobs');
        return {
            store: createSqliteBlobStore({ filename: Path.join(dir, 'blobs.sqlite'), links: signer() }),
            cleanup: () => Fs.rm(dir, { recursive: true, force: true })
        };
    }
});

/**
 * A child that loads the TypeScript store with a bare transpile, makes CONCURRENT_PUTS
 * puts at once, prints `done <key>` the moment each resolves, and kills itself with
 * SIGKILL right after the last: no close(), no exit handlers, as in a crash.
 */
const PUT_CHILD = `
const Fs = require('node:fs');
const Ts = require('typescript');
require.extensions['.ts'] = (module, file) => module._compile(Ts.transpileModule(Fs.readFileSync(file, 'utf8'), {
    compilerOptions: { module: Ts.ModuleKind.CommonJS, target: Ts.ScriptTarget.ES2022, esModuleInterop: true }
}).outputText, file);
const { createSqliteBlobStore } = require(process.argv[1]);
const store = createSqliteBlobStore({ filename: process.argv[2] });
const keys = JSON.parse(process.argv[3]);
(async () => {
    await Promise.all(keys.map(async (key) => {
        await store.put(key, Buffer.alloc(4096, key), 'text/plain');
        Fs.writeSync(1, 'done ' + key + '\\n');
    }));
    process.kill(process.pid, 'SIGKILL');
})().catch((err) => {
    console.error(err);
    process.exit(1);
});
`;

describe('SqliteBlobStore', () => {
    let dir: string;

    before(async () => {
        dir = await tempDir('sqlite-blobs');
    });

    after(async () => {
        await Fs.rm(dir, { recursive: true, force: true });
    });

    describe('durability', () => {

        it('keeps every blob across close and reopen, in its own WAL database file', async () => {
            const own = await Fs.mkdtemp(Path.join(dir, 'reopen-'));
            const first = openStore(own).store;
            await first.put('keep/raw.eml', Buffer.from('kept'), 'message/rfc822');
            await first.put('keep/att/0', chunked(Buffer.from('streamed'), 3), 'text/plain');
            await first.put('gone/raw.eml', Buffer.from('removed'), 'message/rfc822');
            await first.delete(['gone/raw.eml']);
            await first.close();

            const again = openStore(own).store;
            try {
                expect((await readBlob(again, 'keep/raw.eml'))!.toString()).to.equal('kept');
                expect((await readBlob(again, 'keep/att/0'))!.toString()).to.equal('streamed');
                expect(await again.get('gone/raw.eml')).to.be.null();
                expect(await again.stat('keep/att/0')).to.include({ size: 8 });
            }
            finally {
                await again.close();
            }

            const raw = await openRaw(Path.join(own, 'blobs.sqlite'));
            try {
                expect(await all(raw, 'PRAGMA journal_mode')).to.equal([{ journal_mode: 'wal' }]);
                expect(await all(raw, 'SELECT key, content_type, size FROM blobs ORDER BY key')).to.equal([
                    { key: 'keep/att/0', content_type: 'text/plain', size: 8 },
                    { key: 'keep/raw.eml', content_type: 'message/rfc822', size: 4 }
                ]);
            }
            finally {
                await closeRaw(raw);
            }
        });

        it('has every acknowledged blob after the writing process is killed', async () => {
            const filename = Path.join(await Fs.mkdtemp(Path.join(dir, 'killed-')), 'blobs.sqlite');
            const keys = Array.from({ length: CONCURRENT_PUTS }, (_, i) => `killed/att/${i}`);

            const child = await run(process.execPath, ['-e', PUT_CHILD, require.resolve('../../../lib/blob-store/sqlite-blob-store'), filename, JSON.stringify(keys)], {
                cwd: Path.join(__dirname, '..', '..', '..'),
                env: process.env
            });

            expect(child.stderr).to.equal('');
            expect(child.signal).to.equal('SIGKILL');
            const acknowledged = child.stdout.split('\n').filter(Boolean).map((line) => line.slice('done '.length));
            expect(acknowledged.sort()).to.equal([...keys].sort());

            const store = openStore(Path.dirname(filename)).store;
            try {
                for (const key of acknowledged) {
                    expect((await readBlob(store, key))!.equals(Buffer.alloc(4096, key))).to.be.true();
                }
            }
            finally {
                await store.close();
            }
        });

        it('resolves a put only after the transaction holding it has committed', async () => {
            const own = await Fs.mkdtemp(Path.join(dir, 'order-'));
            const events: string[] = [];
            const store = createSqliteBlobStore({ filename: Path.join(own, 'blobs.sqlite'), onCommit: (items) => events.push(`commit ${items}`) });
            try {
                await Promise.all(['a', 'b', 'c'].map(async (name) => {
                    await store.put(`order/${name}`, Buffer.from(name), 'text/plain');
                    events.push(`put ${name}`);
                }));
                await store.delete(['order/a']);
                events.push('deleted');

                // Each resolution comes after a commit that held it.
                let committed = 0;
                let resolved = 0;
                for (const event of events) {
                    if (event.startsWith('commit ')) {
                        committed += Number(event.slice('commit '.length));
                    }
                    else {
                        resolved++;
                        expect(resolved, `${event} before its commit in ${events.join(', ')}`).to.be.at.most(committed);
                    }
                }

                expect(resolved).to.equal(4);
            }
            finally {
                await store.close();
            }
        });

        it('rejects every put of a batch whose commit fails, and stores none of them', async () => {
            const own = await Fs.mkdtemp(Path.join(dir, 'busy-'));
            const filename = Path.join(own, 'blobs.sqlite');
            // The other connection holds the write lock past the store's busy wait (short here:
            // only "locked" matters): the batch fails.
            const { store } = openStore(own, { busyTimeoutMs: 50 });
            await store.put('busy/seed', Buffer.from('seed'), 'text/plain');
            const other = await openRaw(filename);
            try {
                await exec(other, 'BEGIN IMMEDIATE');
                const blocked = await Promise.allSettled([
                    store.put('busy/a', Buffer.from('a'), 'text/plain'),
                    store.put('busy/b', Buffer.from('b'), 'text/plain')
                ]);
                expect(blocked.map((r) => r.status)).to.equal(['rejected', 'rejected']);
                await exec(other, 'ROLLBACK');
            }
            finally {
                await closeRaw(other);
            }

            expect(await store.get('busy/a')).to.be.null();
            expect(await store.get('busy/b')).to.be.null();
            await store.put('busy/a', Buffer.from('a again'), 'text/plain');
            expect((await readBlob(store, 'busy/a'))!.toString()).to.equal('a again');
            await store.close();
        });
    });

    describe('a batch failing mid-transaction', () => {

        it('stores none of the batch, rejects all of it, and leaves the writer ready for the next', async () => {
            const own = await Fs.mkdtemp(Path.join(dir, 'poison-'));
            const filename = Path.join(own, 'blobs.sqlite');
            const { store, commits } = openStore(own);
            await store.put('poison/seed', Buffer.from('seed'), 'text/plain');
            // A real SQLite failure on the second row of a batch, installed as another process could.
            const other = await openRaw(filename);
            await exec(other, 'CREATE TRIGGER poison BEFORE INSERT ON blobs WHEN NEW.key = \'poison/bad\' BEGIN SELECT RAISE(ABORT, \'poisoned row\'); END');
            await closeRaw(other);
            commits.length = 0;
            try {
                const outcomes = await Promise.allSettled([
                    store.put('poison/a', Buffer.from('a'), 'text/plain'),
                    store.put('poison/bad', Buffer.from('bad'), 'text/plain'),
                    store.put('poison/b', Buffer.from('b'), 'text/plain')
                ]);

                expect(outcomes.map((o) => o.status)).to.equal(['rejected', 'rejected', 'rejected']);
                expect(commits).to.equal([]);
                expect(await store.get('poison/a')).to.be.null();
                expect(await store.get('poison/b')).to.be.null();

                await store.put('poison/after', Buffer.from('after'), 'text/plain');
                expect((await readBlob(store, 'poison/after'))!.toString()).to.equal('after');
            }
            finally {
                await store.close();
            }
        });
    });

    describe('group commit', () => {

        it('commits puts made together in shared transactions', async () => {
            const own = await Fs.mkdtemp(Path.join(dir, 'group-'));
            const { store, commits } = openStore(own);
            try {
                await store.put('group/first', Buffer.from('opens the database'), 'text/plain');
                commits.length = 0;

                const keys = Array.from({ length: CONCURRENT_PUTS }, (_, i) => `group/att/${i}`);
                await Promise.all(keys.map((key) => store.put(key, Buffer.from(key), 'text/plain')));

                expect(commits.reduce((a, b) => a + b, 0)).to.equal(CONCURRENT_PUTS);
                // At most the first alone, then the rest that queued behind it together.
                expect(commits.length).to.be.at.most(2);
                for (const key of keys) {
                    expect((await readBlob(store, key))!.toString()).to.equal(key);
                }
            }
            finally {
                await store.close();
            }
        });

        it('commits deletes in the same line as puts, in the order they were made', async () => {
            const own = await Fs.mkdtemp(Path.join(dir, 'line-'));
            const { store, commits } = openStore(own);
            try {
                await store.put('line/seed', Buffer.from('x'), 'text/plain');
                commits.length = 0;
                // put, delete, put again of one key, all at once: the last one made wins.
                await Promise.all([
                    store.put('line/k', Buffer.from('one'), 'text/plain'),
                    store.delete(['line/k']),
                    store.put('line/k', Buffer.from('two'), 'text/plain'),
                    store.delete(['line/seed'])
                ]);

                expect((await readBlob(store, 'line/k'))!.toString()).to.equal('two');
                expect(await store.get('line/seed')).to.be.null();
                expect(commits.reduce((a, b) => a + b, 0)).to.equal(4);
                expect(commits.length).to.be.below(4);
            }
            finally {
                await store.close();
            }
        });
    });

    describe('get()', () => {

        it('reads while another connection holds the write lock', async () => {
            const own = await Fs.mkdtemp(Path.join(dir, 'reader-'));
            const { store } = openStore(own);
            await store.put('read/raw.eml', Buffer.from('readable'), 'message/rfc822');
            const other = await openRaw(Path.join(own, 'blobs.sqlite'));
            try {
                await exec(other, 'BEGIN IMMEDIATE');
                let putSettled = false;
                const pending = store.put('read/att/0', Buffer.from('waits'), 'text/plain').finally(() => {
                    putSettled = true;
                });

                // The put waits for the lock; the read goes through a connection of its own.
                expect((await readBlob(store, 'read/raw.eml'))!.toString()).to.equal('readable');
                expect(await store.stat('read/raw.eml')).to.include({ size: 8 });
                expect(putSettled).to.be.false();

                await exec(other, 'COMMIT');
                await pending;
                expect((await readBlob(store, 'read/att/0'))!.toString()).to.equal('waits');
            }
            finally {
                await closeRaw(other);
                await store.close();
            }
        });
    });

    describe('put()', () => {

        it('refuses a Readable longer than maxBlobBytes and stores nothing', async () => {
            const own = await Fs.mkdtemp(Path.join(dir, 'bounded-'));
            const { store } = openStore(own, { maxBlobBytes: 1000 });
            try {
                for (const body of [chunked(randomBytes(1001), 100), randomBytes(1001)]) {
                    const err = await expect(store.put('big/raw.eml', body, 'message/rfc822')).to.reject();
                    expect((err as { code?: string }).code).to.equal('TOO_LARGE');
                    expect((err as Error).message).to.equal('blob exceeds 1000 bytes');
                }

                expect(await store.get('big/raw.eml')).to.be.null();
                expect(await store.put('big/raw.eml', chunked(randomBytes(1000), 100), 'message/rfc822')).to.equal({ size: 1000 });
            }
            finally {
                await store.close();
            }
        });
    });

    describe('existing()', () => {

        it('gives the pages of deleted blobs back, so the file shrinks', async () => {
            const own = await tempDir('sqlite-blobs');
            const filename = Path.join(own, 'blobs.sqlite');
            const { store } = openStore(own);
            const keys = Array.from({ length: 40 }, (_, i) => `vacuum/${i}`);
            await Promise.all(keys.map((key) => store.put(key, randomBytes(64 * 1024), 'application/octet-stream')));
            const pages = async () => {
                const db = await openRaw(filename);
                try {
                    const [{ page_count: count }] = await all<{ page_count: number }>(db, 'PRAGMA page_count');
                    const [{ freelist_count: free }] = await all<{ freelist_count: number }>(db, 'PRAGMA freelist_count');
                    return { count, free };
                }
                finally {
                    await closeRaw(db);
                }
            };

            const full = await pages();
            expect(full.count).to.be.above(40 * 16);
            await store.delete(keys.slice(0, 30));
            const after = await pages();
            expect(after.free).to.equal(0);
            // 10 blobs of 64 KiB are left: about a quarter of the pages.
            expect(after.count).to.be.below(full.count / 2);
            await store.close();
            await Fs.rm(own, { recursive: true, force: true });
        });

        it('answers which keys are stored', async () => {
            const own = await Fs.mkdtemp(Path.join(dir, 'existing-'));
            const { store } = openStore(own);
            try {
                const keys = Array.from({ length: 1200 }, (_, i) => `ex/att/${i}`);
                await Promise.all(keys.filter((_, i) => i % 3 === 0).map((key) => store.put(key, Buffer.from('x'), 'text/plain')));

                const found = await store.existing([...keys, '../bad']);
                expect([...found].sort()).to.equal(keys.filter((_, i) => i % 3 === 0).sort());
            }
            finally {
                await store.close();
            }
        });
    });

    describe('createDownloadLink() and verifyDownload()', () => {

        it('signs and checks through the given signer, and refuses without one', async () => {
            const own = await Fs.mkdtemp(Path.join(dir, 'links-'));
            const { store } = openStore(own);
            const bare = createSqliteBlobStore({ filename: Path.join(own, 'blobs.sqlite') });
            try {
                const link = await store.createDownloadLink('l/raw.eml', { expiresInSeconds: 900, filename: 'm.eml', contentType: 'message/rfc822' });
                expect(link.key).to.equal('l/raw.eml');
                expect(store.verifyDownload('l/raw.eml', link.query)).to.equal({ filename: 'm.eml', contentType: 'message/rfc822' });
                expect(store.verifyDownload('l/att/0', link.query)).to.be.null();

                await expect(bare.createDownloadLink('l/raw.eml', { expiresInSeconds: 900, filename: 'm.eml', contentType: 'message/rfc822' })).to.reject(/signer/);
                expect(bare.verifyDownload('l/raw.eml', link.query)).to.be.null();
            }
            finally {
                await store.close();
                await bare.close();
            }
        });
    });
});
