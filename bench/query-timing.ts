import type { Knex } from 'knex';
import { summarize, type Summary } from './stats';

/** Fewest timed calls per query, however long they take. */
const MIN_ITERATIONS = 20;

/** Times `calls` after a warm-up: up to `iterations` calls within `ms`, never fewer than MIN_ITERATIONS. */
export async function time(calls: () => Promise<unknown>, iterations: number, ms: number): Promise<Summary> {
    for (let i = 0; i < Math.min(10, iterations); i++) {
        await calls();
    }

    const samples: number[] = [];
    const deadline = Date.now() + ms;
    for (let i = 0; i < iterations && (i < MIN_ITERATIONS || Date.now() < deadline); i++) {
        const start = process.hrtime.bigint();
        await calls();
        samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }

    return summarize(samples);
}

/** The query plan of the SQL the store ran last (captured from Knex's query event), one line. */
export async function planOf(knex: Knex, pg: boolean, sql: { sql: string; bindings: unknown[] }): Promise<string> {
    const text = sql.sql.replace(/\$\d+/g, '?');
    if (pg) {
        const result = await knex.raw(`EXPLAIN ${text}`, sql.bindings as Knex.RawBinding[]) as { rows: Array<{ 'QUERY PLAN': string }> };
        return result.rows
            .map((r) => r['QUERY PLAN'].replace(/\s+\(cost=.*\)$/, '').replace(/^\s*->\s*/, '').trim())
            .filter((l) => !/^(Filter|Index Cond|Recheck Cond|Sort Key|Presorted Key|Rows Removed)/.test(l))
            .join(' → ');
    }

    const rows = await knex.raw(`EXPLAIN QUERY PLAN ${text}`, sql.bindings as Knex.RawBinding[]) as Array<{ detail: string }>;
    return rows.map((r) => r.detail).join('; ');
}
