import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Knex } from 'knex';
import type { StagedBlob } from '../../../../lib/blob-store/blob-store';
import { createKnexRecordStore } from '../../../../lib/record-store/knex-record-store';
import { openSqliteBatchWriter } from '../../../../lib/record-store/sqlite/sqlite-batch-writer';
import type { RecordStore, SaveResult } from '../../../../lib/record-store/record-store';
import { openSqliteKnex } from '../../../../lib/sqlite/knex';
import { TEXT_PIECE_CHARS } from '../../../../lib/record-store/sqlite/text-pieces';
import { MAX_TAIL_CHARS } from '../../../../lib/record-store/sqlite/sql-literals';
import { deriveMessageId, sha256Hex } from '../../../../lib/identity/ids';
import { draft } from '../../../helpers/email-draft';
import { tempDir } from '../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

interface Opened {
    knex: Knex;
    store: RecordStore;
    commits: number[];
    /** Per commit: the node-sqlite3 calls from BEGIN to COMMIT. */
    calls: (number | undefined)[];
    errors: unknown[];
}

async function open(dir: string, file: string): Promise<Opened> {
    const knex = openSqliteKnex(join(dir, file));
    const commits: number[] = [];
    const calls: (number | undefined)[] = [];
    const errors: unknown[] = [];
    const store = createKnexRecordStore({ knex, destroyKnexOnClose: true, observeBatchWriter: { commit: (n, c) => {
        commits.push(n);
        calls.push(c);
    }, error: (err) => errors.push(err) } });
    await store.migrate();
    return { knex, store, commits, calls, errors };
}

function staged(store: RecordStore, key: string, content: string): StagedBlob {
    return { target: store.stagedBlobTarget!, key, content: Buffer.from(content), contentType: 'text/plain' };
}

