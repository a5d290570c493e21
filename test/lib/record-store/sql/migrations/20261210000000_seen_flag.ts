import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { rm } from 'node:fs/promises';
import { down, up } from '../../../../../lib/record-store/sql/migrations/20261210000000_seen_flag';
import type { RecordStore } from '../../../../../lib/record-store/record-store';
import { parseSearchQuery } from '../../../../../lib/search/parse-query';
import { draft } from '../../../../helpers/email-draft';
import { migratedStores } from '../../../../helpers/migrated-stores';
import { startPostgres, type PostgresServer } from '../../../../helpers/postgres';
import { tempDir } from '../../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** The subjects of `inbox`'s emails matching `q`, sorted. */
async function matching(store: RecordStore, inbox: string, q: string): Promise<string[]> {
    const page = await store.listEmails({ inbox, limit: 10, q: parseSearchQuery(q) });
    return page.records.map((r) => r.subject).sort();
}

describe('migrations/20261210000000_seen_flag', () => {
    let postgres: PostgresServer;
    let dir: string;

    before(async () => {
        postgres = await startPostgres();
        dir = await tempDir('seen-flag');
    });

    after(async () => {
        await postgres.stop();
        await rm(dir, { recursive: true, force: true });
    });

    for (const [name, open] of migratedStores(() => postgres, () => dir)) {
        describe(`on ${name}`, () => {

            it('a copy arrives unread; setSeen() marks it, keeps its place, and is:read / is:unread find it', { timeout: 60_000 }, async () => {
                const { store, close } = await open();
                try {
                    const { saved } = await store.saveEmails([draft('flags', 1, { subject: 'one' }), draft('flags', 2, { subject: 'two' }), draft('other', 3, { subject: 'three' })]);
                    const [one, two, three] = saved.map((s) => s.messageId);
                    expect(saved.map((s) => s.seen)).to.equal([false, false, false]);
                    const version = await store.inboxVersion('flags');

                    const marked = await store.setSeen(one!, true);
                    expect(marked!.seen).to.be.true();
                    expect(marked!.subject).to.equal('one');
                    expect((await store.getEmail(one!))!.seen).to.be.true();
                    expect((await store.getEmail(two!))!.seen).to.be.false();
                    expect(await store.inboxVersion('flags')).to.equal(version);

                    expect(await matching(store, 'flags', 'is:read')).to.equal(['one']);
                    expect(await matching(store, 'flags', 'is:unread')).to.equal(['two']);
                    expect(await matching(store, 'flags', '-is:unread')).to.equal(['one']);

                    // Back to unread; outside a prefix, or unknown: null and nothing changed.
                    expect((await store.setSeen(one!, false))!.seen).to.be.false();
                    expect(await matching(store, 'flags', 'is:unread')).to.equal(['one', 'two']);
                    expect(await store.setSeen(three!, true, { inboxPrefix: 'fl' })).to.be.null();
                    expect((await store.getEmail(three!))!.seen).to.be.false();
                    expect((await store.setSeen(three!, true, { inboxPrefix: 'oth' }))!.seen).to.be.true();
                    expect(await store.setSeen('nobody@x.test', true)).to.be.null();
                }
                finally {
                    await close();
                }
            });

            it('down() drops the column; up() adds it back, every stored copy unread', { timeout: 60_000 }, async () => {
                const { knex, store, close } = await open();
                try {
                    const { saved } = await store.saveEmails([draft('before', 1)]);
                    await store.setSeen(saved[0]!.messageId, true);
                    await down(knex);
                    expect(await knex('emails').columnInfo()).to.not.include('seen');
                    await up(knex);
                    expect(await knex('emails').columnInfo()).to.include('seen');
                    expect((await store.getEmail(saved[0]!.messageId))!.seen).to.be.false();
                }
                finally {
                    await close();
                }
            });
        });
    }
});
