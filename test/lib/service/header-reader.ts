import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Readable } from 'node:stream';
import type { BlobStore } from '../../../lib/blob-store/blob-store';
import { parseHeaderFields } from '../../../lib/mime/header-fields';
import { createHeaderReader, HEADERS_IN_THREAD_BYTES } from '../../../lib/service/header-reader';
import { sqliteFsStores, type TestStores } from '../../helpers/test-stores';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('lib/service/header-reader', () => {
    let stores: TestStores;

    before(async () => {
        stores = await sqliteFsStores().create();
    });

    after(() => stores.cleanup());

    /** The real blob store, counting its reads. */
    const counting = (): { blobStore: BlobStore; reads: () => number } => {
        let reads = 0;
        const real = stores.blobStore;
        const blobStore = Object.create(real) as BlobStore;
        blobStore.get = (key: string): Promise<Readable | null> => {
            reads++;
            return real.get(key);
        };

        return { blobStore, reads: () => reads };
    };

    const store = async (raw: Buffer): Promise<string> => {
        const key = `headers-${Math.random().toString(36).slice(2)}/raw.eml`;
        await stores.blobStore.put(key, raw, 'message/rfc822');
        return key;
    };

    it('parses a large header section in the pool and a small one in the calling thread, with the same answer', async () => {
        const big = Buffer.from(`Subject: big\r\n${'X-Filler: =?utf-8?Q?caf=C3=A9?=\r\n'.repeat(Math.ceil(HEADERS_IN_THREAD_BYTES / 30))}\r\nbody\r\n`);
        const small = Buffer.from('Subject: small\r\nX-Tags: a\r\n\r\nbody\r\n');
        const pooled: number[] = [];
        const { blobStore } = counting();
        const read = createHeaderReader(blobStore, (section) => {
            pooled.push(section.length);
            return Promise.resolve(parseHeaderFields(section));
        });
        expect(await read({ messageId: 'small@x', rawKey: await store(small) })).to.equal([{ name: 'Subject', value: 'small' }, { name: 'X-Tags', value: 'a' }]);
        expect(pooled).to.equal([]);
        const fields = await read({ messageId: 'big@x', rawKey: await store(big) });
        expect(fields[0]).to.equal({ name: 'Subject', value: 'big' });
        expect(fields[1]).to.equal({ name: 'X-Filler', value: 'café' });
        expect(pooled).to.equal([big.indexOf('\r\n\r\n') + 2]);
    });

    it('shares one read and one parse among readers of one raw message at the same time, and reads again afterwards', async () => {
        const raw = Buffer.from(`Subject: shared\r\n${'X-Filler: yes\r\n'.repeat(2000)}\r\nbody\r\n`);
        const rawKey = await store(raw);
        let parses = 0;
        const { blobStore, reads } = counting();
        const read = createHeaderReader(blobStore, (section) => {
            parses++;
            return Promise.resolve(parseHeaderFields(section));
        });
        const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => read({ messageId: `copy-${i % 3}@x`, rawKey })));
        expect(new Set(answers).size).to.equal(1);
        expect([reads(), parses]).to.equal([1, 1]);
        await read({ messageId: 'copy-0@x', rawKey });
        expect([reads(), parses]).to.equal([2, 2]);
    });

    it('says which copy\'s raw message is missing, to every reader waiting on it', async () => {
        const read = createHeaderReader(stores.blobStore, (section) => Promise.resolve(parseHeaderFields(section)));
        const waits = [read({ messageId: 'gone@x', rawKey: 'nothing/raw.eml' }), read({ messageId: 'gone@x', rawKey: 'nothing/raw.eml' })];
        for (const wait of waits) {
            await expect(wait).to.reject('the raw message of gone@x is missing');
        }
    });
});
