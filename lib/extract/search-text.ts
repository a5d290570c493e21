/**
 * The text `body:` searches (docs/api.md, "Search"): the text body and the HTML's text,
 * case-folded once, at ingest, so that a store only compares strings and both stores
 * fold identically (SQLite's lower() folds ASCII only, Postgres' follows its collation).
 */

/**
 * Separates the parts of a searched text (the text body from the HTML's text, one file
 * name from the next). foldForSearch() never leaves one in a text, so no needle can match
 * across two parts.
 */
export const SEARCH_PART_SEPARATOR = '\u0003';

// \u0001 and \u0002 mark an indexed document's inbox (SQLite's index, record-store/sql/search-index.ts).
const MARK = /[\u0001-\u0003]/;
const MARKS = /[\u0001-\u0003]/g;

/** `text` lowercased (String.prototype.toLowerCase, the fold of every substring filter), with the three marks as U+FFFD. */
export function foldForSearch(text: string): string {
    const folded = text.toLowerCase();
    return MARK.test(folded) ? folded.replace(MARKS, '\uFFFD') : folded;
}

/**
 * The folded text `body:` searches for an email with this text body and this text of its
 * HTML (html-text.ts; `''` when it has no HTML): the body, then the HTML's text when it
 * says something the body does not already (a message with only HTML has the HTML's text
 * as its body).
 */
export function searchTextOf(body: string, htmlText: string): string {
    const folded = foldForSearch(body);
    if (htmlText.length === 0 || htmlText === body) {
        return folded;
    }

    return `${folded}${SEARCH_PART_SEPARATOR}${foldForSearch(htmlText)}`;
}
