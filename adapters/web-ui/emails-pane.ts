// The second pane: one inbox's emails, newest first, searched in the API's language
// (`q`), paged by cursor as the person scrolls (never all at once), and live: a server
// long-poll (wait=true) with the same search brings matching mail in without a reload.

import { InboxCaptureApiError, type Email } from '../client/index';
import { describeError, isAbort, withApi } from './api';
import { confirmDelete, toast } from './dialogs';
import { byId, el, markCurrent, moveFocus } from './dom';
import { formatShortTime, formatSize, formatTime } from './format';
import { parseRoute, routeHash } from './route';

/** Emails per page: small pages, because each email object carries its bodies. */
const PAGE_SIZE = 50;
/** Seconds of one long-poll: under the API's 28 s maximum. */
const LIVE_TIMEOUT_SECONDS = 25;
/** New emails one long-poll brings at most; past it the list is loaded again. */
const LIVE_LIMIT = 100;
/** Milliseconds before a failed long-poll is tried again. */
const LIVE_RETRY_MS = 3000;
/** Milliseconds between typing in the search field and asking the server. */
const SEARCH_DELAY_MS = 300;
/** Characters of the one-line preview of a body. */
const PREVIEW_CHARS = 140;

/** The first words of a body on one line (only its start is read: a body may be megabytes). */
export function preview(body: string): string {
    return body.slice(0, PREVIEW_CHARS * 4).replace(/\s+/g, ' ').trim().slice(0, PREVIEW_CHARS);
}

/** What the emails pane tells the rest of the interface. */
export interface EmailsPaneHooks {
    /** The open inbox was deleted. */
    inboxDeleted(inbox: string): void;
    /** An email was deleted from the list (Delete key). */
    emailDeleted(messageId: string): void;
    /** New mail arrived in the open inbox (counts changed). */
    arrived(): void;
    /** A search's results leave out the open email. */
    excluded(messageId: string): void;
}

/** The emails pane. */
export interface EmailsPane {
    /** Shows an inbox (no-op when it is already shown), or nothing. */
    open(inbox: string | undefined): void;
    /** Marks the open email. */
    select(messageId: string | undefined): void;
    /** Takes a deleted email out of the list. */
    remove(messageId: string): void;
    /** Shows an email as read (no longer bold). */
    markSeen(messageId: string): void;
    /** Opens the email `step` rows after (1) or before (-1) the open one; the first when none is open. */
    step(step: 1 | -1): void;
}

interface State {
    inbox: string;
    q: string;
    cursor?: string;
    hasMore: boolean;
    loading: boolean;
    /** Newest receivedAt shown: the live poll asks for what came after it. */
    newest?: number;
    seen: Set<string>;
    live: AbortController;
}

