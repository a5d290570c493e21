import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { rm } from 'node:fs/promises';
import { down, up } from '../../../../../lib/record-store/sql/migrations/20261208000000_smtp_client_auth_check';
import { draft } from '../../../../helpers/email-draft';
import { migratedStores } from '../../../../helpers/migrated-stores';
import { startPostgres, type PostgresServer } from '../../../../helpers/postgres';
import { tempDir } from '../../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const COLUMNS = ['client_address', 'client_helo', 'mail_from', 'auth_check'];

describe('migrations/20261208000000_smtp_client_auth_check', () => {
    let postgres: PostgresServer;
    let dir: string;

    before(async () => {
        postgres = await startPostgres();
        dir = await tempDir('smtp-client-auth-check');
    });

    after(async () => {
        await postgres.stop();
        await rm(dir, { recursive: true, force: true });
    });

    for (const [name, open] of migratedStores(() => postgres, () => dir)) {
        describe(`on ${name}`, () => {

            it('keeps the SMTP session\'s parts with a copy, and the first authentication check kept stays', { timeout: 60_000 }, async () => {
                const { store, close } = await open();
                try {
                    const { saved } = await store.saveEmails([draft('kept', 1, { smtpClient: { address: '192.0.2.7', helo: 'mx.sender.test', mailFrom: 'b\u0000@sender.test' } }), draft('kept', 2)]);
                    const [withClient, without] = saved.map((s) => s.messageId);
                    // NUL cleaned as in every other text: Postgres stores none.
                    expect((await store.getEmail(withClient!))!.smtpClient).to.equal({ address: '192.0.2.7', helo: 'mx.sender.test', mailFrom: 'b@sender.test' });
                    expect(await store.getEmail(without!)).to.not.include('smtpClient');

                    expect(await store.keptAuthCheck!(withClient!)).to.be.null();
                    expect(await store.keepAuthCheck!(withClient!, '{"first":true}')).to.equal('{"first":true}');
                    expect(await store.keepAuthCheck!(withClient!, '{"second":true}')).to.equal('{"first":true}');
                    expect(await store.keptAuthCheck!(withClient!)).to.equal('{"first":true}');
                    expect(await store.keepAuthCheck!('nobody@x.test', '{}')).to.be.null();
                    expect(await store.keptAuthCheck!(without!)).to.be.null();
                }
                finally {
                    await close();
                }
            });

            it('down() drops the four columns; up() adds them back, NULL in the rows stored before', { timeout: 60_000 }, async () => {
                const { knex, store, close } = await open();
                try {
                    const { saved } = await store.saveEmails([draft('before', 1, { smtpClient: { address: '192.0.2.7', helo: null, mailFrom: null } })]);
                    await store.keepAuthCheck!(saved[0]!.messageId, '{}');
                    await down(knex);
                    const info = await knex('emails').columnInfo();
                    expect(COLUMNS.filter((c) => c in info)).to.equal([]);
                    await up(knex);
                    const back = await knex('emails').columnInfo();
                    expect(COLUMNS.filter((c) => c in back)).to.equal(COLUMNS);
                    const record = await store.getEmail(saved[0]!.messageId);
                    expect(record).to.not.include('smtpClient');
                    expect(await store.keptAuthCheck!(saved[0]!.messageId)).to.be.null();
                }
                finally {
                    await close();
                }
            });
        });
    }
});
