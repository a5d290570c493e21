import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createHash } from 'node:crypto';
import { MAX_BLOB_KEY_LENGTH } from '../../../lib/blob-store/blob-key';
import { newBlobPrefix } from '../../../lib/identity/ids';
import { fileNameOf, isShardName, keyOfFile, relativePathOf, SHARD_COUNT, shardOf } from '../../../lib/blob-store/fs-blob-layout';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** A deterministic `<28 hex>` prefix, shaped like newBlobPrefix()'s. */
function prefix(n: number): string {
    return createHash('sha256').update(String(n)).digest('hex').slice(0, 28);
}

/** Keys of every shape the store must hold: ours, and any other valid key. */
const KEYS = [
    `${prefix(1)}/raw.eml`,
    `${prefix(1)}/att/0`,
    `${prefix(1)}/att/1`,
    `${prefix(1)}/att/10`,
    `${prefix(1)}/att/1x`,
    `${prefix(1)}x/att/0`,
    `${prefix(2)}/raw.eml`,
    'a',
    'a/b',
    'a.b',
    'a-b',
    'a_b',
    'a/b/c',
    'a/_b',
    'a..b/c--d/e__f',
    `a${'/b'.repeat(Math.floor((MAX_BLOB_KEY_LENGTH - 1) / 2))}`,
    'z'.repeat(MAX_BLOB_KEY_LENGTH)
];

describe('fs-blob-layout', () => {

    describe('relativePathOf()', () => {

        it('files every key as `<two hex digits>/<one file name>`, no longer than the key', () => {
            for (const key of KEYS) {
                const path = relativePathOf(key)!;
                const [shard, name, ...rest] = path.split('/');
                expect(rest, key).to.equal([]);
                expect(isShardName(shard), key).to.be.true();
                expect(name, key).to.equal(fileNameOf(key));
                expect(name.length, key).to.equal(key.length);
                expect(name.startsWith('.'), key).to.be.false();
            }
        });

        it('gives different keys different paths', () => {
            const paths = new Set(KEYS.map((key) => relativePathOf(key)));
            expect(paths.size).to.equal(KEYS.length);
        });

        it('is null for a key that is not one of ours', () => {
            for (const key of ['', '../x', '/etc/passwd', 'a//b', 'a/./b', 'a/', '.tmp/x', 'Upper', 'a+b', 'a\\b', 'a'.repeat(MAX_BLOB_KEY_LENGTH + 1)]) {
                expect(relativePathOf(key), JSON.stringify(key)).to.be.null();
            }
        });
    });

    describe('keyOfFile()', () => {

        it('reads back the key of every file name the layout writes, `att/<n>` keys included', () => {
            for (const key of KEYS) {
                const [shard, name] = relativePathOf(key)!.split('/');
                expect(keyOfFile(shard, name)).to.equal(key);
            }
        });

        it('refuses names that no valid key maps to', () => {
            for (const name of ['a++b', '+a', 'a+', '.tmp', '.a', 'a+.b', 'UPPER', 'a b', 'a/b', '', 'z'.repeat(MAX_BLOB_KEY_LENGTH + 1)]) {
                const shard = isShardName(name.slice(0, 2)) ? name.slice(0, 2) : '00';
                expect(keyOfFile(shard, name), JSON.stringify(name)).to.be.null();
            }
        });

        it('refuses a name filed under another shard (get() would never find it there)', () => {
            const key = `${prefix(3)}/raw.eml`;
            const [shard, name] = relativePathOf(key)!.split('/');
            const other = shard === '00' ? '01' : '00';

            expect(keyOfFile(other, name)).to.be.null();
            expect(keyOfFile(shard, name)).to.equal(key);
        });
    });

    describe('shardOf()', () => {

        it('puts every blob of one email in one shard, so one directory fsync can cover them', () => {
            const shard = shardOf(`${prefix(4)}/raw.eml`);
            for (let n = 0; n < 20; n++) {
                expect(shardOf(`${prefix(4)}/att/${n}`)).to.equal(shard);
            }

            expect(shardOf(prefix(4))).to.equal(shard);
        });

        it('spreads email prefixes over all 256 shards evenly, prefixes of one millisecond too', () => {
            const counts = new Map<string, number>();
            const emails = 25_600;
            for (let n = 0; n < emails; n++) {
                // newBlobPrefix() starts with the time: most of these share it, and differ in their random part.
                const shard = shardOf(`${newBlobPrefix()}/raw.eml`);
                counts.set(shard, (counts.get(shard) ?? 0) + 1);
            }

            expect(counts.size).to.equal(SHARD_COUNT);
            for (const [shard, count] of counts) {
                expect(isShardName(shard)).to.be.true();
                // 100 expected per shard; a shard with twice or half that would be a skewed hash.
                expect(count, `shard ${shard}`).to.be.within(50, 200);
            }
        });
    });

    describe('isShardName()', () => {

        it('accepts exactly two lowercase hex digits', () => {
            expect(['00', '0a', 'ff', '9c'].every(isShardName)).to.be.true();
            expect(['0', '000', 'FF', 'g0', '.t', 'ab/'].some(isShardName)).to.be.false();
        });
    });
});
