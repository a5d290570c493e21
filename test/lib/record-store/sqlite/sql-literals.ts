import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Sqlite3 from 'sqlite3';
import { sqlBlob, sqlValue } from '../../../../lib/record-store/sqlite/sql-literals';

const { describe, it } = exports.lab = Lab.script();
const { expect } = Code;

describe('sql-literals', () => {

    it('writes NULL, numbers and strings as literals SQLite reads back as the same values, of the same types', async () => {
        const values = [null, 0, 1795924332467, -3.5, 'plain', "it's ''quoted''", 'é — ünïcode 🎉 \\ \n\t\r\u0001 "x"', ''];
        const literals = values.map((v) => sqlValue(v)!);
        const db = new Sqlite3.Database(':memory:');
        try {
            const row = await new Promise<Record<string, unknown>>((resolve, reject) => {
                db.get(`SELECT ${literals.map((l, i) => `${l} AS v${i}, typeof(${l}) AS t${i}`).join(', ')}`, (err, r) => (err ? reject(err) : resolve(r as Record<string, unknown>)));
            });
            expect(values.map((_, i) => row[`v${i}`])).to.equal(values);
            expect(values.map((_, i) => row[`t${i}`])).to.equal(['null', 'integer', 'integer', 'real', 'text', 'text', 'text', 'text']);
        }
        finally {
            db.close();
        }
    });

    it('has no literal for a value a bound parameter must carry: a NUL, a lone surrogate, a non-finite number, another type', () => {
        for (const value of ['a\u0000b', 'lone\uD800', 'lone\uDC00', Number.NaN, Number.POSITIVE_INFINITY, true, {}, Buffer.from('x')]) {
            expect(sqlValue(value), String(value)).to.be.undefined();
        }
    });

    it('writes bytes as a blob SQLite reads back byte for byte: UTF-8 as text cast to a blob, anything else as hex', async () => {
        const cases: Array<[Buffer, string]> = [
            [Buffer.from('Subject: it\'s \'\'quoted\'\'\r\n\r\nGrüße – 🎉 \\ \u0001 end\r\n'), 'CAST('],
            [Buffer.alloc(0), 'CAST('],
            [Buffer.from([0x61, 0x00, 0x62]), "X'"],
            [Buffer.from([0x27, 0xff, 0xfe, 0x27]), "X'"],
            // A lone surrogate encoded as UTF-8 bytes is no UTF-8.
            [Buffer.from([0xed, 0xa0, 0x80]), "X'"]
        ];
        const db = new Sqlite3.Database(':memory:');
        try {
            for (const [bytes, form] of cases) {
                const literal = sqlBlob(bytes);
                expect(literal.startsWith(form), literal).to.be.true();
                const row = await new Promise<{ v: Buffer; t: string }>((resolve, reject) => {
                    db.get(`SELECT ${literal} AS v, typeof(${literal}) AS t`, (err, r) => (err ? reject(err) : resolve(r as { v: Buffer; t: string })));
                });
                expect(row.t).to.equal('blob');
                expect(Buffer.compare(row.v, bytes), literal).to.equal(0);
            }
        }
        finally {
            db.close();
        }
    });
});
