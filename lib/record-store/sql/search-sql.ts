/**
 * A search's terms as SQL, one translation per dialect: the exact conditions (each term a
 * comparison of folded texts, so both stores answer the same), and how the trigram indexes
 * (search-index.ts) narrow them down.
 */

import type { Knex } from 'knex';
import { foldForSearch } from '../../extract/search-text';
import type { SearchTerm, TextField } from '../../types';
import { isValidTag } from '../../identity/tags';
import { cleanText } from './clean-text';
import { ftsCandidateQuery, likeContains, postgresIndexable, SEARCH_INDEX_TABLE } from './search-index';

/** How each text column was folded when written: `lower` alone (the older sender/subject columns) or foldForSearch(). */
type Fold = 'lower' | 'search';

/** The columns a text term compares, with the fold of each. */
const TEXT_COLUMNS: Record<TextField, Array<[string, Fold]>> = {
    from: [['sender_folded', 'lower'], ['sender_name_folded', 'search']],
    to: [['recipient_folded', 'search']],
    subject: [['subject_folded', 'lower']],
    body: [['body_folded', 'search']],
    filename: [['filenames_folded', 'search']],
    text: [['subject_folded', 'lower'], ['body_folded', 'search'], ['sender_folded', 'lower'], ['sender_name_folded', 'search']]
};

/** One condition: SQL with `?` placeholders and its bindings. */
interface Condition {
    sql: string;
    bindings: Knex.RawBinding[];
}

/**
 * Postgres' columns with a trigram index: sender and subject (20261121120000_search_trigrams),
 * the body with the inbox first (20261201000000_search), the display name
 * (20261206000000_sender_name_search). The recipient and file names, short and stored
 * inline, are read as the rows are.
 */
const POSTGRES_INDEXED = new Set(['sender_folded', 'subject_folded', 'body_folded', 'sender_name_folded']);

/**
 * Adds every term's exact condition to `q` (a query on `emails`). `indexed`: Postgres may
 * answer a positive text term from its trigram indexes (it is then written as the LIKE they
 * serve, the same answer); without it every condition is one no index serves, so the
 * planner walks the inbox's order index (the newest emails of a search).
 */
export function whereTerms(q: Knex.QueryBuilder, terms: readonly SearchTerm[], pg: boolean, indexed = false): Knex.QueryBuilder {
    for (const term of terms) {
        const { sql, bindings } = termCondition(term, pg, indexed);
        q.whereRaw(term.negated ? `NOT (${sql})` : sql, bindings);
    }

    return q;
}

/** What the trigram index contributes to a search: SQLite's candidates, or Postgres' indexed terms. */
export interface IndexPlan {
    /** SQLite: the condition that keeps the emails the index names, a superset of the terms' answer. */
    candidates?: Condition;
}

// A positive text term, lowercased, or undefined.
function positiveNeedle(term: SearchTerm): string | undefined {
    return (term.field === 'from' || term.field === 'to' || term.field === 'subject' || term.field === 'body' || term.field === 'filename' || term.field === 'text') && !term.negated
        ? cleanText(term.text).toLowerCase()
        : undefined;
}

// Whether Postgres can answer this positive text term from its trigram indexes alone.
function postgresIndexed(term: SearchTerm): boolean {
    const needle = positiveNeedle(term);
    return needle !== undefined && postgresIndexable(needle) && TEXT_COLUMNS[term.field as TextField].every(([column]) => POSTGRES_INDEXED.has(column));
}

/**
 * How the trigram index narrows `terms` in `inbox`, or null when no term can use it.
 * SQLite: the rowids of one FTS query for all of its terms (`+seq`: the inbox's order index
 * stays the way in, the candidates a set it checks, before a row is read). Postgres: its
 * terms as the LIKE its GIN indexes serve (whereTerms() with `indexed`), and its planner's
 * bitmap of them.
 */
export function indexPlan(inbox: string, terms: readonly SearchTerm[], pg: boolean): IndexPlan | null {
    if (pg) {
        return terms.some(postgresIndexed) ? {} : null;
    }

    const match = ftsCandidateQuery(inbox, terms.flatMap((t) => positiveNeedle(t) ?? []));
    return match === null ? null : { candidates: { sql: `+seq IN (SELECT rowid FROM ${SEARCH_INDEX_TABLE} WHERE ${SEARCH_INDEX_TABLE} MATCH ?)`, bindings: [match] } };
}

// The exact condition of one term, unnegated; never NULL when unindexed, so NOT keeps the rows it does not match.
function termCondition(term: SearchTerm, pg: boolean, indexed: boolean): Condition {
    switch (term.field) {
        case 'from':
        case 'to':
        case 'subject':
        case 'body':
        case 'filename':
        case 'text': {
            const text = cleanText(term.text);
            // The bare column, for the index; a positive term only, so a NULL (a row not yet back-filled) just does not match.
            const like = pg && indexed && postgresIndexed(term);
            const parts = TEXT_COLUMNS[term.field].map(([column, fold]) => {
                const needle = fold === 'lower' ? text.toLowerCase() : foldForSearch(text);
                return like ? { sql: `${column} LIKE ?`, binding: likeContains(needle) } : {
                    sql: pg ? `strpos(coalesce(${column}, ''), ?) > 0` : `instr(coalesce(${column}, ''), ?) > 0`,
                    binding: needle
                };
            });
            return { sql: `(${parts.map((p) => p.sql).join(' OR ')})`, bindings: parts.map((p) => p.binding) };
        }

        case 'tag':
            // Tags are stored as JSON text of strings that need no escaping: `"x"` is the tag x and nothing else.
            return isValidTag(term.tag)
                ? { sql: pg ? 'strpos(tags, ?) > 0' : 'instr(tags, ?) > 0', bindings: [`"${term.tag}"`] }
                : { sql: '1 = 0', bindings: [] };
        case 'has':
            if (term.has === 'attachment') {
                return { sql: 'has_attachments = ?', bindings: [true] };
            }

            return { sql: `coalesce(${term.has === 'link' ? 'links' : 'codes'}, '[]') <> '[]'`, bindings: [] };
        case 'is':
            return { sql: 'seen = ?', bindings: [term.seen] };
        case 'before':
            return { sql: 'received_at < ?', bindings: [term.at] };
        case 'after':
            return { sql: 'received_at > ?', bindings: [term.at] };
        case 'larger':
            return { sql: 'raw_size > ?', bindings: [term.bytes] };
        case 'smaller':
            return { sql: 'raw_size < ?', bindings: [term.bytes] };
    }
}
