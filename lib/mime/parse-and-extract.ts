/**
 * A parse as ingest wants it: parseMessage() and then the links, codes and folded text of
 * what it read. One function for both places a message is parsed (a parse worker, or the
 * calling thread for a small message: small-message.ts), so the two give the same answer.
 */
import { linksAndCodesOf } from '../extract/links-and-codes';
import { searchTextOf } from '../extract/search-text';
import { emailText, parseMessage, type ParsedMessage } from './parse';

/** parseMessage()'s result with `linksAndCodes` and `searchText` filled in. Never rejects. */
export async function parseAndExtract(raw: Buffer): Promise<ParsedMessage> {
    const parsed = await parseMessage(raw);
    const text = emailText(parsed);
    parsed.linksAndCodes = linksAndCodesOf(text);
    parsed.searchText = searchTextOf(text.body, parsed.textFromHtml);
    return parsed;
}
