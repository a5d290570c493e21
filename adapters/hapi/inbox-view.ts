import { encodeInboxCursor } from '../../lib/cursor/inbox-cursor';
import type { InboxPage } from '../../lib/types';
import type { InboxPageView } from './api-types';

/** The API's inbox list page: the cursor points after its last inbox. */
export function toInboxPageView(page: InboxPage): InboxPageView {
    const view: InboxPageView = {
        inboxes: page.inboxes.map((i) => ({ name: i.name, count: i.count, lastReceivedAt: i.lastReceivedAt })),
        hasMore: page.hasMore
    };
    const last = page.inboxes[page.inboxes.length - 1];
    if (page.hasMore && last) {
        view.nextCursor = encodeInboxCursor({ lastReceivedAt: last.lastReceivedAt, name: last.name });
    }

    return view;
}
