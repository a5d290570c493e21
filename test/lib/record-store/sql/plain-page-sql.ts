import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import knexFactory from 'knex';
import { budgetedPageQuery } from '../../../../lib/record-store/sql/email-page';
import { isPlainPageQuery, plainPageSql } from '../../../../lib/record-store/sql/plain-page-sql';
import type { ListQuery } from '../../../../lib/types';

const { expect } = Code;
const { describe, it, after } = exports.lab = Lab.script();

describe('plainPageSql()', () => {
    const knex = knexFactory({ client: 'sqlite3', useNullAsDefault: true, connection: { filename: ':memory:' } });
    const build = (query: ListQuery & { maxBytes: number }) => budgetedPageQuery(knex, query, (q) => q.select(['seq', 'message_id', 'body']));

    after(async () => {
        await knex.destroy();
    });

    it('gives the SQL and bindings the builder gives, for any inbox, limit and byte budget', () => {
        let builds = 0;
        const plain = plainPageSql((query) => {
            builds++;
            return build(query);
        });
        // Inboxes that cleaning changes (a NUL, a lone surrogate) and ones it does not.
        const queries: Array<ListQuery & { maxBytes: number }> = [
            { inbox: 'a', limit: 1, maxBytes: 1 },
            { inbox: 'signup-42', limit: 50, maxBytes: 8 * 1024 * 1024 },
            { inbox: 'nul\u0000inside', limit: 100, maxBytes: 3 },
            { inbox: 'lone\uD800surrogate', limit: 7, maxBytes: 2 ** 31 },
            { inbox: `quote'"\\`, limit: 99, maxBytes: 4096, sender: undefined }
        ];
        for (const query of queries) {
            const native = build(query).toSQL().toNative();
            expect(plain(query), JSON.stringify(query)).to.equal({ sql: native.sql, bindings: [...native.bindings] });
        }

        // Built twice, from two sets of stand-ins, once for all.
        expect(builds).to.equal(2);
    });

    it('leaves every other query to the builder', () => {
        const plain = plainPageSql(build);
        const others: ListQuery[] = [
            { inbox: 'a', limit: 10 },
            { inbox: 'a', limit: 10, maxBytes: 100, sender: 'x' },
            { inbox: 'a', limit: 10, maxBytes: 100, after: { receivedAt: 1, messageId: 'm' } },
            { inbox: 'a', limit: 10, maxBytes: 100, receivedAfter: 5 },
            { inbox: 'a', limit: 10, maxBytes: 100, hasAttachments: false },
            { inbox: 'a', limit: 10, maxBytes: 100, q: [] }
        ];
        for (const query of others) {
            expect(isPlainPageQuery(query)).to.be.false();
            expect(plain(query)).to.be.undefined();
        }
    });

    it('builds every time when a value of the query is written into the SQL text instead of bound', () => {
        let builds = 0;
        const plain = plainPageSql((query) => {
            builds++;
            return knex('emails').whereRaw(`inbox = '${query.inbox}'`).limit(query.limit + 1);
        });
        expect(plain({ inbox: 'a', limit: 1, maxBytes: 1 })).to.be.undefined();
        expect(plain({ inbox: 'b', limit: 2, maxBytes: 1 })).to.be.undefined();
        expect(builds).to.equal(2);
    });

    it('builds every time when a binding of the built query is no value of the query (a builder it does not know)', () => {
        let builds = 0;
        const plain = plainPageSql((query) => {
            builds++;
            return knex('emails').where('inbox', `${query.inbox}!`).limit(query.limit);
        });
        expect(plain({ inbox: 'a', limit: 1, maxBytes: 1 })).to.be.undefined();
        expect(plain({ inbox: 'b', limit: 2, maxBytes: 1 })).to.be.undefined();
        expect(builds).to.equal(2);
    });
});
