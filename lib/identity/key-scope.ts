import type { KeyScope } from '../types';

// Which inboxes a key with an inbox prefix reaches (docs/api.md, "Keys with a scope"):
// the one set of rules the HTTP routes and the MCP tools both apply.

/** The scope of a key created without options: every inbox, every change. */
export const FULL_ACCESS: KeyScope = Object.freeze({ inboxPrefix: null, readOnly: false });

/** The part of a scope that says which inboxes it reaches. */
export type InboxScope = Pick<KeyScope, 'inboxPrefix'>;

/** True when `inbox` is one the scope reaches (every inbox when it has no prefix). */
export function inboxInScope(scope: InboxScope | undefined, inbox: string): boolean {
    const prefix = scope?.inboxPrefix;
    return !prefix || inbox.startsWith(prefix);
}

/**
 * The prefix an inbox listing asked with `requested` runs with inside the scope: the longer
 * of the two when one starts with the other (`undefined`: no filter at all), or null when
 * they exclude each other and nothing can be listed.
 */
export function listingPrefix(scope: InboxScope | undefined, requested: string | undefined): string | undefined | null {
    const own = scope?.inboxPrefix ?? '';
    const asked = requested ?? '';
    if (asked.startsWith(own)) {
        return asked === '' ? undefined : asked;
    }

    return own.startsWith(asked) ? own : null;
}

/**
 * The prefix a new inbox is made with inside the scope: `requested` when it already starts
 * with the key's prefix, else the key's prefix followed by it, so the inbox is always one
 * the key can read.
 */
export function newInboxPrefix(scope: InboxScope | undefined, requested = ''): string {
    const own = scope?.inboxPrefix ?? '';
    return requested.startsWith(own) ? requested : own + requested;
}

/**
 * True when a fault rule matching `match` is one the scope reaches: every rule without a
 * prefix; with one, only a rule limited to an inbox inside it (`match.inbox`), since any
 * other rule acts on the mail of every inbox.
 */
export function faultInScope(scope: InboxScope | undefined, match: { inbox?: string } | undefined): boolean {
    if (!scope?.inboxPrefix) {
        return true;
    }

    return match?.inbox !== undefined && inboxInScope(scope, match.inbox);
}
