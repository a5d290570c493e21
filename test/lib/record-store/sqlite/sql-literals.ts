import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Sqlite3 from 'sqlite3';
import { sqlValue } from '../../../../lib/record-store/sqlite/sql-literals';

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
});
