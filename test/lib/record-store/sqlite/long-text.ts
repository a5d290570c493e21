import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';
import { createKnexRecordStore } from '../../../../lib/record-store/knex-record-store';
import { completeRow, pieceColumns, pieceQuery, TEXT_PIECE_BYTES, type PiecedRow, type PieceReader } from '../../../../lib/record-store/sqlite/long-text';
import type { RecordStore } from '../../../../lib/record-store/record-store';
import { openSqliteKnex } from '../../../../lib/sqlite/knex';
import { draft } from '../../../helpers/email-draft';
import { tempDir } from '../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

describe('long-text', () => {

    let dir: string;
    let knex: Knex;
    let store: RecordStore;
    // 1 + 9n bytes: a piece boundary falls inside a character of 2, 3 or 4 bytes somewhere.
    const body = `a${'\u00e9\u4e2d\u{1f600}'.repeat(Math.ceil(2.5 * TEXT_PIECE_BYTES / 9))}`;
    const htmlBody = '<p>short</p>';
    let seq: number;

    const rowOf = async (id: string): Promise<PiecedRow> => {
        const [row] = await knex('emails').select(pieceColumns(knex)).where('message_id', id) as PiecedRow[];
        return row!;
    };

    const readPiece: PieceReader = async (column, rowSeq, from, length) => {
        const [row] = await pieceQuery(knex, column, rowSeq, from, length) as Array<{ piece: Buffer }>;
        return row ? row.piece : null;
    };

    before(async () => {
        dir = await tempDir('long-text');
        knex = openSqliteKnex(join(dir, 'inbox-capture.sqlite'));
        store = createKnexRecordStore({ knex });
        await store.migrate();
        await store.saveEmails([draft('long', 1, { sourceId: 'long@example.test', body, htmlBody })]);
        await store.saveEmails([draft('long', 2, { sourceId: 'short@example.test', body: 'short body' })]);
        seq = Number((await rowOf('long@example.test')).seq);
    });

    after(async () => {
        await store.close();
        await knex.destroy();
        await rm(dir, { recursive: true, force: true });
    });

    describe('pieceColumns()', () => {

        it('reads a text of up to a piece as it is', async () => {
            const row = await rowOf('short@example.test');
            expect(row.body).to.equal('short body');
            expect(Number(row.body_bytes)).to.equal(10);
        });

        it('leaves a longer text out, its length in bytes beside it', async () => {
            const row = await rowOf('long@example.test');
            expect(row.body).to.be.null();
            expect(Number(row.body_bytes)).to.equal(Buffer.byteLength(body));
            expect(row.html_body).to.equal(htmlBody);
        });
    });

    describe('pieceQuery()', () => {

        it('counts bytes, not characters', async () => {
            const piece = await readPiece('body', seq, 2, 5);
            expect(piece).to.equal(Buffer.from(body, 'utf8').subarray(1, 6));
        });
    });

    describe('completeRow()', () => {

        it('reads a long text piece by piece, exactly, characters cut between pieces joined again', async () => {
            const asked: number[] = [];
            const whole = await completeRow(await rowOf('long@example.test'), (column, rowSeq, from, length) => {
                asked.push(from);
                return readPiece(column, rowSeq, from, length);
            });
            expect(whole!.body === body).to.be.true();
            expect(whole!.html_body).to.equal(htmlBody);
            expect(whole).to.not.include(['body_bytes', 'html_body_bytes']);
            expect(asked).to.equal([1, 1 + TEXT_PIECE_BYTES, 1 + 2 * TEXT_PIECE_BYTES]);
        });

        it('is null when the row is deleted between pieces', async () => {
            const row = await rowOf('long@example.test');
            let pieces = 0;
            const whole = await completeRow(row, async (column, rowSeq, from, length) => (++pieces === 2 ? null : readPiece(column, rowSeq, from, length)));
            expect(whole).to.be.null();
            expect(pieces).to.equal(2);
        });

        it('reads nothing more for a row whose texts came whole', async () => {
            const row = await rowOf('short@example.test');
            const whole = await completeRow(row, () => {
                throw new Error('no piece should be read');
            });
            expect(whole!.body).to.equal('short body');
        });
    });
});
