import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Knex } from 'knex';
import type { StagedBlob } from '../../../../lib/blob-store/blob-store';
import { createKnexRecordStore } from '../../../../lib/record-store/knex-record-store';
import type { RecordStore } from '../../../../lib/record-store/record-store';
import { openSqliteBatchWriter, type SqliteBatchWriter } from '../../../../lib/record-store/sqlite/sqlite-batch-writer';
import { MAX_SAVE_ROWS } from '../../../../lib/record-store/sqlite/save-rows';
import { openSqliteKnex } from '../../../../lib/sqlite/knex';
import type { EmailDraft } from '../../../../lib/types';
import { draft } from '../../../helpers/email-draft';
import { tempDir } from '../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

interface Opened {
    knex: Knex;
    store: RecordStore;
    writer: SqliteBatchWriter;
    /** Per commit: the node-sqlite3 calls from BEGIN to COMMIT. */
    calls: (number | undefined)[];
    /** Every SQL text the writer handed to SQLite to compile. */
    compiled: string[];
    close(): Promise<void>;
}

async function open(dir: string, file: string): Promise<Opened> {
    const knex = openSqliteKnex(join(dir, file));
    const store = createKnexRecordStore({ knex, destroyKnexOnClose: true });
    await store.migrate();
    const calls: (number | undefined)[] = [];
    const compiled: string[] = [];
    const writer = openSqliteBatchWriter(join(dir, file), { commit: (_, n) => calls.push(n), compile: (sql) => compiled.push(sql) });
    return {
        knex, store, writer, calls, compiled,
        async close() {
            await writer.close();
            await store.close();
        }
    };
}

function blob(key: string, content: Buffer, contentType = 'message/rfc822'): StagedBlob {
    return { target: 'records', key, content, contentType };
}

// A batch of three deliveries: one to two inboxes (two copies sharing a raw message), one
// with a staged attachment, one plain; their blobs staged.
function batch(n: number): { deliveries: EmailDraft[][]; blobs: StagedBlob[] } {
    const shared = { sourceId: `copies-${n}@x`, rawKey: `p${n}/raw.eml`, body: `shared words ${n}` };
    const attachment = { filename: 'a.txt', contentType: 'text/plain', size: 2, blobKey: `q${n}/att/0` };
    const deliveries = [
        [draft('one', n, shared), draft('two', n, shared)],
        [draft('one', n + 1, { rawKey: `q${n}/raw.eml`, attachments: [attachment], body: `attached words ${n}` })],
        [draft('three', n + 2, { rawKey: `r${n}/raw.eml`, body: `plain words ${n}` })]
    ];
    // Bytes no SQL text literal carries as they are: a NUL, a byte that is no UTF-8, a quote.
    const blobs = [
        blob(`p${n}/raw.eml`, Buffer.from(`raw ${n}\u0000'`)),
        blob(`q${n}/raw.eml`, Buffer.from([0xff, 0x27, n])),
        blob(`q${n}/att/0`, Buffer.from('at'), 'text/plain'),
        blob(`r${n}/raw.eml`, Buffer.from(`plain ${n}`))
    ];
    return { deliveries, blobs };
}

