import * as Code from '@hapi/code';
import type * as Lab from '@hapi/lab';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import { readBlob } from '../helpers/blob-contents';
import { chunked, failingAfter } from '../helpers/streams';

const { expect } = Code;

/** The parts of a lab script the suite registers with. */
export type ContractLab = Pick<Lab.script.Script, 'describe' | 'it' | 'before' | 'after'>;

/** A store with nothing in it, and how to remove what it left behind. */
export interface ProvisionedStore {
    store: BlobStore;
    cleanup(): Promise<void>;
}

/** How a test file plugs a store into the suite. */
export interface BlobStoreContractOptions {
    /** Shown in the suite's title, e.g. `fs`. */
    name: string;
    /** A fresh, empty store: called once for the suite and again by tests that need emptiness. */
    provision(): Promise<ProvisionedStore>;
}

async function listAll(store: BlobStore): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    for await (const { key, modifiedAt } of store.listBlobs()) {
        expect(found.has(key), `${key} listed twice`).to.be.false();
        found.set(key, modifiedAt);
    }

    return found;
}

/** Registers the behaviour every BlobStore must have; store-specific files add their own. */
export function blobStoreContract(lab: ContractLab, options: BlobStoreContractOptions): void {
    const { describe, it, before, after } = lab;

    describe(`BlobStore contract (${options.name})`, () => {
        let provisioned: ProvisionedStore;
        let store: BlobStore;
        // Every test writes under its own prefix, so tests sharing the store stay independent.
        let counter = 0;
        const prefix = () => `${randomBytes(6).toString('hex')}${++counter}`;

        const withFreshStore = async (test: (fresh: BlobStore) => Promise<void>) => {
            const fresh = await options.provision();
            try {
                await test(fresh.store);
            }
            finally {
                await fresh.store.close?.();
                await fresh.cleanup();
            }
        };

        before(async () => {
            provisioned = await options.provision();
            store = provisioned.store;
        });

        after(async () => {
            await store.close?.();
            await provisioned.cleanup();
        });

        describe('put() and get()', () => {

            it('round-trips a Buffer holding all 256 byte values, byte for byte', async () => {
                const key = `${prefix()}/raw.eml`;
                const data = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7 + 3) % 256));
                expect(new Set(data).size).to.equal(256);

                expect(await store.put(key, data, 'application/octet-stream')).to.equal({ size: 512 });
                expect((await readBlob(store, key))!.equals(data)).to.be.true();
            });

            it('round-trips a Readable delivered in many small chunks', async () => {
                const key = `${prefix()}/att/0`;
                const data = randomBytes(100_000);

                expect(await store.put(key, chunked(data, 1000), 'application/pdf')).to.equal({ size: 100_000 });
                expect((await readBlob(store, key))!.equals(data)).to.be.true();
            });

            it('accepts a Readable that yields strings', async () => {
                const key = `${prefix()}/raw.eml`;

                expect(await store.put(key, Readable.from(['Subject: h\u00e9\r\n', '\r\nbody']), 'message/rfc822')).to.equal({ size: 20 });
                expect((await readBlob(store, key))!.toString('utf8')).to.equal('Subject: h\u00e9\r\n\r\nbody');
            });

            it('round-trips an empty blob from a Buffer and from a Readable', async () => {
                const base = prefix();

                expect(await store.put(`${base}/a`, Buffer.alloc(0), 'text/plain')).to.equal({ size: 0 });
                expect(await store.put(`${base}/b`, Readable.from([]), 'text/plain')).to.equal({ size: 0 });
                expect(await readBlob(store, `${base}/a`)).to.equal(Buffer.alloc(0));
                expect(await readBlob(store, `${base}/b`)).to.equal(Buffer.alloc(0));
            });

            it('round-trips a 5 MB Readable byte for byte', async () => {
                const key = `${prefix()}/raw.eml`;
                const data = randomBytes(5 * 1024 * 1024);

                expect(await store.put(key, chunked(data), 'message/rfc822')).to.equal({ size: data.length });
                expect((await readBlob(store, key))!.equals(data)).to.be.true();
            });

            it('replaces a blob written again under the same key', async () => {
                const key = `${prefix()}/raw.eml`;

                await store.put(key, Buffer.from('a much longer first version'), 'text/plain');
                await store.put(key, chunked(Buffer.from('second'), 2), 'text/plain');
                expect((await readBlob(store, key))!.toString()).to.equal('second');
            });

            it('keeps keys with nested segments apart', async () => {
                const base = prefix();
                const keys = [`${base}/raw.eml`, `${base}/att/0`, `${base}/att/1`, `${base}/att/1x`, `${base}x/att/0`];
                for (const key of keys) {
                    await store.put(key, Buffer.from(key), 'text/plain');
                }

                for (const key of keys) {
                    expect((await readBlob(store, key))!.toString()).to.equal(key);
                }
            });

            it('returns null for a key never written', async () => {
                const base = prefix();
                await store.put(`${base}/att/0`, Buffer.from('x'), 'text/plain');

                expect(await store.get(`${base}/att/1`)).to.be.null();
                expect(await store.get(`${prefix()}/raw.eml`)).to.be.null();
            });

            it('leaves no blob when the Readable fails mid-way', async () => {
                const key = `${prefix()}/raw.eml`;

                await expect(store.put(key, failingAfter(randomBytes(70_000)), 'message/rfc822')).to.reject('connection lost');
                expect(await store.get(key)).to.be.null();
            });

            it('keeps the previous blob when an overwrite fails mid-way', async () => {
                const key = `${prefix()}/raw.eml`;
                await store.put(key, Buffer.from('complete'), 'message/rfc822');

                await expect(store.put(key, failingAfter(Buffer.from('partial')), 'message/rfc822')).to.reject('connection lost');
                expect((await readBlob(store, key))!.toString()).to.equal('complete');
            });

            it('rejects a key that is not one of ours on put() and finds nothing for it on get()', async () => {
                await expect(store.put('../escape', Buffer.from('x'), 'text/plain')).to.reject();
                await expect(store.put('', Buffer.from('x'), 'text/plain')).to.reject();
                expect(await store.get('../escape')).to.be.null();
                expect(await store.get('')).to.be.null();
            });
        });

        describe('delete()', () => {

            it('removes the given blobs and keeps the others', async () => {
                const base = prefix();
                await store.put(`${base}/raw.eml`, Buffer.from('raw'), 'message/rfc822');
                await store.put(`${base}/att/0`, Buffer.from('a0'), 'text/plain');
                await store.put(`${base}/att/1`, Buffer.from('a1'), 'text/plain');

                await store.delete([`${base}/raw.eml`, `${base}/att/1`]);

                expect(await store.get(`${base}/raw.eml`)).to.be.null();
                expect(await store.get(`${base}/att/1`)).to.be.null();
                expect((await readBlob(store, `${base}/att/0`))!.toString()).to.equal('a0');
            });

            it('ignores absent keys and is safe to repeat', async () => {
                const base = prefix();
                await store.put(`${base}/raw.eml`, Buffer.from('raw'), 'message/rfc822');

                await store.delete([`${base}/raw.eml`, `${base}/never-written`, `${base}/raw.eml`]);
                await store.delete([`${base}/raw.eml`]);
                expect(await store.get(`${base}/raw.eml`)).to.be.null();
            });

            it('accepts an empty list and keys that are not ours', async () => {
                const base = prefix();
                await store.put(`${base}/raw.eml`, Buffer.from('raw'), 'message/rfc822');

                await store.delete([]);
                await store.delete(['../raw.eml', '', `/${base}/raw.eml`]);
                expect((await readBlob(store, `${base}/raw.eml`))!.toString()).to.equal('raw');
            });

            it('removes a batch of 30 blobs in one call', async () => {
                const base = prefix();
                const keys = Array.from({ length: 30 }, (_, i) => `${base}/att/${i}`);
                await Promise.all(keys.map((key) => store.put(key, Buffer.from(key), 'text/plain')));

                await store.delete(keys);
                for (const key of keys) {
                    expect(await store.get(key)).to.be.null();
                }
            });
        });

        describe('listBlobs()', () => {

            it('yields nothing for an empty store', async () => {
                await withFreshStore(async (fresh) => {
                    expect((await listAll(fresh)).size).to.equal(0);
                });
            });

            it('yields every blob once with its last write time', async () => {
                await withFreshStore(async (fresh) => {
                    const start = Date.now();
                    const keys = ['p1/raw.eml', 'p1/att/0', 'p1/att/1', 'p2/raw.eml'];
                    for (const key of keys) {
                        await fresh.put(key, Buffer.from(key), 'text/plain');
                    }

                    await fresh.put('p3/raw.eml', Buffer.from('gone'), 'text/plain');
                    await fresh.delete(['p3/raw.eml']);
                    const end = Date.now();

                    const found = await listAll(fresh);
                    expect([...found.keys()].sort()).to.equal([...keys].sort());
                    for (const modifiedAt of found.values()) {
                        // Object stores keep whole seconds: allow the truncation, nothing more.
                        expect(modifiedAt).to.be.a.number();
                        expect(modifiedAt).to.be.within(Math.floor(start / 1000) * 1000 - 1000, end + 1000);
                    }
                });
            });
        });

        describe('createDownloadLink()', () => {

            it('returns a link for a stored blob', async () => {
                const key = `${prefix()}/att/0`;
                await store.put(key, Buffer.from('x'), 'text/plain');

                const link = await store.createDownloadLink(key, { expiresInSeconds: 900, filename: '0-notes.txt', contentType: 'text/plain' });
                // Object storage answers a URL; a store the server serves itself, a signed target.
                if ('url' in link) {
                    expect(link.url).to.be.a.string();
                    expect(link.url.length).to.be.greaterThan(0);
                }
                else {
                    expect(link.key).to.equal(key);
                    expect(link.query.sig).to.match(/^[0-9a-f]{64}$/);
                }
            });
        });
    });
}
