/**
 * The auto-relay's query (INBOX_CAPTURE_RELAY_AUTO_MATCH, the search language of
 * docs/api.md): the one place that turns it into an AutoRelayMatcher.
 */

import type { AutoRelayMatcher } from './auto-relay';

/**
 * The matcher of `query`. This build has no search language yet, so every query is
 * refused at start-up (a TypeError naming the setting) rather than matched some other way.
 */
export function autoMatcher(query: string): AutoRelayMatcher {
    throw new TypeError(`relay.autoMatch (INBOX_CAPTURE_RELAY_AUTO_MATCH) needs the search language, which this build does not have yet: "${query.slice(0, 100)}"`);
}
