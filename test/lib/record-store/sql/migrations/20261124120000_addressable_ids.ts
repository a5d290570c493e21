import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { rm } from 'node:fs/promises';
import { up } from '../../../../../lib/record-store/sql/migrations/20261124120000_addressable_ids';
import { MAX_ID_DERIVATIONS } from '../../../../../lib/record-store/sql/migrations/reassign-message-id';
import { draft } from '../../../../helpers/email-draft';
import { migratedStores, storedUnder } from '../../../../helpers/migrated-stores';
import { startPostgres, type PostgresServer } from '../../../../helpers/postgres';
import { tempDir } from '../../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('migrations/20261124120000_addressable_ids', () => {
    let postgres: PostgresServer;
    let dir: string;

    before(async () => {
        postgres = await startPostgres();
        dir = await tempDir('addressable-ids');
    });

    after(async () => {
        await postgres.stop();
        await rm(dir, { recursive: true, force: true });
    });

    const backends = migratedStores(() => postgres, () => dir);

    for (const [name, open] of backends) {
        describe(`up() on ${name}`, () => {

            it('gives emails stored as . and .. the id ingest gives them now, and leaves the others', async () => {
                const { knex, store, close } = await open();
                try {
                    await storedUnder(knex, store, 'dots', '.', 1);
                    await storedUnder(knex, store, 'other', '..', 2);
                    const { saved } = await store.saveEmails([draft('dots', 3, { sourceId: './x' })]);

                    await up(knex);

                    expect(await store.getEmail('.')).to.be.null();
                    expect(await store.getEmail('..')).to.be.null();
                    expect((await store.getEmail('.~dots'))!.sourceId).to.equal('.');
                    expect((await store.getEmail('..~other'))!.sourceId).to.equal('..');
                    expect(await store.getEmail('./x')).to.equal(saved[0]!);

                    // Re-delivered, the message replaces the migrated copy and keeps its id.
                    const again = await store.saveEmails([draft('dots', 4, { sourceId: '.' })]);
                    expect(again.saved[0]!.messageId).to.equal('.~dots');
                    expect(again.replaced.map((r) => r.messageId)).to.equal(['.~dots']);

                    await up(knex);
                    expect((await store.listEmails({ inbox: 'dots', limit: 10 })).records.map((r) => r.messageId).sort()).to.equal(['./x', '.~dots']);
                }
                finally {
                    await close();
                }
            });

            it('derives again while the derived id is held, as ingest does', async () => {
                const { knex, store, close } = await open();
                try {
                    await store.saveEmails([draft('held', 1, { sourceId: '.~dots' })]);
                    await storedUnder(knex, store, 'dots', '.', 2);

                    await up(knex);

                    expect((await store.getEmail('.~dots'))!.inbox).to.equal('held');
                    expect((await store.getEmail('.~dots~dots'))!.sourceId).to.equal('.');
                }
                finally {
                    await close();
                }
            });

            it(`fails after ${MAX_ID_DERIVATIONS} derivations all held`, async () => {
                const { knex, store, close } = await open();
                try {
                    let id = '.';
                    for (let i = 0; i <= MAX_ID_DERIVATIONS; i++) {
                        id = `${id}~dots`;
                        await store.saveEmails([draft('held', 10 + i, { sourceId: id })]);
                    }

                    await storedUnder(knex, store, 'dots', '.', 2);
                    await expect(up(knex)).to.reject(/No free message id/);
                }
                finally {
                    await close();
                }
            });
        });
    }
});
