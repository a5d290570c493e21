/**
 * The SQL of the plainest page query (an inbox, a limit, a byte budget: what a waiting
 * long-poll and a first page ask), built by the query builder once and then only bound:
 * building and compiling it with Knex cost about as much JS as the rest of answering a
 * woken long-poll (docs/design.md, "Long-polling").
 */

import type { Knex } from 'knex';
import type { ListQuery } from '../../types';
import { cleanText } from './clean-text';

/** A plain page query: nothing but these set. */
export type PlainPageQuery = Pick<ListQuery, 'inbox' | 'limit'> & { maxBytes: number };

/** SQL text and the bindings in its order, as Knex's toNative() gives them. */
export interface NativeSql {
    sql: string;
    bindings: unknown[];
}

const PLAIN_KEYS = new Set(['inbox', 'limit', 'maxBytes']);

// Values no real query has, in two sets, so that each binding of the template says which
// value it is, or that it is a constant of the query (the same in both builds). The builder
// cleans the inbox (cleanText(), which leaves these as they are) and reads one more row
// than the limit.
const STAND_INS = [
    { inbox: 'inbox-capture:plain-page-inbox-1', limit: 2 ** 40 + 7, maxBytes: 2 ** 41 + 11 },
    { inbox: 'inbox-capture:plain-page-inbox-2', limit: 2 ** 40 + 13, maxBytes: 2 ** 41 + 17 }
];

type Slot = (query: PlainPageQuery) => unknown;

const SLOTS: Record<string, Slot> = {
    inbox: (query) => cleanText(query.inbox),
    limit: (query) => query.limit,
    limitPlusOne: (query) => query.limit + 1,
    maxBytes: (query) => query.maxBytes
};

// Which value of the query a binding of a build from `values` stands for.
function slotOf(binding: unknown, values: PlainPageQuery): keyof typeof SLOTS | undefined {
    return binding === values.inbox ? 'inbox' :
        binding === values.limit ? 'limit' :
            binding === values.limit + 1 ? 'limitPlusOne' :
                binding === values.maxBytes ? 'maxBytes' : undefined;
}

/** Whether `query` sets nothing but an inbox, a limit and a byte budget. */
export function isPlainPageQuery(query: ListQuery): query is ListQuery & PlainPageQuery {
    return query.maxBytes !== undefined && Object.entries(query).every(([key, value]) => value === undefined || PLAIN_KEYS.has(key));
}

/**
 * The SQL of `build` for plain queries: built once (from stand-in values), then bound with
 * each query's values. Undefined for a query that is not plain, or when a binding of the
 * built query is neither one of its values nor a constant (a builder this does not know):
 * then the caller builds.
 */
export function plainPageSql(build: (query: PlainPageQuery) => Knex.QueryBuilder): (query: ListQuery) => NativeSql | undefined {
    let template: { sql: string; slots: Slot[] } | null | undefined;
    return (query) => {
        if (!isPlainPageQuery(query)) {
            return undefined;
        }

        if (template === undefined) {
            const [first, second] = STAND_INS.map((values) => build(values).toSQL().toNative());
            const slots = first!.bindings.map((binding, i): Slot | undefined => {
                const slot = slotOf(binding, STAND_INS[0]!);
                if (slot) {
                    return slotOf(second!.bindings[i], STAND_INS[1]!) === slot ? SLOTS[slot] : undefined;
                }

                const constant = second!.bindings[i];
                return binding === constant && typeof constant !== 'object' ? () => constant : undefined;
            });
            // A stand-in written into the text itself would be a value fixed for every query.
            const inlined = first!.sql !== second!.sql;
            template = !inlined && first!.bindings.length === second!.bindings.length && slots.every((slot) => slot !== undefined)
                ? { sql: first!.sql, slots: slots as Slot[] } : null;
        }

        return template === null ? undefined : { sql: template.sql, bindings: template.slots.map((slot) => slot(query)) };
    };
}
