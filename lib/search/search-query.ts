/** The limits of a search (`q`, docs/api.md, "Search"); the shape of its terms is SearchTerm (types.ts). */

/** Longest `q`, characters (code points): more than any search worth typing, short enough to parse in microseconds. */
export const MAX_QUERY_CHARS = 1024;

/** Most terms in one `q`: each is one more condition of the store's query. */
export const MAX_QUERY_TERMS = 20;
