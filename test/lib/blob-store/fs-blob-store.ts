import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import type { SignedLinkTarget } from '../../../lib/blob-store/blob-store';
import { fileNameOf, isShardName, relativePathOf, shardOf } from '../../../lib/blob-store/fs-blob-layout';
import { createFsBlobStore, type FsBlobStore } from '../../../lib/blob-store/fs-blob-store';
import { loadOrCreateSigningSecret, SIGNING_SECRET_FILE } from '../../../lib/blob-store/signing-secret';
import { blobStoreContract } from '../../contracts/blob-store-contract';
import { readBlob } from '../../helpers/blob-contents';
import { chunked, failingAfter } from '../../helpers/streams';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const SECRET = 'a test secret of at least sixteen bytes';


/** Where the store keeps `key` under `root` (fs-blob-layout.ts). */
function blobPath(root: string, key: string): string {
    return Path.join(root, ...relativePathOf(key)!.split('/'));
}

/** Every key the store lists, sorted. */
async function listedKeys(store: FsBlobStore): Promise<string[]> {
    const keys: string[] = [];
    for await (const { key } of store.listBlobs()) {
        keys.push(key);
    }

    return keys.sort();
}

// Every file and its content digest under `dir`, so a test can prove nothing changed.
async function snapshot(dir: string): Promise<Map<string, string>> {
    const files = new Map<string, string>();
    const visit = async (current: string) => {
        for (const entry of await Fs.readdir(current, { withFileTypes: true })) {
            const path = Path.join(current, entry.name);
            if (entry.isDirectory()) {
                files.set(path + '/', 'dir');
                await visit(path);
            }
            else {
                files.set(path, createHash('sha256').update(await Fs.readFile(path)).digest('hex'));
            }
        }
    };

    await visit(dir);
    return files;
}

blobStoreContract({ describe, it, before, after }, {
    name: 'fs',
    async provision() {
        const dir = await tempDir('fs-blobs');
        return {
            store: createFsBlobStore({ root: Path.join(dir, 'blobs'), signingSecret: SECRET }),
            cleanup: () => Fs.rm(dir, { recursive: true, force: true })
        };
    }
});

