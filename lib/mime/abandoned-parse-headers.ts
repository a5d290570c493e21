/**
 * What an abandoned parse still gives: its header fields. A parse abandoned at its deadline
 * (parse-pool.ts) is most often a large message on a busy machine, not a hostile header, and
 * a stored mail with no subject and no sender reads as broken in every list. So the header
 * section alone (never the body) is parsed once more, here on the calling thread, by the same
 * parser and rules as a whole message (parse.ts), address fields bounded as ever
 * (address-bounds.ts): tens of milliseconds at most, even for the shapes that once held a
 * parse for seconds (docs/operations.md, "The parse worker").
 */
import { headerSectionOf } from './header-section';
import { emptyParsedMessage, parseMessage, type ParsedMessage } from './parse';

// The empty line that ends a header section, added after one cut from its message.
const END_OF_SECTION = Buffer.from('\r\n\r\n');

/**
 * `parsed` itself unless its parse was abandoned; then a ParsedMessage with the header fields
 * of `raw` (subject, from and its name, to, cc, message-id, tags) and the bodies and
 * attachments still empty, `abandoned` and `error` kept.
 */
export async function withHeadersOfAbandonedParse(parsed: ParsedMessage, raw: Buffer): Promise<ParsedMessage> {
    if (!parsed.abandoned) {
        return parsed;
    }

    const section = headerSectionOf(raw);
    const headers = await parseMessage(Buffer.concat([section, END_OF_SECTION]));
    const { messageId, from, fromName, tags, to, cc, subject } = headers;
    return { ...emptyParsedMessage(), messageId, from, fromName, tags, to, cc, subject, abandoned: true, ...(parsed.error ? { error: parsed.error } : {}) };
}
