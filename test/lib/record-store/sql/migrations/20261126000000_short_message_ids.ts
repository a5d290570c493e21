import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { rm } from 'node:fs/promises';
import { MAX_MESSAGE_ID_BYTES, sha256Hex } from '../../../../../lib/identity/ids';
import { up } from '../../../../../lib/record-store/sql/migrations/20261126000000_short_message_ids';
import { draft } from '../../../../helpers/email-draft';
import { migratedStores, storedUnder } from '../../../../helpers/migrated-stores';
import { startPostgres, type PostgresServer } from '../../../../helpers/postgres';
import { tempDir } from '../../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('migrations/20261126000000_short_message_ids', () => {
    let postgres: PostgresServer;
    let dir: string;

    before(async () => {
        postgres = await startPostgres();
        dir = await tempDir('short-message-ids');
    });

    after(async () => {
        await postgres.stop();
        await rm(dir, { recursive: true, force: true });
    });

    const backends = migratedStores(() => postgres, () => dir);

    for (const [name, open] of backends) {
        describe(`up() on ${name}`, () => {

            it('gives every email stored under an id over the limit its digest id, in batches, and leaves the others', async () => {
                const { knex, store, close } = await open();
                try {
                    const long = 'm'.repeat(10_000);
                    const cjk = '日'.repeat(2000);
                    const atLimit = '😀'.repeat(MAX_MESSAGE_ID_BYTES / 4);
                    await storedUnder(knex, store, 'box', long, 1);
                    await storedUnder(knex, store, 'box', cjk, 2);
                    await storedUnder(knex, store, 'box', atLimit, 3);
                    // More overlong rows than one batch reads, after the others.
                    const many = Array.from({ length: 501 }, (_, i) => `${i}-${'x'.repeat(MAX_MESSAGE_ID_BYTES)}`);
                    for (const [i, id] of many.entries()) {
                        await storedUnder(knex, store, 'many', id, 10 + i);
                    }

                    await up(knex);

                    expect(await store.getEmail(long)).to.be.null();
                    expect((await store.getEmail(`${sha256Hex(long)}@inbox-capture`))!.sourceId).to.equal(long);
                    expect((await store.getEmail(`${sha256Hex(cjk)}@inbox-capture`))!.sourceId).to.equal(cjk);
                    expect((await store.getEmail(atLimit))!.sourceId).to.equal(atLimit);
                    const listed = (await store.listEmails({ inbox: 'many', limit: 1000 })).records.map((r) => r.messageId).sort();
                    expect(listed).to.equal(many.map((id) => `${sha256Hex(id)}@inbox-capture`).sort());

                    // Re-delivered, the message replaces the migrated copy and keeps its id.
                    const again = await store.saveEmails([draft('box', 4, { sourceId: long })]);
                    expect(again.replaced.map((r) => r.messageId)).to.equal([`${sha256Hex(long)}@inbox-capture`]);
                    expect(again.saved[0]!.messageId).to.equal(`${sha256Hex(long)}@inbox-capture`);
                }
                finally {
                    await close();
                }
            });

            it('derives again while the digest id is held', async () => {
                const { knex, store, close } = await open();
                try {
                    const long = 'l'.repeat(1000);
                    const digest = `${sha256Hex(long)}@inbox-capture`;
                    await store.saveEmails([draft('held', 1, { sourceId: digest })]);
                    await storedUnder(knex, store, 'box', long, 2);

                    await up(knex);

                    expect((await store.getEmail(digest))!.inbox).to.equal('held');
                    expect((await store.getEmail(`${digest}~box`))!.sourceId).to.equal(long);
                }
                finally {
                    await close();
                }
            });
        });
    }
});
