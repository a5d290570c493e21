import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createSqliteBlobStore } from '../../../lib/blob-store/sqlite-blob-store';
import { openSqliteKnex } from '../../../lib/sqlite/knex';
import { createPrivateDatabaseFile } from '../../../lib/util/private-file';
import { removeDir, tempDir } from '../../helpers/temp-dir';
import { withUmask } from '../../helpers/umask';

const { expect } = Code;
const { describe, it, beforeEach, afterEach } = exports.lab = Lab.script();

async function modeOf(path: string): Promise<number> {
    return (await Fs.stat(path)).mode & 0o777;
}

describe('util/private-file', () => {

    let dir: string;

    beforeEach(async () => {
        dir = await tempDir('private-file');
        // A directory someone else made, readable by everyone.
        await Fs.chmod(dir, 0o755);
    });

    afterEach(async () => {
        await removeDir(dir);
    });

    describe('createPrivateDatabaseFile()', () => {

        it('creates an empty file of mode 0600 whatever the umask, and missing directories 0700', async () => {
            const file = Path.join(dir, 'db.sqlite');
            // 0277 would leave a plain open() with 0600 at 0400: unwritable.
            withUmask(0o277, () => createPrivateDatabaseFile(file));
            expect(await modeOf(file)).to.equal(0o600);
            expect((await Fs.stat(file)).size).to.equal(0);

            const nested = Path.join(dir, 'a', 'b', 'db.sqlite');
            withUmask(0o022, () => createPrivateDatabaseFile(nested));
            expect(await modeOf(nested)).to.equal(0o600);
            expect(await modeOf(Path.join(dir, 'a'))).to.equal(0o700);
            expect(await modeOf(Path.join(dir, 'a', 'b'))).to.equal(0o700);
        });

        it('leaves an existing file, its content and its mode alone', async () => {
            const file = Path.join(dir, 'db.sqlite');
            await Fs.writeFile(file, 'kept', { mode: 0o640 });
            await Fs.chmod(file, 0o640);
            createPrivateDatabaseFile(file);
            expect(await modeOf(file)).to.equal(0o640);
            expect(await Fs.readFile(file, 'utf8')).to.equal('kept');
        });

        it('throws when the file cannot be created', async () => {
            await Fs.writeFile(Path.join(dir, 'not-a-dir'), '');
            expect(() => createPrivateDatabaseFile(Path.join(dir, 'not-a-dir', 'db.sqlite'))).to.throw();
        });
    });

    describe('in use', () => {

        it('keeps the database, -wal and -shm of openSqliteKnex() at 0600 under umask 022', async () => {
            const file = Path.join(dir, 'records.sqlite');
            const knex = withUmask(0o022, () => openSqliteKnex(file));
            try {
                await knex.schema.createTable('t', (t) => t.increments('id'));
                await knex('t').insert({});
                for (const name of ['records.sqlite', 'records.sqlite-wal', 'records.sqlite-shm']) {
                    expect(await modeOf(Path.join(dir, name)), name).to.equal(0o600);
                }
            }
            finally {
                await knex.destroy();
            }
        });

        it('keeps the file of a SQLite blob store, its -wal and -shm at 0600 under umask 022', async () => {
            const file = Path.join(dir, 'blobs.sqlite');
            const store = createSqliteBlobStore({ filename: file });
            const previous = process.umask(0o022);
            try {
                await store.put('a/b', Buffer.from('content'), 'text/plain');
                for (const name of ['blobs.sqlite', 'blobs.sqlite-wal', 'blobs.sqlite-shm']) {
                    expect(await modeOf(Path.join(dir, name)), name).to.equal(0o600);
                }
            }
            finally {
                process.umask(previous);
                await store.close();
            }
        });
    });
});