/** Wires the emails pane of index.html. */
export function emailsPane(hooks: EmailsPaneHooks): EmailsPane {
    const list = byId<HTMLUListElement>('email-list');
    const status = byId('emails-status');
    const title = byId('emails-title');
    const more = byId<HTMLButtonElement>('emails-more');
    const searchInput = byId<HTMLInputElement>('search-q');
    const deleteInbox = byId<HTMLButtonElement>('delete-inbox');
    let state: State | null = null;
    let selected: string | undefined;

    // The sender's display name where the mail gives one (its address as the tooltip), the
    // subject, a preview of the text, tags, and a paperclip (ui.css draws it: no emoji font needed).
    // Unread rows are bold, and say so to a screen reader; recipient and size on a line of their own.
    const row = (email: Email) => el('li', {},
        el('a', { class: email.seen ? 'item' : 'item unread', href: routeHash({ inbox: email.inbox, messageId: email.messageId }), 'data-id': email.messageId, 'aria-current': email.messageId === selected ? 'page' : undefined },
            !email.seen && el('span', { class: 'sr-only unread-mark' }, 'Unread: '),
            el('span', { class: 'from', title: email.sender }, email.senderName || email.sender || '(no sender)'),
            el('time', { class: 'time', datetime: new Date(email.receivedAt).toISOString(), title: formatTime(email.receivedAt) }, formatShortTime(email.receivedAt)),
            el('span', { class: 'subject' }, email.subject || '(no subject)'),
            email.attachments.length > 0 && el('span', { class: 'clip', title: `${email.attachments.length} attachment(s)` }, el('span', { class: 'sr-only' }, 'has attachments')),
            el('span', { class: 'to', title: email.recipient }, `To ${email.recipient}`),
            el('span', { class: 'size' }, formatSize(email.size)),
            el('span', { class: 'preview' }, preview(email.body)),
            email.tags.length > 0 && el('span', { class: 'tags' }, ...email.tags.map((tag) => el('span', { class: 'tag' }, tag)))));

    const showStatus = (s: State) => {
        status.textContent = list.children.length > 0 ? '' : (s.q ? 'No email matches the search.' : 'This inbox is empty.');
    };

    // A search the server cannot read says so, what is wrong with it, and where to read how to write one; not "400".
    const describeListError = (err: unknown) => err instanceof InboxCaptureApiError && err.code === 'VALIDATION_ERROR'
        ? (err.detail ? `The search cannot be read: ${err.detail} (How to search).` : 'The search cannot be read: check its quotes and fields (How to search).')
        : describeError(err);

    const loadPage = async (s: State) => {
        if (s.loading || !s.hasMore) {
            return;
        }

        s.loading = true;
        try {
            const page = await withApi((api) => api.listEmails({ inbox: s.inbox, limit: PAGE_SIZE, cursor: s.cursor, q: s.q || undefined }));
            if (state !== s) {
                return;
            }

            for (const email of page.emails) {
                if (!s.seen.has(email.messageId)) {
                    s.seen.add(email.messageId);
                    list.appendChild(row(email));
                }

                s.newest = Math.max(s.newest ?? 0, email.receivedAt);
            }

            s.cursor = page.nextCursor;
            s.hasMore = page.hasMore;
            more.hidden = !page.hasMore;
            showStatus(s);
        }
        catch (err) {
            if (state === s) {
                status.textContent = describeListError(err);
            }
        }
        finally {
            s.loading = false;
        }
    };

    // New mail: one long-poll after another for what arrives after the newest shown.
    const live = async (s: State) => {
        while (!s.live.signal.aborted) {
            try {
                const page = await withApi((api) => api.listEmails({
                    inbox: s.inbox, wait: true, timeout: LIVE_TIMEOUT_SECONDS, limit: LIVE_LIMIT,
                    receivedAfter: s.newest === undefined ? undefined : s.newest + 1,
                    q: s.q || undefined
                }, { signal: s.live.signal }));
                if (state !== s) {
                    return;
                }

                if (page.hasMore) {
                    // A burst larger than a page: start over from the newest.
                    start(s.inbox, true);
                    return;
                }

                const fresh = page.emails.filter((email) => !s.seen.has(email.messageId));
                for (const email of fresh.reverse()) {
                    s.seen.add(email.messageId);
                    list.insertBefore(row(email), list.firstChild);
                }

                for (const email of page.emails) {
                    s.newest = Math.max(s.newest ?? 0, email.receivedAt);
                }

                if (fresh.length > 0) {
                    showStatus(s);
                    toast(fresh.length === 1 ? 'New email arrived.' : `${fresh.length} new emails arrived.`);
                    hooks.arrived();
                }
            }
            catch (err) {
                // A refusal (bad inbox name, say) will not change by asking again; the list shows it.
                if (isAbort(err) || state !== s || (err instanceof InboxCaptureApiError && err.status < 500)) {
                    return;
                }

                await new Promise((resolve) => window.setTimeout(resolve, LIVE_RETRY_MS));
            }
        }
    };

    const start = (inbox: string, force = false) => {
        const q = searchInput.value.trim();
        if (!force && state && state.inbox === inbox && state.q === q) {
            return;
        }

        state?.live.abort();
        const s: State = { inbox, q, hasMore: true, loading: false, seen: new Set(), live: new AbortController() };
        state = s;
        const focused = focusedRow();
        list.replaceChildren();
        more.hidden = true;
        status.textContent = 'Loading…';
        title.textContent = inbox;
        deleteInbox.disabled = false;
        void loadPage(s).then(() => {
            refocus(s, focused);
            leftOut(s);
            return live(s);
        });
    };

    const rowOf = (messageId: string) => Array.from(list.querySelectorAll<HTMLAnchorElement>('a.item')).find((a) => a.dataset.id === messageId);

    // The email of the row that has keyboard focus, if one has.
    const focusedRow = () => list.contains(document.activeElement) ? (document.activeElement as HTMLElement).closest<HTMLAnchorElement>('a.item')?.dataset.id : undefined;

    // A list loaded again (a burst of new mail) loses the row that had keyboard focus, and the
    // next key (Delete, the arrows) would go nowhere: focus goes back to that email's row, or
    // the first one, unless the person has moved on meanwhile.
    const refocus = (s: State, id: string | undefined) => {
        const active = document.activeElement;
        if (state !== s || id === undefined || (active !== null && active !== document.body)) {
            return;
        }

        const rows = Array.from(list.querySelectorAll<HTMLAnchorElement>('a.item'));
        (rows.find((a) => a.dataset.id === id) ?? rows[0])?.focus();
    };

    // The open email is closed when a search's results leave it out (all of them loaded: no
    // more pages; a failed search leaves hasMore set), so the email pane shows only what the
    // search found. Without a search every email of the inbox is a result.
    const leftOut = (s: State) => {
        if (state === s && s.q !== '' && selected !== undefined && !s.hasMore && !s.seen.has(selected)) {
            hooks.excluded(selected);
        }
    };

    // Infinite scroll: the "Older emails" button loads the next page as soon as it scrolls into view.
    new IntersectionObserver((entries) => {
        if (state && entries.some((entry) => entry.isIntersecting)) {
            void loadPage(state);
        }
    }).observe(more);
    more.addEventListener('click', () => state && void loadPage(state));

    let timer: number | undefined;
    const searchSoon = () => {
        window.clearTimeout(timer);
        timer = window.setTimeout(() => state && start(state.inbox), SEARCH_DELAY_MS);
    };
    searchInput.addEventListener('input', searchSoon);
    byId<HTMLFormElement>('email-search').addEventListener('submit', (event) => {
        event.preventDefault();
        window.clearTimeout(timer);
        if (state) {
            start(state.inbox);
        }
    });

    deleteInbox.addEventListener('click', async () => {
        const s = state;
        if (!s || !await confirmDelete(`Delete every email of the inbox "${s.inbox}"? This cannot be undone.`)) {
            return;
        }

        try {
            const deleted = await withApi((api) => api.deleteInbox(s.inbox));
            toast(`Deleted ${deleted} ${deleted === 1 ? 'email' : 'emails'} of ${s.inbox}.`);
            hooks.inboxDeleted(s.inbox);
        }
        catch (err) {
            toast(describeError(err));
        }
    });

    list.addEventListener('keydown', async (event) => {
        if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
            event.preventDefault();
            moveFocus(list, event.key === 'ArrowDown' ? 1 : -1);
            return;
        }

        const link = (event.target as HTMLElement).closest<HTMLAnchorElement>('a.item');
        if (event.key === 'Delete' && link?.dataset.id) {
            event.preventDefault();
            const id = link.dataset.id;
            // Named, so that the person sees which email the key press chose.
            const subject = link.querySelector('.subject')?.textContent ?? '';
            if (await confirmDelete(`Delete the email "${subject}"? This cannot be undone.`)) {
                try {
                    await withApi((api) => api.deleteEmail(id));
                    toast('Email deleted.');
                    hooks.emailDeleted(id);
                }
                catch (err) {
                    toast(describeError(err));
                }
            }
        }
    });

    return {
        open(inbox) {
            if (inbox) {
                start(inbox);
                return;
            }

            state?.live.abort();
            state = null;
            list.replaceChildren();
            title.textContent = 'Emails';
            status.textContent = 'Choose an inbox.';
            more.hidden = true;
            deleteInbox.disabled = true;
        },
        select(messageId) {
            selected = messageId;
            markCurrent(list, 'id', messageId);
        },
        markSeen(messageId) {
            const link = rowOf(messageId);
            link?.classList.remove('unread');
            link?.querySelector('.unread-mark')?.remove();
        },
        step(step) {
            const links = Array.from(list.querySelectorAll<HTMLAnchorElement>('a.item'));
            // From the URL, not `selected`: a key pressed again before the last one's hashchange was handled steps on from there.
            const open = parseRoute(location.hash).messageId;
            const at = links.findIndex((a) => a.dataset.id === open);
            const next = at === -1 ? links[0] : links[at + step];
            if (next) {
                next.scrollIntoView({ block: 'nearest' });
                location.hash = next.getAttribute('href')!;
            }
        },
        remove(messageId) {
            const item = rowOf(messageId)?.parentElement;
            const next = (item?.nextElementSibling ?? item?.previousElementSibling)?.querySelector<HTMLAnchorElement>('a.item');
            item?.remove();
            next?.focus();
            if (state) {
                state.seen.delete(messageId);
                showStatus(state);
            }
        }
    };
}