describe('FsBlobStore', () => {
    let dir: string;
    let root: string;
    let store: FsBlobStore;

    before(async () => {
        dir = await tempDir('fs-blobs');
        root = Path.join(dir, 'sandbox', 'root');
        store = createFsBlobStore({ root, signingSecret: SECRET });
        await store.put('seed/raw.eml', Buffer.from('seed'), 'message/rfc822');
    });

    after(async () => {
        await Fs.rm(dir, { recursive: true, force: true });
    });

    describe('key confinement', () => {
        // Each target is planted where a store that trusted the key would read or write.
        const hostileKeys: { name: string; key: string; plant?: (root: string) => string }[] = [
            { name: '../x', key: '../x', plant: (r) => Path.join(r, '..', 'x') },
            { name: '/etc/passwd', key: '/etc/passwd', plant: (r) => Path.join(r, 'etc', 'passwd') },
            { name: 'a/../../b', key: 'a/../../b', plant: (r) => Path.join(r, '..', 'b') },
            { name: 'a\\b', key: 'a\\b', plant: (r) => Path.join(r, 'a\\b') },
            { name: 'a NUL byte', key: 'a\u0000b', plant: (r) => Path.join(r, 'a') },
            { name: '%2e%2e/x', key: '%2e%2e/x', plant: (r) => Path.join(r, '%2e%2e', 'x') },
            { name: 'the empty key', key: '' },
            { name: 'a 1,000 character key', key: 'a'.repeat(1000) },
            { name: '.tmp/x', key: '.tmp/x', plant: (r) => Path.join(r, '.tmp', 'x') },
            { name: 'a//b', key: 'a//b', plant: (r) => Path.join(r, 'a', 'b') },
            { name: 'a/./b', key: 'a/./b', plant: (r) => Path.join(r, 'a', 'b') },
            { name: 'a/ (trailing slash)', key: 'a/' },
            { name: 'Upper/Case', key: 'Upper/Case', plant: (r) => Path.join(r, 'Upper', 'Case') }
        ];

        for (const { name, key, plant } of hostileKeys) {
            it(`touches nothing for ${name}`, async () => {
                const planted = plant?.(root);
                if (planted) {
                    await Fs.mkdir(Path.dirname(planted), { recursive: true });
                    await Fs.writeFile(planted, 'planted');
                }

                try {
                    const before = await snapshot(dir);

                    await expect(store.put(key, Buffer.from('evil'), 'text/plain')).to.reject();
                    await expect(store.put(key, chunked(Buffer.from('evil')), 'text/plain')).to.reject();
                    expect(await store.get(key)).to.be.null();
                    expect(await store.stat(key)).to.be.null();
                    await store.delete([key]);
                    await expect(store.createDownloadLink(key, { expiresInSeconds: 900, filename: 'x', contentType: 'text/plain' })).to.reject();

                    expect(await snapshot(dir)).to.equal(before);
                    expect((await readBlob(store, 'seed/raw.eml'))!.toString()).to.equal('seed');
                }
                finally {
                    if (planted) {
                        await Fs.rm(planted, { force: true });
                    }
                }
            });
        }

        it('does not follow a symlink planted at a blob path', async () => {
            const outside = Path.join(dir, 'outside-secret');
            await Fs.writeFile(outside, 'secret');
            const planted = blobPath(root, 'link/raw.eml');
            await Fs.mkdir(Path.dirname(planted), { recursive: true });
            await Fs.symlink(outside, planted);

            expect(await store.get('link/raw.eml')).to.be.null();
            expect(await store.stat('link/raw.eml')).to.be.null();
            expect(await listedKeys(store)).to.not.include('link/raw.eml');
            await Fs.rm(planted);
        });

        it('does not write through a symlink planted as a shard directory', async () => {
            const outside = Path.join(dir, 'outside-dir');
            await Fs.mkdir(outside);
            // A store that never wrote into this shard yet, so it checks it now.
            const fresh = Path.join(dir, 'sym-root');
            await Fs.mkdir(fresh);
            const key = 'symshard/raw.eml';
            await Fs.symlink(outside, Path.join(fresh, shardOf(key)));
            const symStore = createFsBlobStore({ root: fresh, signingSecret: SECRET });

            await expect(symStore.put(key, Buffer.from('mail'), 'message/rfc822')).to.reject(/not a directory/);
            expect(await Fs.readdir(outside)).to.equal([]);
            expect(await Fs.readdir(Path.join(fresh, '.tmp'))).to.equal([]);
        });

        it('finds nothing at a key that names a directory', async () => {
            await store.put('dir1/att/0', Buffer.from('x'), 'text/plain');
            await Fs.mkdir(blobPath(root, 'dir1/att'));

            expect(await store.get('dir1/att')).to.be.null();
            expect(await store.stat('dir1/att')).to.be.null();
            expect(await store.get('dir1/att/0/deeper')).to.be.null();
            await store.delete(['dir1/att', 'dir1/att/0/deeper']);
            expect((await readBlob(store, 'dir1/att/0'))!.toString()).to.equal('x');
            expect((await Fs.stat(blobPath(root, 'dir1/att'))).isDirectory()).to.be.true();
            await Fs.rmdir(blobPath(root, 'dir1/att'));
        });
    });

    describe('put()', () => {

        it('writes the file in its shard directory under the root, readable only by the owner', async () => {
            await store.put('perm/raw.eml', Buffer.from('private'), 'message/rfc822');

            const path = Path.join(root, shardOf('perm/raw.eml'), 'perm+raw.eml');
            expect(path).to.equal(blobPath(root, 'perm/raw.eml'));
            const stats = await Fs.stat(path);
            expect(stats.mode & 0o777).to.equal(0o600);
            expect(await Fs.readFile(path, 'utf8')).to.equal('private');
            expect((await Fs.stat(Path.dirname(path))).mode & 0o777).to.equal(0o700);
        });

        it('makes no directory per email: the blobs of many emails share at most 256 shard directories', async () => {
            const shardRoot = Path.join(dir, 'shards');
            const shardStore = createFsBlobStore({ root: shardRoot, signingSecret: SECRET });
            const keys: string[] = [];
            for (let n = 0; n < 100; n++) {
                const email = createHash('sha256').update(String(n)).digest('hex').slice(0, 24);
                keys.push(`${email}/raw.eml`, `${email}/att/0`, `${email}/att/1`);
            }

            await Promise.all(keys.map((key) => shardStore.put(key, Buffer.from(key), 'text/plain')));

            const top = await Fs.readdir(shardRoot, { withFileTypes: true });
            expect(top.every((e) => e.isDirectory() && (e.name === '.tmp' || isShardName(e.name)))).to.be.true();
            expect(top.length).to.be.within(2, 257);
            let files = 0;
            for (const shard of top.filter((e) => e.name !== '.tmp')) {
                const entries = await Fs.readdir(Path.join(shardRoot, shard.name), { withFileTypes: true });
                expect(entries.every((e) => e.isFile())).to.be.true();
                files += entries.length;
            }

            expect(files).to.equal(keys.length);
            expect(await listedKeys(shardStore)).to.equal([...keys].sort());
        });

        it('writes many blobs of one email at once: all land, whole', async () => {
            const keys = Array.from({ length: 40 }, (_, n) => `concurrent/att/${n}`);
            const bodies = keys.map(() => randomBytes(20_000));

            await Promise.all(keys.map((key, n) => store.put(key, n % 2 ? chunked(bodies[n], 4096) : bodies[n], 'application/octet-stream')));

            for (const [n, key] of keys.entries()) {
                expect((await readBlob(store, key))!.equals(bodies[n]), key).to.be.true();
            }

            expect(await Fs.readdir(Path.join(root, '.tmp'))).to.equal([]);
        });

        it('makes the temp and shard directories again when they are removed from under it', async () => {
            const againRoot = Path.join(dir, 'again');
            const againStore = createFsBlobStore({ root: againRoot, signingSecret: SECRET });
            await againStore.put('again/raw.eml', Buffer.from('first'), 'message/rfc822');

            await Fs.rm(againRoot, { recursive: true });
            await againStore.put('again/raw.eml', Buffer.from('second'), 'message/rfc822');

            expect((await readBlob(againStore, 'again/raw.eml'))!.toString()).to.equal('second');
            expect(await listedKeys(againStore)).to.equal(['again/raw.eml']);
        });

        it('leaves no temp file after a successful write', async () => {
            await store.put('tidy/raw.eml', chunked(randomBytes(200_000)), 'message/rfc822');

            expect(await Fs.readdir(Path.join(root, '.tmp'))).to.equal([]);
        });

        it('leaves neither blob nor temp file when the Readable errors mid-way', async () => {
            await expect(store.put('broken/raw.eml', failingAfter(randomBytes(300_000)), 'message/rfc822')).to.reject('connection lost');

            expect(await store.get('broken/raw.eml')).to.be.null();
            expect(await Fs.readdir(Path.join(root, '.tmp'))).to.equal([]);
            await expect(Fs.stat(Path.join(root, 'broken', 'raw.eml'))).to.reject();
        });

        it('keeps a key and the keys below it apart (`a/att` and `a/att/0` are two files)', async () => {
            await store.put('taken/att', Buffer.from('file'), 'text/plain');
            await store.put('taken/att/0', Buffer.from('x'), 'text/plain');

            expect((await readBlob(store, 'taken/att'))!.toString()).to.equal('file');
            expect((await readBlob(store, 'taken/att/0'))!.toString()).to.equal('x');
        });

        it('fails and cleans up when a directory sits at the blob path', async () => {
            const blocked = blobPath(root, 'blocked/raw.eml');
            await Fs.mkdir(blocked, { recursive: true });
            await Fs.writeFile(Path.join(blocked, 'inside'), 'kept');

            await expect(store.put('blocked/raw.eml', Buffer.from('x'), 'text/plain')).to.reject();
            expect(await Fs.readdir(Path.join(root, '.tmp'))).to.equal([]);
            expect(await Fs.readFile(Path.join(blocked, 'inside'), 'utf8')).to.equal('kept');
            await Fs.rm(blocked, { recursive: true });
        });
    });

    describe('delete()', () => {

        it('removes the files and keeps the shard directories for the next writes', async () => {
            await store.put('gone/raw.eml', Buffer.from('r'), 'message/rfc822');
            await store.put('gone/att/0', Buffer.from('a'), 'text/plain');

            await store.delete(['gone/raw.eml', 'gone/att/0']);

            await expect(Fs.stat(blobPath(root, 'gone/raw.eml'))).to.reject();
            await expect(Fs.stat(blobPath(root, 'gone/att/0'))).to.reject();
            expect((await Fs.stat(Path.join(root, shardOf('gone/raw.eml')))).isDirectory()).to.be.true();
            await store.put('gone/raw.eml', Buffer.from('again'), 'message/rfc822');
            expect((await readBlob(store, 'gone/raw.eml'))!.toString()).to.equal('again');
        });
    });

    describe('listBlobs()', () => {

        it('skips the temp directory and removes temp files of crashed writes', async () => {
            const listDir = await tempDir('fs-blobs');
            let now = Date.now();
            const listStore = createFsBlobStore({ root: listDir, signingSecret: SECRET, now: () => now });
            try {
                await listStore.put('p/raw.eml', Buffer.from('x'), 'message/rfc822');
                await Fs.writeFile(Path.join(listDir, '.tmp', 'crashed'), 'partial');
                await Fs.writeFile(Path.join(listDir, 'NOT-OURS'), 'x');

                const keys = async () => {
                    const found: string[] = [];
                    for await (const { key } of listStore.listBlobs()) {
                        found.push(key);
                    }

                    return found;
                };

                expect(await keys()).to.equal(['p/raw.eml']);
                expect(await Fs.readdir(Path.join(listDir, '.tmp'))).to.equal(['crashed']);

                now += 2 * 60 * 60_000;
                expect(await keys()).to.equal(['p/raw.eml']);
                expect(await Fs.readdir(Path.join(listDir, '.tmp'))).to.equal([]);
            }
            finally {
                await Fs.rm(listDir, { recursive: true, force: true });
            }
        });

        it('yields exactly the keys put, `att/<n>` keys included, and nothing it did not write', async () => {
            const listRoot = Path.join(dir, 'exact');
            const listStore = createFsBlobStore({ root: listRoot, signingSecret: SECRET });
            const email = createHash('sha256').update('exact').digest('hex').slice(0, 24);
            const keys = [
                `${email}/raw.eml`,
                ...Array.from({ length: 12 }, (_, n) => `${email}/att/${n}`),
                `${email}x/att/0`,
                'a',
                'a-b/c_d/e.f',
                `a${'/b'.repeat(99)}`
            ];
            for (const key of keys) {
                await listStore.put(key, Buffer.from(key), 'text/plain');
            }

            // Files and directories the store did not write, where a careless walk would find them.
            const shard = shardOf(keys[0]);
            const wrongShard = shard === '00' ? '01' : '00';
            await Fs.mkdir(Path.join(listRoot, wrongShard), { recursive: true });
            await Fs.writeFile(Path.join(listRoot, wrongShard, fileNameOf(keys[0])), 'misfiled');
            await Fs.writeFile(Path.join(listRoot, shard, 'x++y'), 'undecodable');
            await Fs.writeFile(Path.join(listRoot, shard, 'UPPER'), 'not a key');
            await Fs.mkdir(Path.join(listRoot, shard, fileNameOf(`${email}/sub`)));
            await Fs.mkdir(Path.join(listRoot, 'not-a-shard'));
            await Fs.writeFile(Path.join(listRoot, 'not-a-shard', 'a'), 'old layout');
            await Fs.writeFile(Path.join(listRoot, 'ab'), 'a file named like a shard');

            expect(await listedKeys(listStore)).to.equal([...keys].sort());

            await listStore.delete(keys);
            expect(await listedKeys(listStore)).to.equal([]);
        });

        it('yields nothing before the root exists', async () => {
            const missing = createFsBlobStore({ root: Path.join(dir, 'not-created-yet'), signingSecret: SECRET });
            for await (const blob of missing.listBlobs()) {
                throw new Error(`unexpected ${blob.key}`);
            }
        });
    });

    describe('stat()', () => {

        it('gives size and write time of a blob, null when absent', async () => {
            const start = Date.now();
            await store.put('stat/raw.eml', Buffer.from('12345'), 'message/rfc822');

            const stat = await store.stat('stat/raw.eml');
            expect(stat!.size).to.equal(5);
            expect(stat!.modifiedAt).to.be.within(start - 1000, Date.now() + 1000);
            expect(await store.stat('stat/none')).to.be.null();
        });
    });

    describe('createDownloadLink() and verifyDownload()', () => {
        const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
        let clock = T0;
        const signed = createFsBlobStore({ root: '/nonexistent-root-never-touched', signingSecret: SECRET, now: () => clock });
        const options = { expiresInSeconds: 900, filename: '1-r\u00e9sum\u00e9 "final" & more.pdf', contentType: 'application/pdf' };

        // A copy the tests may tamper with.
        const parse = (link: SignedLinkTarget) => {
            const query: Record<string, string | undefined> = { ...link.query };
            return { key: link.key, query };
        };

        it('returns a signed target: the key and the query expires&filename&type&sig', async () => {
            clock = T0;
            const link = await signed.createDownloadLink('abc123/att/2', options);
            const { key, query } = parse(link);

            expect(Object.keys(link)).to.equal(['key', 'query']);
            expect(Object.keys(query)).to.equal(['expires', 'filename', 'type', 'sig']);
            expect(key).to.equal('abc123/att/2');
            expect(query.expires).to.equal(String(T0 / 1000 + 900));
            expect(query.filename).to.equal(options.filename);
            expect(query.type).to.equal('application/pdf');
            expect(query.sig).to.match(/^[0-9a-f]{64}$/);
        });

        it('verifies a genuine link and returns its filename and type', async () => {
            clock = T0;
            const { key, query } = parse(await signed.createDownloadLink('abc123/att/2', options));

            expect(signed.verifyDownload(key, query)).to.equal({ filename: options.filename, contentType: 'application/pdf' });
        });

        it('rejects a link once it has expired', async () => {
            clock = T0;
            const { key, query } = parse(await signed.createDownloadLink('abc123/raw.eml', options));

            clock = T0 + 899_999;
            expect(signed.verifyDownload(key, query)).to.not.be.null();
            clock = T0 + 900_000;
            expect(signed.verifyDownload(key, query)).to.be.null();
            clock = T0 + 86_400_000;
            expect(signed.verifyDownload(key, query)).to.be.null();
        });

        const tamperings: { name: string; tamper: (link: { key: string; query: Record<string, string | undefined> }) => void }[] = [
            { name: 'a changed signature', tamper: (l) => { l.query.sig = (l.query.sig![0] === '0' ? '1' : '0') + l.query.sig!.slice(1); } },
            { name: 'an upper-cased signature', tamper: (l) => { l.query.sig = l.query.sig!.toUpperCase().replace(/^[0-9]/, 'A'); } },
            { name: 'a truncated signature', tamper: (l) => { l.query.sig = l.query.sig!.slice(0, 62); } },
            { name: 'a changed filename', tamper: (l) => { l.query.filename = 'evil.html'; } },
            { name: 'a changed type', tamper: (l) => { l.query.type = 'text/html'; } },
            { name: 'another key', tamper: (l) => { l.key = 'abc123/att/3'; } },
            { name: 'a later expiry', tamper: (l) => { l.query.expires = String(Number(l.query.expires) + 3600); } },
            { name: 'a non-numeric expiry', tamper: (l) => { l.query.expires = `${l.query.expires}.0`; } },
            { name: 'a missing signature', tamper: (l) => { delete l.query.sig; } },
            { name: 'a missing filename', tamper: (l) => { delete l.query.filename; } },
            { name: 'a missing type', tamper: (l) => { delete l.query.type; } },
            { name: 'a missing expiry', tamper: (l) => { delete l.query.expires; } },
            { name: 'a traversal key', tamper: (l) => { l.key = '../abc123/att/2'; } }
        ];

        for (const { name, tamper } of tamperings) {
            it(`rejects ${name}`, async () => {
                clock = T0;
                const link = parse(await signed.createDownloadLink('abc123/att/2', options));
                expect(signed.verifyDownload(link.key, link.query)).to.not.be.null();

                tamper(link);
                expect(signed.verifyDownload(link.key, link.query)).to.be.null();
            });
        }

        it('rejects a link signed with another secret', async () => {
            clock = T0;
            const other = createFsBlobStore({ root: '/nonexistent-root-never-touched', signingSecret: randomBytes(32), now: () => clock });
            const { key, query } = parse(await other.createDownloadLink('abc123/att/2', options));

            expect(signed.verifyDownload(key, query)).to.be.null();
        });

        it('refuses to sign fields that could move the separator between filename and type', async () => {
            clock = T0;
            await expect(signed.createDownloadLink('abc123/att/2', { ...options, filename: 'a\nb' })).to.reject();
            await expect(signed.createDownloadLink('abc123/att/2', { ...options, contentType: 'text/plain\r\nX-Evil: 1' })).to.reject();
            await expect(signed.createDownloadLink('abc123/att/2', { ...options, expiresInSeconds: 0 })).to.reject();

            // A genuine link for filename `a` and type `b` must not verify as filename `a\nb`.
            const { key, query } = parse(await signed.createDownloadLink('abc123/att/2', { ...options, filename: 'a', contentType: 'b' }));
            expect(signed.verifyDownload(key, { ...query, filename: 'a\nb', type: '' })).to.be.null();
        });
    });

    describe('createFsBlobStore()', () => {

        it('refuses a missing root or a short secret', () => {
            expect(() => createFsBlobStore({ root: '', signingSecret: SECRET })).to.throw(/root/);
            expect(() => createFsBlobStore({ root: dir, signingSecret: 'short' })).to.throw(/signingSecret/);
        });
    });
});

