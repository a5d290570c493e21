import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { packedTarballs, tarballFiles } from '../helpers/packed';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('test/helpers/packed.ts', () => {

    it('packs each package once: every test asking gets the same tarballs, in a directory named for their content', { timeout: 120_000 }, async () => {
        const first = await packedTarballs();
        const before = await Promise.all([first.server, first.client].map((file) => Fs.stat(file)));
        const again = await Promise.all([packedTarballs(), packedTarballs()]);
        expect(again).to.equal([first, first]);
        const after = await Promise.all([first.server, first.client].map((file) => Fs.stat(file)));
        expect(after.map((s) => [s.ino, s.mtimeMs])).to.equal(before.map((s) => [s.ino, s.mtimeMs]));

        expect(Path.dirname(first.server)).to.equal(Path.dirname(first.client));
        expect(Path.basename(Path.dirname(first.server))).to.match(/^inbox-capture-packed-[0-9a-f]{16}$/);
        expect(Path.basename(first.server)).to.match(/^inbox-capture-\d+\.\d+\.\d+\.tgz$/);
        expect(Path.basename(first.client)).to.match(/^inbox-capture-client-\d+\.\d+\.\d+\.tgz$/);
        expect(await tarballFiles(first.server)).to.include(['package.json', 'dist/lib/index.js']);
        expect(await tarballFiles(first.client)).to.include(['package.json', 'dist/cjs/index.js']);
    });
});
