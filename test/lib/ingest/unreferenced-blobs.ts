import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { BlobStore } from '../../../lib/blob-store/blob-store';
import type { RecordStore } from '../../../lib/record-store/record-store';
import { removeUnreferencedBlobs, type BlobRemoval } from '../../../lib/ingest/unreferenced-blobs';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** A removal over stores where `referenced` keys are still used; `overrides` replace the stores' calls. */
function provision(referenced: string[], overrides: { referencedBlobKeys?: RecordStore['referencedBlobKeys']; delete?: BlobStore['delete']; timeoutMs?: number } = {}) {
    const asked: string[][] = [];
    const deleted: string[][] = [];
    const logged: Array<{ message: string; error?: unknown }> = [];
    const recordStore = {
        referencedBlobKeys: overrides.referencedBlobKeys ?? ((keys: string[]) => {
            asked.push(keys);
            return Promise.resolve(new Set(keys.filter((k) => referenced.includes(k))));
        })
    } as unknown as RecordStore;
    const blobStore = {
        delete: overrides.delete ?? ((keys: string[]) => {
            deleted.push(keys);
            return Promise.resolve();
        })
    } as unknown as BlobStore;
    const removal: BlobRemoval = { recordStore, blobStore, timeoutMs: overrides.timeoutMs, log: (message, error) => logged.push({ message, error }) };
    return { removal, asked, deleted, logged };
}

describe('unreferenced-blobs', () => {

    describe('removeUnreferencedBlobs()', () => {

        it('deletes only the keys no record references, each once, and answers how many', async () => {
            const p = provision(['k/raw.eml']);
            expect(await removeUnreferencedBlobs(p.removal, ['k/raw.eml', 'k/att/0', 'k/att/0', 'k/att/1'], 'deleted emails')).to.equal(2);
            expect(p.asked).to.equal([['k/raw.eml', 'k/att/0', 'k/att/1']]);
            expect(p.deleted).to.equal([['k/att/0', 'k/att/1']]);
            expect(p.logged).to.equal([]);
        });

        it('asks and deletes nothing for no keys, and deletes nothing when every key is still referenced', async () => {
            const p = provision(['a', 'b']);
            expect(await removeUnreferencedBlobs(p.removal, [], 'deleted emails')).to.equal(0);
            expect(p.asked).to.equal([]);
            expect(await removeUnreferencedBlobs(p.removal, ['a', 'b'], 'deleted emails')).to.equal(0);
            expect(p.deleted).to.equal([]);
        });

        it('leaves the blobs to the orphan sweep when the references cannot be read', async () => {
            const failure = new Error('database down');
            const p = provision([], { referencedBlobKeys: () => Promise.reject(failure) });
            expect(await removeUnreferencedBlobs(p.removal, ['k/raw.eml'], 'deleted emails')).to.equal(0);
            expect(p.deleted).to.equal([]);
            expect(p.logged).to.equal([{ message: 'cannot tell which blobs of deleted emails are unused; left for the orphan sweep', error: failure }]);
        });

        it('logs a delete that fails or throws, and does not fail', async () => {
            const failure = new Error('bucket gone');
            const rejecting = provision([], { delete: () => Promise.reject(failure) });
            expect(await removeUnreferencedBlobs(rejecting.removal, ['k/raw.eml'], 'replaced emails')).to.equal(0);
            expect(rejecting.logged).to.equal([{ message: 'removing the blobs of replaced emails failed; left for the orphan sweep', error: failure }]);

            const throwing = provision([], { delete: () => {
                throw failure;
            } });
            expect(await removeUnreferencedBlobs(throwing.removal, ['k/raw.eml'], 'replaced emails')).to.equal(0);
            expect(throwing.logged).to.have.length(1);
        });

        it('gives up on a delete that takes longer than timeoutMs', async () => {
            const p = provision([], { delete: () => new Promise(() => undefined), timeoutMs: 20 });
            expect(await removeUnreferencedBlobs(p.removal, ['k/raw.eml'], 'a failed ingest')).to.equal(0);
            expect((p.logged[0]!.error as Error).message).to.equal('removing the blobs of a failed ingest did not finish within 20 ms');
        });
    });
});