// A child that loads the TypeScript module with a bare transpile, then prints its secret.
const SECRET_CHILD = `
const Fs = require('node:fs');
const Ts = require('typescript');
require.extensions['.ts'] = (module, file) => module._compile(Ts.transpileModule(Fs.readFileSync(file, 'utf8'), {
    compilerOptions: { module: Ts.ModuleKind.CommonJS, target: Ts.ScriptTarget.ES2022, esModuleInterop: true }
}).outputText, file);
const { loadOrCreateSigningSecret } = require(process.argv[1]);
setTimeout(async () => {
    process.stdout.write((await loadOrCreateSigningSecret(process.argv[2])).toString('hex'));
}, Math.max(0, Number(process.argv[3]) - Date.now()));
`;

function runNode(script: string, args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
        execFile(process.execPath, ['-e', script, ...args], { cwd: Path.join(__dirname, '..', '..', '..') }, (err, stdout) => {
            return err ? reject(err) : resolve(stdout);
        });
    });
}

describe('loadOrCreateSigningSecret()', () => {
    let dir: string;

    before(async () => {
        dir = await tempDir('fs-blobs');
    });

    after(async () => {
        await Fs.rm(dir, { recursive: true, force: true });
    });

    it('creates 32 random bytes with mode 0600 and reuses them', async () => {
        const dataDir = Path.join(dir, 'data-a');
        const first = await loadOrCreateSigningSecret(dataDir);

        expect(first.length).to.equal(32);
        const stats = await Fs.stat(Path.join(dataDir, SIGNING_SECRET_FILE));
        expect(stats.mode & 0o777).to.equal(0o600);
        expect(await loadOrCreateSigningSecret(dataDir)).to.equal(first);
        expect(await Fs.readdir(dataDir)).to.equal([SIGNING_SECRET_FILE]);
    });

    it('gives every concurrent starter the same secret', async () => {
        const dataDir = Path.join(dir, 'data-b');
        const secrets = await Promise.all(Array.from({ length: 20 }, () => loadOrCreateSigningSecret(dataDir)));

        for (const secret of secrets) {
            expect(secret).to.equal(secrets[0]);
        }

        expect((await Fs.readFile(Path.join(dataDir, SIGNING_SECRET_FILE))).equals(secrets[0])).to.be.true();
        expect(await Fs.readdir(dataDir)).to.equal([SIGNING_SECRET_FILE]);
    });

    it('gives processes starting together the same secret', async () => {
        const dataDir = Path.join(dir, 'data-processes');
        // Every child loads the module first, then waits for the same instant to start.
        const startAt = Date.now() + 1500;
        const outputs = await Promise.all(Array.from({ length: 6 }, () => runNode(SECRET_CHILD, [require.resolve('../../../lib/blob-store/signing-secret'), dataDir, String(startAt)])));

        for (const output of outputs) {
            expect(output).to.match(/^[0-9a-f]{64}$/);
            expect(output).to.equal(outputs[0]);
        }

        expect((await Fs.readFile(Path.join(dataDir, SIGNING_SECRET_FILE))).toString('hex')).to.equal(outputs[0]);
    });

    it('gives different data dirs different secrets', async () => {
        const a = await loadOrCreateSigningSecret(Path.join(dir, 'data-c'));
        const b = await loadOrCreateSigningSecret(Path.join(dir, 'data-d'));

        expect(a).to.not.equal(b);
    });

    it('refuses a secret file too short to be one', async () => {
        const dataDir = Path.join(dir, 'data-e');
        await Fs.mkdir(dataDir);
        await Fs.writeFile(Path.join(dataDir, SIGNING_SECRET_FILE), '');

        await expect(loadOrCreateSigningSecret(dataDir)).to.reject(/at least 16/);
    });
});
