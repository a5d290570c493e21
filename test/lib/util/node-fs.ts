import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Os from 'node:os';
import * as Path from 'node:path';
import { isAbsent, isDirectory, mkdirIfMissing, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, readDirectory, removeStaleTempFiles } from '../../../lib/util/node-fs';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** The error a call rejects with. */
const failureOf = (call: Promise<unknown>): Promise<unknown> => expect(call).to.reject();

describe('node-fs', () => {
    let dir: string;

    before(async () => {
        dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), 'inbox-capture-node-fs-'));
    });

    after(async () => {
        await Fs.rm(dir, { recursive: true, force: true });
    });

    describe('modes', () => {

        it('keeps files and directories to their owner', () => {
            expect(PRIVATE_FILE_MODE).to.equal(0o600);
            expect(PRIVATE_DIR_MODE).to.equal(0o700);
        });
    });

    describe('isAbsent()', () => {

        it('is true for a missing path, a path through a file and a symlink loop', async () => {
            const file = Path.join(dir, 'absent-file');
            await Fs.writeFile(file, 'x');
            const loop = Path.join(dir, 'absent-loop');
            await Fs.symlink(loop, loop);

            expect(isAbsent(await failureOf(Fs.readFile(Path.join(dir, 'nothing-here'))))).to.be.true();
            expect(isAbsent(await failureOf(Fs.readFile(Path.join(file, 'below-a-file'))))).to.be.true();
            expect(isAbsent(await failureOf(Fs.readFile(loop)))).to.be.true();
            expect(isAbsent(await failureOf(Fs.readFile(dir)))).to.be.true();
        });

        it('is false for other failures and for values that are not errors', async () => {
            expect(isAbsent(await failureOf(Fs.mkdir(dir)))).to.be.false();
            expect(isAbsent(Object.assign(new Error('denied'), { code: 'EACCES' }))).to.be.false();
            expect(isAbsent(new Error('no code'))).to.be.false();
            expect(isAbsent(null)).to.be.false();
            expect(isAbsent('ENOENT')).to.be.false();
        });
    });

    describe('isDirectory()', () => {

        it('is true for a directory only, not for a symlink to one, a file or nothing', async () => {
            const file = Path.join(dir, 'isdir-file');
            await Fs.writeFile(file, 'x');
            const link = Path.join(dir, 'isdir-link');
            await Fs.symlink(dir, link);

            expect(await isDirectory(dir)).to.be.true();
            expect(await isDirectory(link)).to.be.false();
            expect(await isDirectory(file)).to.be.false();
            expect(await isDirectory(Path.join(dir, 'isdir-none'))).to.be.false();
        });
    });

    describe('mkdirIfMissing()', () => {

        it('makes a private directory, and is content to find it there already', async () => {
            const made = Path.join(dir, 'made');
            await mkdirIfMissing(made);
            await mkdirIfMissing(made);

            const stats = await Fs.stat(made);
            expect(stats.isDirectory()).to.be.true();
            expect(stats.mode & 0o077).to.equal(0);
        });

        it('fails when the parent is missing', async () => {
            const err = await failureOf(mkdirIfMissing(Path.join(dir, 'no-parent', 'child')));

            expect((err as NodeJS.ErrnoException).code).to.equal('ENOENT');
        });
    });

    describe('readDirectory()', () => {

        it('lists the entries with their types', async () => {
            const listed = Path.join(dir, 'listed');
            await Fs.mkdir(listed);
            await Fs.writeFile(Path.join(listed, 'a-file'), 'x');
            await Fs.mkdir(Path.join(listed, 'b-dir'));

            const entries = (await readDirectory(listed)).sort((a, b) => a.name.localeCompare(b.name));
            expect(entries.map((e) => [e.name, e.isFile(), e.isDirectory()])).to.equal([['a-file', true, false], ['b-dir', false, true]]);
        });

        it('lists nothing for a directory that does not exist', async () => {
            expect(await readDirectory(Path.join(dir, 'never-made'))).to.equal([]);
        });

        it('lists nothing for a path that is a file (ENOTDIR counts as absent)', async () => {
            const file = Path.join(dir, 'readdir-file');
            await Fs.writeFile(file, 'x');
            expect(await readDirectory(file)).to.equal([]);
        });
    });

    describe('removeStaleTempFiles()', () => {

        it('removes the entries older than the cutoff and keeps the younger ones', async () => {
            const temp = Path.join(dir, 'temp');
            await Fs.mkdir(temp);
            const old = Path.join(temp, 'old');
            const young = Path.join(temp, 'young');
            await Fs.writeFile(old, 'x');
            await Fs.writeFile(young, 'x');
            const cutoff = Date.now() - 60_000;
            await Fs.utimes(old, new Date(cutoff - 1000), new Date(cutoff - 1000));

            await removeStaleTempFiles(temp, cutoff);

            expect(await Fs.readdir(temp)).to.equal(['young']);
        });

        it('does nothing when the temp directory does not exist', async () => {
            await removeStaleTempFiles(Path.join(dir, 'no-temp'), Date.now());
            await expect(Fs.access(Path.join(dir, 'no-temp'))).to.reject();
        });
    });
});
