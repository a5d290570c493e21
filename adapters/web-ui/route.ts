// The interface's views as hash routes, so every view has a URL that survives a reload:
// `#/` (inboxes), `#/inbox/<name>` (its emails), `#/inbox/<name>/email/<id>[/<tab>]`.

/** The tabs of one email. */
export const TABS = ['html', 'text', 'source', 'headers', 'links', 'attachments', 'checks'] as const;
/** One of TABS. */
export type Tab = typeof TABS[number];

/** A parsed view. */
export interface Route {
    inbox?: string;
    messageId?: string;
    tab?: Tab;
}

/** Reads a hash (`location.hash`) into a route; anything unknown is the inbox list. */
export function parseRoute(hash: string): Route {
    const parts = hash.replace(/^#\/?/, '').split('/');
    try {
        if (parts[0] !== 'inbox' || !parts[1]) {
            return {};
        }

        const inbox = decodeURIComponent(parts[1]);
        if (parts[2] !== 'email' || !parts[3]) {
            return { inbox };
        }

        const tab = (TABS as readonly string[]).includes(parts[4]) ? parts[4] as Tab : undefined;
        return { inbox, messageId: decodeURIComponent(parts[3]), tab };
    }
    catch {
        // A hand-edited hash that does not percent-decode.
        return {};
    }
}

/** The hash of a view; ids are percent-encoded as one segment (they may contain `/`). */
export function routeHash(route: Route): string {
    if (!route.inbox) {
        return '#/';
    }

    const inbox = `#/inbox/${encodeURIComponent(route.inbox)}`;
    if (!route.messageId) {
        return inbox;
    }

    return `${inbox}/email/${encodeURIComponent(route.messageId)}${route.tab ? `/${route.tab}` : ''}`;
}