describe('sqlite-batch-writer', () => {
    let dir: string;

    before(async () => {
        dir = await tempDir('batch-writer');
    });

    after(async () => {
        await rm(dir, { recursive: true, force: true });
    });

    describe('openSqliteBatchWriter() through saveEmails()', () => {

        it('commits the records, their blob links and 100 staged blobs in one transaction, and closes cleanly', async () => {
            const { knex, store, commits, errors } = await open(dir, 'many.sqlite');
            try {
                const drafts = Array.from({ length: 100 }, (_, i) => draft(`many-${i}`, i, { sourceId: 'shared@x' }));
                const blobs = drafts.map((d) => staged(store, d.rawKey, `raw of ${d.inbox}`));
                const { saved } = await store.saveEmails(drafts, { blobs });
                expect(commits).to.equal([1]);
                expect(errors).to.equal([]);
                expect(saved).to.have.length(100);

                const rows = await knex('blobs').select('key', 'content', 'size', 'content_type') as { key: string; content: Buffer; size: number; content_type: string }[];
                expect(rows).to.have.length(100);
                const first = rows.find((r) => r.key === drafts[0]!.rawKey)!;
                expect(first.content.toString()).to.equal('raw of many-0');
                expect(first.size).to.equal(Buffer.byteLength('raw of many-0'));
                expect(first.content_type).to.equal('text/plain');
                expect((await store.referencedBlobKeys(drafts.map((d) => d.rawKey))).size).to.equal(100);
            }
            finally {
                await store.close();
            }
        });

        it('replaces a stored copy: its row and links go, the new one takes its id', async () => {
            const { knex, store } = await open(dir, 'replace.sqlite');
            try {
                const first = draft('again', 1, { sourceId: 'again@x', rawKey: 'k1/raw.eml' });
                const second = draft('again', 2, { sourceId: 'again@x', rawKey: 'k2/raw.eml' });
                const [one] = (await store.saveEmails([first])).saved;
                const result = await store.saveEmails([second]);
                expect(result.saved[0]!.messageId).to.equal(one!.messageId);
                expect(result.replaced.map((r) => r.rawKey)).to.equal(['k1/raw.eml']);
                // Nothing of k1 was staged in this database: the caller still has it to delete.
                expect(result.removedBlobKeys).to.not.exist();
                expect(await knex('email_blobs').pluck('blob_key')).to.equal(['k2/raw.eml']);
                expect(await knex('emails').count({ n: '*' })).to.equal([{ n: 1 }]);
            }
            finally {
                await store.close();
            }
        });

        it('deletes the replaced copy\'s staged blobs in the commit that replaces it (a kill after it leaves no orphan)', async () => {
            const { knex, store, commits } = await open(dir, 'replace-blobs.sqlite');
            try {
                const first = draft('swap', 1, { sourceId: 'swap@x', rawKey: 's1/raw.eml' });
                const second = draft('swap', 2, { sourceId: 'swap@x', rawKey: 's2/raw.eml' });
                await store.saveEmails([first], { blobs: [staged(store, 's1/raw.eml', 'one'), staged(store, 'other/raw.eml', 'kept')] });
                const result = await store.saveEmails([second], { blobs: [staged(store, 's2/raw.eml', 'two')] });
                expect(commits).to.equal([1, 1]);
                // Said, so that the ingest does not delete them a second time.
                expect(result.removedBlobKeys).to.equal(['s1/raw.eml']);
                expect((await knex('blobs').pluck('key')).sort()).to.equal(['other/raw.eml', 's2/raw.eml']);
            }
            finally {
                await store.close();
            }
        });

        it('deletes the replaced copy\'s staged blobs on the isolating path too (a batch with a failing delivery)', async () => {
            const { knex, store, errors } = await open(dir, 'replace-isolated.sqlite');
            try {
                await knex.raw(`CREATE TRIGGER refuse_bad BEFORE INSERT ON emails WHEN NEW.inbox = 'bad' BEGIN SELECT RAISE(ABORT, 'bad inbox'); END`);
                const first = draft('swap', 1, { sourceId: 'swap@x', rawKey: 'i1/raw.eml' });
                await store.saveEmails([first], { blobs: [staged(store, 'i1/raw.eml', 'one')] });
                const second = draft('swap', 2, { sourceId: 'swap@x', rawKey: 'i2/raw.eml' });
                const bad = draft('bad', 3);
                const [ok, failed] = await Promise.allSettled([
                    store.saveEmails([second], { blobs: [staged(store, 'i2/raw.eml', 'two')] }),
                    store.saveEmails([bad], { blobs: [staged(store, bad.rawKey, 'bad')] })
                ]);
                expect(ok.status).to.equal('fulfilled');
                expect((ok as PromiseFulfilledResult<SaveResult>).value.removedBlobKeys).to.equal(['i1/raw.eml']);
                expect(failed.status).to.equal('rejected');
                expect(errors).to.have.length(1);
                expect(await knex('blobs').pluck('key')).to.equal(['i2/raw.eml']);
            }
            finally {
                await store.close();
            }
        });

        it('keeps a replaced copy\'s staged blobs while another copy of its delivery references them, and deletes them with the last', async () => {
            const { knex, store } = await open(dir, 'replace-shared.sqlite');
            try {
                // One delivery to two inboxes: both copies reference the blobs staged once.
                const shared = { sourceId: 'shared@x', rawKey: 'p1/raw.eml', attachments: [{ filename: '0-a.txt', contentType: 'text/plain', size: 1, blobKey: 'p1/att/0' }] };
                await store.saveEmails([draft('a', 1, shared), draft('b', 1, shared)], { blobs: [staged(store, 'p1/raw.eml', 'raw'), staged(store, 'p1/att/0', 'a')] });
                expect((await knex('blobs').pluck('key')).sort()).to.equal(['p1/att/0', 'p1/raw.eml']);

                // The same message again for a: b's copy still uses p1.
                const again = await store.saveEmails([draft('a', 2, { sourceId: 'shared@x', rawKey: 'p2/raw.eml' })], { blobs: [staged(store, 'p2/raw.eml', 'raw 2')] });
                expect(again.replaced.map((r) => r.rawKey)).to.equal(['p1/raw.eml']);
                expect(again.removedBlobKeys).to.not.exist();
                expect((await knex('blobs').pluck('key')).sort()).to.equal(['p1/att/0', 'p1/raw.eml', 'p2/raw.eml']);

                // And for b: no record references p1 any more, so it goes in that commit.
                const last = await store.saveEmails([draft('b', 3, { sourceId: 'shared@x', rawKey: 'p3/raw.eml' })], { blobs: [staged(store, 'p3/raw.eml', 'raw 3')] });
                expect(last.removedBlobKeys!.sort()).to.equal(['p1/att/0', 'p1/raw.eml']);
                expect((await knex('blobs').pluck('key')).sort()).to.equal(['p2/raw.eml', 'p3/raw.eml']);
            }
            finally {
                await store.close();
            }
        });

        it('keeps shared staged blobs on the isolating path too (a batch with a failing delivery)', async () => {
            const { knex, store } = await open(dir, 'replace-shared-isolated.sqlite');
            try {
                await knex.raw(`CREATE TRIGGER refuse_bad BEFORE INSERT ON emails WHEN NEW.inbox = 'bad' BEGIN SELECT RAISE(ABORT, 'bad inbox'); END`);
                const shared = { sourceId: 'iso@x', rawKey: 'q1/raw.eml' };
                await store.saveEmails([draft('a', 1, shared), draft('b', 1, shared)], { blobs: [staged(store, 'q1/raw.eml', 'raw')] });
                const bad = draft('bad', 3);
                const [ok, failed] = await Promise.allSettled([
                    store.saveEmails([draft('a', 2, { sourceId: 'iso@x', rawKey: 'q2/raw.eml' })], { blobs: [staged(store, 'q2/raw.eml', 'two')] }),
                    store.saveEmails([bad], { blobs: [staged(store, bad.rawKey, 'bad')] })
                ]);
                expect(ok.status).to.equal('fulfilled');
                expect((ok as PromiseFulfilledResult<SaveResult>).value.removedBlobKeys).to.not.exist();
                expect(failed.status).to.equal('rejected');
                expect((await knex('blobs').pluck('key')).sort()).to.equal(['q1/raw.eml', 'q2/raw.eml']);
            }
            finally {
                await store.close();
            }
        });

        it('sends a small batch of new mail in one call, its values read back unchanged', async () => {
            const { knex, store } = await open(dir, 'tail.sqlite');
            const calls: (number | undefined)[] = [];
            const writer = openSqliteBatchWriter(join(dir, 'tail.sqlite'), { commit: (_, n) => calls.push(n) });
            try {
                const attachments = [{ filename: "O'Brien's ''plan''.txt", contentType: 'text/plain', size: 3, blobKey: 'att/o-brien' }];
                const sent = draft('tail', 1, { subject: 'it\'s \'\' quoted — ünïcode 🎉', body: 'O\'Brien\'s body\nsecond line \\ end', attachments, links: [{ href: "https://x.test/?a='1'", text: "it's" }], codes: ['123456'] });
                const raw = Buffer.from([0x00, 0x27, 0xff, 0x5c, 0x0a, 0x27, 0x27]);
                const [result] = await writer.save([[sent]], [{ ...staged(store, sent.rawKey, ''), content: raw, contentType: 'text/plain; name=\'a\'' }]);
                expect(calls).to.equal([1]);

                const record = (await store.getEmail(result!.saved[0]!.messageId))!;
                expect(record).to.equal(result!.saved[0]!);
                expect(record.subject).to.equal(sent.subject);
                expect(record.body).to.equal(sent.body);
                expect(record.attachments).to.equal(attachments);
                expect(record.links).to.equal(sent.links);
                const [blob] = await knex('blobs').select('content', 'size', 'content_type').where('key', sent.rawKey) as { content: Buffer; size: number; content_type: string }[];
                expect(blob!.content.equals(raw)).to.be.true();
                expect(blob!.size).to.equal(raw.length);
                expect(blob!.content_type).to.equal('text/plain; name=\'a\'');
                expect((await knex('email_blobs').pluck('blob_key')).sort()).to.equal(['att/o-brien', sent.rawKey].sort());
                // Indexed in the same commit: a search finds it.
                const found = await store.listEmails({ inbox: 'tail', limit: 10, q: [{ negated: false, field: 'body', text: 'Brien\'s bo' }] });
                expect(found.records.map((r) => r.messageId)).to.equal([record.messageId]);

                // Past the bound on the text of one call, the values are bound to the prepared statements again.
                const large = draft('tail', 2);
                const content = Buffer.alloc(MAX_TAIL_CHARS, 0x27);
                await writer.save([[large]], [{ ...staged(store, large.rawKey, ''), content }]);
                expect(calls).to.equal([1, 7]);
                const [stored] = await knex('blobs').select('content').where('key', large.rawKey) as { content: Buffer }[];
                expect(stored!.content.equals(content)).to.be.true();
            }
            finally {
                await writer.close();
                await store.close();
            }
        });

        it('writes sixteen 10 KB deliveries saved at once in one call, read back exactly', async () => {
            const { knex, store, commits, calls } = await open(dir, 'ahead.sqlite');
            try {
                const paragraph = (n: number) => `Paragraph ${n}: Grüße – “quoted” € 🎉 O'Brien's ''plan'' \\ naïve.\n`;
                const sent = Array.from({ length: 16 }, (_, i) => {
                    const body = Array.from({ length: 60 }, (_, p) => paragraph(i * 100 + p)).join('');
                    return draft('ahead', i, { subject: `Ünïcode 🎉 “${i}”`, body, htmlBody: `<p>${body.replaceAll('\n', '<br>')}</p>`, attachments: [{ filename: `O'Brien ${i}.txt`, contentType: 'text/plain', size: 3, blobKey: `att/${i}` }] });
                });
                // Raw bytes: UTF-8 (written as text), and one with a NUL and bytes that are no UTF-8 (hex).
                const raws = sent.map((d, i) => i === 3 ? Buffer.from([0x00, 0xff, 0x27, 0x0a]) : Buffer.from(`Subject: ${d.subject}\r\n\r\n${d.body}`));
                const results = await Promise.all(sent.map((d, i) => store.saveEmails([d], { blobs: [{ target: store.stagedBlobTarget!, key: d.rawKey, content: raws[i]!, contentType: 'message/rfc822' }] })));
                expect(commits).to.equal([16]);
                expect(calls).to.equal([1]);

                for (const [i, result] of results.entries()) {
                    const record = (await store.getEmail(result.saved[0]!.messageId))!;
                    expect(record).to.equal(result.saved[0]!);
                    expect(record.body).to.equal(sent[i]!.body);
                    expect(record.htmlBody).to.equal(sent[i]!.htmlBody);
                    expect(record.subject).to.equal(sent[i]!.subject);
                    expect(record.attachments).to.equal(sent[i]!.attachments);
                    const [blob] = await knex('blobs').select('content', 'size').where('key', sent[i]!.rawKey) as { content: Buffer; size: number }[];
                    expect(blob!.content.equals(raws[i]!), `raw ${i}`).to.be.true();
                    expect(blob!.size).to.equal(raws[i]!.length);
                }

                const found = await store.listEmails({ inbox: 'ahead', limit: 20, q: [{ negated: false, field: 'body', text: 'paragraph 1507: grüße – “quoted”' }] });
                expect(found.records.map((r) => r.messageId)).to.equal([results[15]!.saved[0]!.messageId]);
            }
            finally {
                await store.close();
            }
        });

        it('writes the copies of one 10 KB delivery in one call, each with its own inbox and recipient', async () => {
            const { store, calls } = await open(dir, 'copies.sqlite');
            try {
                const body = 'Shared “body” of O\'Brien — '.repeat(400);
                const sourceId = 'copies@x';
                const copies = ['one', 'two', 'three'].map((inbox, i) => draft(inbox, i, { sourceId, body, htmlBody: `<p>${body}</p>`, recipient: `${inbox}@example.test`, rawKey: 'shared/raw.eml' }));
                const { saved } = await store.saveEmails(copies);
                expect(calls).to.equal([1]);
                for (const [i, copy] of copies.entries()) {
                    const record = (await store.getEmail(saved[i]!.messageId))!;
                    expect(record.inbox).to.equal(copy.inbox);
                    expect(record.recipient).to.equal(copy.recipient);
                    expect(record.body).to.equal(body);
                    expect(record.htmlBody).to.equal(copy.htmlBody);
                    const found = await store.listEmails({ inbox: copy.inbox, limit: 10, q: [{ negated: false, field: 'body', text: 'o\'brien — shared' }] });
                    expect(found.records.map((r) => r.messageId)).to.equal([record.messageId]);
                }
            }
            finally {
                await store.close();
            }
        });

        it('binds a batch too large for one SQL text to the prepared statements: texts beyond Latin-1 and astral characters read back unchanged', async () => {
            const { store } = await open(dir, 'utf8.sqlite');
            const calls: (number | undefined)[] = [];
            const writer = openSqliteBatchWriter(join(dir, 'utf8.sqlite'), { commit: (_, n) => calls.push(n) });
            try {
                const line = 'Grüße – “quoted” € 🎉 naïve \\ \' "x" ->> 0\n';
                const body = line.repeat(Math.ceil(MAX_TAIL_CHARS / line.length) + 1);
                const sent = [draft('utf8', 1, { body, subject: 'Ünïcode 🎉 “subject”' }), draft('utf8', 2, { body: 'short “one”', sender: 'Zoë <z@x>' })];
                const results = await writer.save([[sent[0]!], [sent[1]!]], []);
                // Not the one-call text: the prepared statements, each a call.
                expect(calls).to.have.length(1);
                expect(calls[0]!).to.be.above(1);
                for (const [i, result] of results.entries()) {
                    const read = (await store.getEmail(result.saved[0]!.messageId))!;
                    expect(read.body).to.equal(sent[i]!.body);
                    expect(read.subject).to.equal(sent[i]!.subject);
                    expect(read.sender).to.equal(sent[i]!.sender);
                }

                const found = await store.listEmails({ inbox: 'utf8', limit: 10, q: [{ negated: false, field: 'body', text: '“quoted” € 🎉' }] });
                expect(found.records).to.have.length(1);
            }
            finally {
                await writer.close();
                await store.close();
            }
        });

        it('looks a batch planned as new mail up inside its transaction when another connection stored a copy it replaces before its BEGIN', async () => {
            const { knex, store } = await open(dir, 'guard.sqlite');
            const file = join(dir, 'guard.sqlite');
            const other = openSqliteBatchWriter(file);
            const sent = draft('guard', 1, { sourceId: 'guard@x' });
            const calls: (number | undefined)[] = [];
            let meanwhile: SaveResult[] | undefined;
            // The same message (same bytes) stored in the same inbox by another connection just before BEGIN.
            const writer = openSqliteBatchWriter(file, {
                commit: (_, n) => calls.push(n),
                beforeBegin: async () => {
                    meanwhile ??= await other.save([[draft('guard', 2, { sourceId: 'guard@x', rawKey: 'k-other' })]], []);
                }
            });
            try {
                const [result] = await writer.save([[sent]], []);
                // The guessed plan (a plain insert) would break the (inbox, source) key: its check refused
                // it, and the batch replaced the copy committed meanwhile instead.
                expect(result!.replaced.map((r) => r.messageId)).to.equal([meanwhile![0]!.saved[0]!.messageId]);
                expect(await knex('emails').where('inbox', 'guard').pluck('raw_key')).to.equal([sent.rawKey]);
                // The refused guess; then BEGIN, the lookup, the writes of a replacement (six) and the COMMIT.
                expect(calls).to.equal([1 + 9]);

                // New mail again: the guess holds.
                await writer.save([[draft('guard', 3)]], []);
                expect(calls).to.equal([10, 1]);

                // The same Message-ID for another inbox: its first-choice id is held, so the check refuses the guess and the copy gets another id.
                const [elsewhere] = await writer.save([[draft('guard-other', 4, { sourceId: 'guard@x' })]], []);
                expect(calls[2]!).to.be.greaterThan(1);
                expect(elsewhere!.saved[0]!.messageId).to.not.equal(result!.saved[0]!.messageId);
                expect(await knex('emails').where('source_id', 'guard@x').count({ n: '*' })).to.equal([{ n: 2 }]);
            }
            finally {
                await writer.close();
                await other.close();
                await store.close();
            }
        });

        it('keeps the blobs of a copy superseded in its own batch when another copy of that delivery uses them', async () => {
            const { knex, store } = await open(dir, 'superseded.sqlite');
            const writer = openSqliteBatchWriter(join(dir, 'superseded.sqlite'));
            try {
                // Delivery 1 to a and b, then delivery 2 of the same message to a, in one transaction.
                const first = { sourceId: 'batch@x', rawKey: 'r1/raw.eml' };
                const [one, two] = await writer.save(
                    [[draft('a', 1, first), draft('b', 1, first)], [draft('a', 2, { sourceId: 'batch@x', rawKey: 'r2/raw.eml' })]],
                    [staged(store, 'r1/raw.eml', 'one'), staged(store, 'r2/raw.eml', 'two')]);
                expect(one!.saved).to.have.length(2);
                expect(two!.replaced.map((r) => r.inbox)).to.equal(['a']);
                expect(two!.removedBlobKeys).to.not.exist();
                expect((await knex('blobs').pluck('key')).sort()).to.equal(['r1/raw.eml', 'r2/raw.eml']);
                expect([...await store.referencedBlobKeys(['r1/raw.eml', 'r2/raw.eml'])].sort()).to.equal(['r1/raw.eml', 'r2/raw.eml']);

                // Superseded with no other copy: its staged blob is deleted in the same commit, and said so.
                const [, lone] = await writer.save(
                    [[draft('c', 3, { sourceId: 'lone@x', rawKey: 'l1/raw.eml' })], [draft('c', 4, { sourceId: 'lone@x', rawKey: 'l2/raw.eml' })]],
                    [staged(store, 'l1/raw.eml', 'one'), staged(store, 'l2/raw.eml', 'two')]);
                expect(lone!.removedBlobKeys).to.equal(['l1/raw.eml']);
                expect((await knex('blobs').pluck('key')).sort()).to.equal(['l2/raw.eml', 'r1/raw.eml', 'r2/raw.eml']);
            }
            finally {
                await writer.close();
                await store.close();
            }
        });

        it('writes nothing of a batch whose delivery fails, and the others of the batch still commit', async () => {
            const { knex, store, errors } = await open(dir, 'isolate.sqlite');
            try {
                await knex.raw(`CREATE TRIGGER refuse_bad BEFORE INSERT ON emails WHEN NEW.inbox = 'bad' BEGIN SELECT RAISE(ABORT, 'bad inbox'); END`);
                const good = draft('good', 1);
                const bad = draft('bad', 2);
                // Called in one tick: one batch, which fails on the batch writer and is isolated.
                const [ok, failed] = await Promise.allSettled([
                    store.saveEmails([good], { blobs: [staged(store, good.rawKey, 'good')] }),
                    store.saveEmails([bad], { blobs: [staged(store, bad.rawKey, 'bad')] })
                ]);
                expect(ok.status).to.equal('fulfilled');
                expect(failed.status).to.equal('rejected');
                expect(errors).to.have.length(1);
                expect(await knex('blobs').pluck('key')).to.equal([good.rawKey]);
                expect(await knex('emails').pluck('inbox')).to.equal(['good']);
            }
            finally {
                await store.close();
            }
        });

        it('carries every text through its JSON parameters unchanged: quotes, backslashes, controls, astral characters; NUL and lone surrogates cleaned', async () => {
            const { store } = await open(dir, 'texts.sqlite');
            try {
                const awkward = 'q"uote \\back\\slash \n\t\r\u0001 🎉 \u2028 é ->> 0';
                const d = draft('texts', 1, {
                    sourceId: `awk"ward\\${awkward.length}@x`,
                    subject: `${awkward} lone\uD800high`,
                    body: `nul\u0000 ${awkward} lone\uDC00low`,
                    htmlBody: `<p title="${awkward}">x</p>`,
                    sender: 'Zoë "Q" <z@x>',
                    attachments: [{ filename: 'f\uD800"\\.txt', contentType: 'text/plain', size: 3, blobKey: 'att-key' }]
                });
                const [saved] = (await store.saveEmails([d])).saved;
                const read = (await store.getEmail(saved!.messageId))!;
                expect(read.messageId).to.equal(`awk"ward\\${awkward.length}@x`);
                expect(read.subject).to.equal(`${awkward} lone\uFFFDhigh`);
                expect(read.body).to.equal(`nul ${awkward} lone\uFFFDlow`);
                expect(read.htmlBody).to.equal(`<p title="${awkward}">x</p>`);
                expect(read.sender).to.equal('Zoë "Q" <z@x>');
                expect(read.attachments).to.equal([{ filename: 'f\uFFFD"\\.txt', contentType: 'text/plain', size: 3, blobKey: 'att-key' }]);
                // The list reads the same row through Knex: the same texts.
                const page = await store.listEmails({ inbox: 'texts', limit: 10 });
                expect(page.records).to.equal([read]);
            }
            finally {
                await store.close();
            }
        });

        it('writes texts longer than a bind piece exactly, a surrogate pair at every cut kept whole', async () => {
            const { knex, store } = await open(dir, 'long.sqlite');
            try {
                // 'a' then pairs: every odd index holds a high surrogate, so an even cut would split one.
                const body = `a${'\u{1f389}'.repeat(Math.ceil(1.2 * TEXT_PIECE_CHARS))}\u0000 end`;
                const htmlBody = `<p>${'é'.repeat(TEXT_PIECE_CHARS + 5)}</p>`;
                const d = draft('long', 1, { sourceId: 'long@x', body, htmlBody });
                const [saved] = (await store.saveEmails([d, draft('long', 2, { sourceId: 'short@x' })])).saved;
                const [row] = await knex('emails').select(knex.raw('CAST(body AS BLOB) AS body'), knex.raw('CAST(html_body AS BLOB) AS html')).where('message_id', saved!.messageId) as Array<{ body: Buffer; html: Buffer }>;
                expect(row!.body.equals(Buffer.from(body.replace('\u0000', '')))).to.be.true();
                expect(row!.html.equals(Buffer.from(htmlBody))).to.be.true();
                expect((await store.getEmail(saved!.messageId))!.body).to.equal(body.replace('\u0000', ''));
                expect((await store.listEmails({ inbox: 'long', limit: 10 })).records).to.have.length(2);
            }
            finally {
                await store.close();
            }
        });

        it('adds a batch\'s search documents in rowid order: one FTS5 segment a batch, on the one-call path and the prepared one', async () => {
            const { knex, store } = await open(dir, 'segments.sqlite');
            const calls: number[] = [];
            const writer = openSqliteBatchWriter(join(dir, 'segments.sqlite'), { commit: (_, c) => calls.push(c!) });
            try {
                // Message-IDs whose digests fall in the reverse of their arrival order: the order the
                // lookup by digest gives the rows, where each rowid below the last made FTS5 write a segment.
                const ids: string[] = [];
                for (let n = 0; ids.length < 5; n++) {
                    const id = `seg-${n}@example.test`;
                    if (ids.length === 0 || sha256Hex(id) < sha256Hex(ids[ids.length - 1]!)) {
                        ids.push(id);
                    }
                }

                const segments = async () => ((await knex.raw('SELECT count(DISTINCT segid) AS n FROM email_search_idx')) as Array<{ n: number }>)[0]!.n;
                await writer.save(ids.map((sourceId, i) => [draft('segments', i, { sourceId, body: `document ${i} words` })]), []);
                expect(await segments()).to.equal(1);

                // The prepared statements (a batch too large for one SQL text) add them in order too.
                const large = ids.map((sourceId, i) => draft('segments', 10 + i, { sourceId: `large-${sourceId}`, body: `document ${10 + i} words` }));
                await writer.save(large.map((d) => [d]), [{ ...staged(store, large[0]!.rawKey, ''), content: Buffer.alloc(MAX_TAIL_CHARS, 0x27) }]);
                expect(calls.map((c) => c > 1)).to.equal([false, true]);
                expect(await segments()).to.equal(2);

                const found = await store.listEmails({ inbox: 'segments', limit: 20, q: [{ negated: false, field: 'body', text: 'document 13 words' }] });
                expect(found.records.map((r) => r.subject)).to.equal(['Subject 13']);

                // The isolating path (Knex; a batch with a failing delivery): one delivery to five
                // inboxes whose derived ids' digests fall in the reverse of the copies' order.
                await knex.raw(`CREATE TRIGGER refuse_bad BEFORE INSERT ON emails WHEN NEW.inbox = 'bad' BEGIN SELECT RAISE(ABORT, 'bad inbox'); END`);
                const source = 'isolated@example.test';
                const inboxes: string[] = [];
                for (let n = 0; inboxes.length < 5; n++) {
                    const inbox = `iso${n}`;
                    if (inboxes.length === 0 || sha256Hex(deriveMessageId(source, inbox)) < sha256Hex(deriveMessageId(source, inboxes[inboxes.length - 1]!))) {
                        inboxes.push(inbox);
                    }
                }

                const [ok, failed] = await Promise.allSettled([
                    store.saveEmails(inboxes.map((inbox) => draft(inbox, 20, { sourceId: source, body: 'isolated words' }))),
                    store.saveEmails([draft('bad', 21)])
                ]);
                expect([ok.status, failed.status]).to.equal(['fulfilled', 'rejected']);
                expect(await segments()).to.equal(3);
            }
            finally {
                await writer.close();
                await store.close();
            }
        });

        it('refuses blobs staged for another database', async () => {
            const { store } = await open(dir, 'target.sqlite');
            try {
                const d = draft('elsewhere', 1);
                const blob: StagedBlob = { target: join(dir, 'other.sqlite'), key: d.rawKey, content: Buffer.from('x'), contentType: 'text/plain' };
                await expect(store.saveEmails([d], { blobs: [blob] })).to.reject(/does not write/);
                expect(await store.getEmail(d.sourceId)).to.be.null();
            }
            finally {
                await store.close();
            }
        });
    });
});
