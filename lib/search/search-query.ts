/** A parsed search (`q`): the terms, all of which an email must match (docs/api.md, "Search"). */

/** Longest `q`, characters (code points): more than any search worth typing, short enough to parse in microseconds. */
export const MAX_QUERY_CHARS = 1024;

/** Most terms in one `q`: each is one more condition of the store's query. */
export const MAX_QUERY_TERMS = 20;

/**
 * Fields searched for a case-insensitive substring: `from` (the sender's address or
 * display name), `to` (the recipient), `subject`, `body` (the text body and the HTML's
 * text), `filename` (any attachment's); `text` is a term without a field: the subject,
 * the body, or the sender's address or display name.
 */
export type TextField = 'from' | 'to' | 'subject' | 'body' | 'filename' | 'text';

/** What `has:` asks for. */
export type HasWhat = 'attachment' | 'link' | 'code';

/** One term of a search; `negated` (a leading `-`) keeps the emails it does not match instead. */
export type SearchTerm = { negated: boolean } & (
    /** A substring of a field, as written (the store folds case). */
    | { field: TextField; text: string }
    /** One of the email's tags, exactly, lowercased here. */
    | { field: 'tag'; tag: string }
    | { field: 'has'; has: HasWhat }
    /** receivedAt strictly before / after `at` (Unix ms). */
    | { field: 'before' | 'after'; at: number }
    /** The raw message's bytes strictly more / fewer than `bytes`. */
    | { field: 'larger' | 'smaller'; bytes: number }
);
