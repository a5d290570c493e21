/**
 * The auto-relay's query (INBOX_CAPTURE_RELAY_AUTO_MATCH, the search language of
 * docs/api.md, "Search"): the one place that turns it into an AutoRelayMatcher.
 */

import { isInboxCaptureError } from '../../lib/errors';
import type { RecordStore } from '../../lib/record-store/record-store';
import { parseSearchQuery } from '../../lib/search/parse-query';
import type { SearchTerm } from '../../lib/types';
import type { CursorPosition } from '../../lib/types';
import type { AutoRelayMatcher } from './auto-relay';

/** Emails read a page while looking for the copy among those of its millisecond. */
const PAGE = 100;

/**
 * The matcher of `query`; a malformed query fails here, at start-up, naming the setting.
 * A copy matches when the store's own search of its inbox, narrowed to its millisecond,
 * finds it: the relay and `GET /v1/emails?q=` can never disagree on what a query means.
 */
export function autoMatcher(query: string, store: Pick<RecordStore, 'listEmails'>): AutoRelayMatcher {
    let terms: SearchTerm[];
    try {
        terms = parseSearchQuery(query);
    }
    catch (err) {
        const why = isInboxCaptureError(err) ? err.message : String(err);
        throw new TypeError(`relay.autoMatch (INBOX_CAPTURE_RELAY_AUTO_MATCH) is not a query of the search language: ${why}`);
    }

    return async (record) => {
        let after: CursorPosition | undefined;
        for (;;) {
            const page = await store.listEmails({
                inbox: record.inbox, limit: PAGE, q: terms,
                receivedAfter: record.receivedAt, receivedBefore: record.receivedAt + 1,
                ...(after ? { after } : {})
            });
            if (page.records.some((r) => r.messageId === record.messageId)) {
                return true;
            }

            const last = page.records.at(-1);
            if (!page.hasMore || !last) {
                return false;
            }

            after = { receivedAt: last.receivedAt, messageId: last.messageId };
        }
    };
}
