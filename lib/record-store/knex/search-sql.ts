/**
 * A search's terms as SQL, one translation per dialect: the exact conditions (each term a
 * comparison of folded texts, so both stores answer the same), and the candidate
 * condition that lets the trigram index (search-index.ts) narrow them down.
 */

import type { Knex } from 'knex';
import { foldForSearch } from '../../extract/search-text';
import type { SearchTerm, TextField } from '../../search/search-query';
import { isValidTag } from '../../search/tags';
import { cleanText } from './clean-text';
import { ftsCandidateQuery, likeContains, POSTGRES_DOCUMENT_SQL, postgresIndexable, SEARCH_INDEX_TABLE } from './search-index';

/** How each text column was folded when written: `lower` alone (the older sender/subject columns) or foldForSearch(). */
type Fold = 'lower' | 'search';

/** The columns a text term compares, with the fold of each. */
const TEXT_COLUMNS: Record<TextField, Array<[string, Fold]>> = {
    from: [['sender_folded', 'lower']],
    to: [['recipient_folded', 'search']],
    subject: [['subject_folded', 'lower']],
    body: [['body_folded', 'search']],
    filename: [['filenames_folded', 'search']],
    text: [['subject_folded', 'lower'], ['body_folded', 'search'], ['sender_folded', 'lower']]
};

/** One condition: SQL with `?` placeholders and its bindings. */
interface Condition {
    sql: string;
    bindings: Knex.RawBinding[];
}

/** Adds every term's exact condition to `q` (a query on `emails`). */
export function whereTerms(q: Knex.QueryBuilder, terms: readonly SearchTerm[], pg: boolean): Knex.QueryBuilder {
    for (const term of terms) {
        const { sql, bindings } = termCondition(term, pg);
        q.whereRaw(term.negated ? `NOT (${sql})` : sql, bindings);
    }

    return q;
}

/** The lowercased needles of the terms the index can narrow: positive text terms. */
function indexedNeedles(terms: readonly SearchTerm[]): string[] {
    return terms.flatMap((t) => (t.field === 'from' || t.field === 'to' || t.field === 'subject' || t.field === 'body' || t.field === 'filename' || t.field === 'text') && !t.negated
        ? [cleanText(t.text).toLowerCase()]
        : []);
}

/**
 * The condition that narrows `terms` in `inbox` to the emails the trigram index names
 * (a superset of the exact conditions' answer), or null when no term can use the index.
 * SQLite: the rowids of one FTS query for all of them (`+seq`: the inbox's order index
 * stays the way in, the candidates a set it checks). Postgres: the indexed expression
 * LIKE each needle pg_trgm can read.
 */
export function candidateCondition(inbox: string, terms: readonly SearchTerm[], pg: boolean): Condition | null {
    const needles = indexedNeedles(terms);
    if (pg) {
        const usable = needles.filter(postgresIndexable);
        return usable.length === 0 ? null : {
            sql: usable.map(() => `${POSTGRES_DOCUMENT_SQL} LIKE ?`).join(' AND '),
            bindings: usable.map(likeContains)
        };
    }

    const match = ftsCandidateQuery(inbox, needles);
    return match === null ? null : { sql: `+seq IN (SELECT rowid FROM ${SEARCH_INDEX_TABLE} WHERE ${SEARCH_INDEX_TABLE} MATCH ?)`, bindings: [match] };
}

// The exact condition of one term, unnegated; never NULL, so NOT keeps the rows it does not match.
function termCondition(term: SearchTerm, pg: boolean): Condition {
    switch (term.field) {
        case 'from':
        case 'to':
        case 'subject':
        case 'body':
        case 'filename':
        case 'text': {
            const text = cleanText(term.text);
            const parts = TEXT_COLUMNS[term.field].map(([column, fold]) => ({
                sql: pg ? `strpos(coalesce(${column}, ''), ?) > 0` : `instr(coalesce(${column}, ''), ?) > 0`,
                binding: fold === 'lower' ? text.toLowerCase() : foldForSearch(text)
            }));
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
