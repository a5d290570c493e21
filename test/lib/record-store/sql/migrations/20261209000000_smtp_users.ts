import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { rm } from 'node:fs/promises';
import { down, up } from '../../../../../lib/record-store/sql/migrations/20261209000000_smtp_users';
import { migratedStores } from '../../../../helpers/migrated-stores';
import { startPostgres, type PostgresServer } from '../../../../helpers/postgres';
import { tempDir } from '../../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('migrations/20261209000000_smtp_users', () => {
    let postgres: PostgresServer;
    let dir: string;

    before(async () => {
        postgres = await startPostgres();
        dir = await tempDir('smtp-users');
    });

    after(async () => {
        await postgres.stop();
        await rm(dir, { recursive: true, force: true });
    });

    for (const [name, open] of migratedStores(() => postgres, () => dir)) {
        describe(`on ${name}`, () => {

            it('keeps SMTP users by name: one per name, found with their hash, listed oldest first without it, deleted for good', { timeout: 60_000 }, async () => {
                const { store, close } = await open();
                try {
                    const a = await store.createSmtpUser!('team-a', 'scrypt$hash-a', 'team-a-');
                    expect(a).to.include({ name: 'team-a', inboxPrefix: 'team-a-' });
                    expect(await store.createSmtpUser!('team-a', 'scrypt$other', 'team-z-')).to.be.null();
                    await store.createSmtpUser!('team-b', 'scrypt$hash-b', 'team-b-');

                    expect(await store.findSmtpUser!('team-a')).to.equal({ ...a!, passwordHash: 'scrypt$hash-a' });
                    expect(await store.findSmtpUser!('nobody')).to.be.null();
                    const listed = await store.listSmtpUsers!();
                    expect(listed.map((u) => u.name)).to.equal(['team-a', 'team-b']);
                    expect(JSON.stringify(listed)).to.not.contain('hash');

                    expect(await store.deleteSmtpUser!('team-a')).to.be.true();
                    expect(await store.deleteSmtpUser!('team-a')).to.be.false();
                    expect(await store.findSmtpUser!('team-a')).to.be.null();
                    // A deleted name may be given again.
                    expect(await store.createSmtpUser!('team-a', 'scrypt$new', 'team-a-')).to.not.be.null();
                }
                finally {
                    await close();
                }
            });

            it('down() drops the table; up() makes it again, empty', { timeout: 60_000 }, async () => {
                const { knex, store, close } = await open();
                try {
                    await store.createSmtpUser!('team-a', 'scrypt$hash-a', 'team-a-');
                    await down(knex);
                    expect(await knex.schema.hasTable('smtp_users')).to.be.false();
                    await up(knex);
                    expect(await knex.schema.hasTable('smtp_users')).to.be.true();
                    expect(await store.listSmtpUsers!()).to.equal([]);
                }
                finally {
                    await close();
                }
            });
        });
    }
});