describe('save-rows: the one-call save as a prepared insert', () => {
    let dir: string;

    before(async () => {
        dir = await tempDir('save-rows');
    });

    after(async () => {
        await rm(dir, { recursive: true, force: true });
    });

    it('saves batches of new mail in one call each, compiling no SQL after the first batch of its size, every row, link, blob and document written', async () => {
        const { knex, store, writer, calls, compiled, close } = await open(dir, 'compiled.sqlite');
        try {
            const first = batch(1);
            await writer.save(first.deliveries, first.blobs);
            const afterFirst = compiled.length;
            expect(compiled.some((sql) => sql.startsWith('INSERT INTO save_rows'))).to.be.true();

            const second = batch(5);
            const results = await writer.save(second.deliveries, second.blobs);
            expect(calls).to.equal([1, 1]);
            // Nothing compiled for the second batch: the statement of its size was prepared with the first.
            expect(compiled.slice(afterFirst)).to.equal([]);

            for (const n of [1, 5]) {
                const { deliveries, blobs } = batch(n);
                const sizes = await knex('blobs').select('key', 'size', 'content_type').whereIn('key', blobs.map((b) => b.key)).orderBy('key') as Array<{ key: string; size: number; content_type: string }>;
                expect(sizes).to.equal(blobs.map((b) => ({ key: b.key, size: b.content.length, content_type: b.contentType })).sort((a, b) => a.key.localeCompare(b.key)));
                for (const staged of blobs) {
                    const [row] = await knex('blobs').select('content').where('key', staged.key) as Array<{ content: Buffer }>;
                    expect(row!.content.equals(staged.content)).to.be.true();
                }

                for (const d of deliveries.flat()) {
                    const [row] = await knex('emails').select('seq').where({ inbox: d.inbox, raw_key: d.rawKey }) as Array<{ seq: number }>;
                    const links = await knex('email_blobs').where('email_seq', row!.seq).pluck('blob_key');
                    expect(links.sort()).to.equal([d.rawKey, ...d.attachments.map((a) => a.blobKey)].sort());
                }

                for (const [inbox, words] of [['one', `shared words ${n}`], ['two', `shared words ${n}`], ['one', `attached words ${n}`], ['three', `plain words ${n}`]] as const) {
                    const found = await store.listEmails({ inbox, limit: 10, q: [{ negated: false, field: 'body', text: words }] });
                    expect(found.records.map((r) => r.body), `${inbox}: ${words}`).to.equal([words]);
                }
            }

            // The copies of the second batch's first delivery: two inboxes, one raw message.
            expect(results[0]!.saved.map((r) => [r.inbox, r.rawKey])).to.equal([['one', 'p5/raw.eml'], ['two', 'p5/raw.eml']]);
            // The search documents went in rowid order (one FTS5 segment a batch).
            const [{ n: segments }] = await knex.raw('SELECT count(DISTINCT segid) AS n FROM email_search_idx') as Array<{ n: number }>;
            expect(segments).to.equal(2);
        }
        finally {
            await close();
        }
    });

    it('writes nothing of a batch whose check finds a stored row, and saves it the careful way', async () => {
        const { knex, writer, calls, close } = await open(dir, 'refused.sqlite');
        try {
            const stored = draft('refused', 1, { sourceId: 'again@x', rawKey: 'k1/raw.eml' });
            await writer.save([[stored]], [blob('k1/raw.eml', Buffer.from('first'))]);
            // A new message first, then the same message again (its id is held): the check comes before any write.
            const fresh = draft('refused', 2, { rawKey: 'k2/raw.eml' });
            const again = draft('refused', 3, { sourceId: 'again@x', rawKey: 'k3/raw.eml' });
            const [freshResult, againResult] = await writer.save([[fresh], [again]], [blob('k2/raw.eml', Buffer.from('fresh')), blob('k3/raw.eml', Buffer.from('again'))]);
            expect(calls[0]).to.equal(1);
            expect(calls[1]!).to.be.above(1);
            expect(freshResult!.replaced).to.equal([]);
            expect(againResult!.replaced.map((r) => r.rawKey)).to.equal(['k1/raw.eml']);
            expect(await knex('emails').where('inbox', 'refused').orderBy('seq').pluck('raw_key')).to.equal(['k2/raw.eml', 'k3/raw.eml']);
            expect(await knex('email_blobs').orderBy('blob_key').pluck('blob_key')).to.equal(['k2/raw.eml', 'k3/raw.eml']);
        }
        finally {
            await close();
        }
    });

    it('takes up to MAX_SAVE_ROWS rows in one prepared insert; a larger batch writes SQL text', async () => {
        const { knex, writer, calls, compiled, close } = await open(dir, 'bound.sqlite');
        try {
            const many = (from: number, count: number) => Array.from({ length: count }, (_, i) => [draft('bound', from + i)]);
            await writer.save(many(0, MAX_SAVE_ROWS), []);
            expect(compiled.filter((sql) => sql.startsWith('INSERT INTO save_rows'))).to.have.length(1);
            const before = compiled.length;
            await writer.save(many(1000, MAX_SAVE_ROWS + 1), []);
            expect(calls).to.equal([1, 1]);
            expect(compiled.slice(before).map((sql) => sql.slice(0, 16))).to.equal(['BEGIN IMMEDIATE;']);
            expect(await knex('emails').where('inbox', 'bound').count({ n: '*' })).to.equal([{ n: 2 * MAX_SAVE_ROWS + 1 }]);
        }
        finally {
            await close();
        }
    });
});
