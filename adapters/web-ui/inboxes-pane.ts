// The first pane: every inbox that holds mail (GET /v1/inboxes), most recent first,
// with its count and last arrival, filtered by a name prefix, a page at a time.

import type { Inbox } from '../client/index';
import { describeError, withApi } from './api';
import { byId, el, markCurrent, moveFocus } from './dom';
import { formatShortTime, formatTime } from './format';
import { routeHash } from './route';

/** Inboxes per page: the API's default. */
const PAGE_SIZE = 50;
/** Milliseconds between typing in the filter and asking the server. */
const FILTER_DELAY_MS = 250;

/** The inboxes pane. */
export interface InboxesPane {
    /** Reloads the list from its first page (after a delete, or on showing it). */
    reload(): Promise<void>;
    /** Marks the open inbox. */
    select(inbox: string | undefined): void;
}

/** Wires the inboxes pane of index.html. */
export function inboxesPane(): InboxesPane {
    const list = byId<HTMLUListElement>('inbox-list');
    const status = byId('inboxes-status');
    const more = byId<HTMLButtonElement>('inboxes-more');
    const prefixInput = byId<HTMLInputElement>('inbox-prefix');
    let cursor: string | undefined;
    let selected: string | undefined;
    let generation = 0;

    const row = (inbox: Inbox) => el('li', {},
        el('a', { class: 'item', href: routeHash({ inbox: inbox.name }), 'data-inbox': inbox.name, 'aria-current': inbox.name === selected ? 'page' : undefined },
            el('span', { class: 'name', title: inbox.name }, inbox.name),
            el('span', { class: 'count' }, `${inbox.count} ${inbox.count === 1 ? 'email' : 'emails'}`),
            el('time', { class: 'time', datetime: new Date(inbox.lastReceivedAt).toISOString(), title: formatTime(inbox.lastReceivedAt) }, formatShortTime(inbox.lastReceivedAt))));

    const load = async (fresh: boolean) => {
        const mine = fresh ? ++generation : generation;
        const prefix = prefixInput.validity.valid ? prefixInput.value : '';
        try {
            const page = await withApi((api) => api.listInboxes({ limit: PAGE_SIZE, prefix: prefix || undefined, cursor: fresh ? undefined : cursor }));
            if (mine !== generation) {
                return;
            }

            if (fresh) {
                list.replaceChildren();
            }

            page.inboxes.forEach((inbox) => list.appendChild(row(inbox)));
            cursor = page.nextCursor;
            more.hidden = !page.hasMore;
            status.textContent = list.children.length === 0 ? (prefix ? `No inbox starts with "${prefix}".` : 'No mail yet.') : '';
        }
        catch (err) {
            if (mine === generation) {
                status.textContent = describeError(err);
            }
        }
    };

    let timer: number | undefined;
    prefixInput.addEventListener('input', () => {
        window.clearTimeout(timer);
        timer = window.setTimeout(() => void load(true), FILTER_DELAY_MS);
    });
    byId<HTMLFormElement>('inbox-filter').addEventListener('submit', (event) => {
        event.preventDefault();
        window.clearTimeout(timer);
        void load(true);
    });
    more.addEventListener('click', () => void load(false));
    list.addEventListener('keydown', (event) => {
        if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
            event.preventDefault();
            moveFocus(list, event.key === 'ArrowDown' ? 1 : -1);
        }
    });

    return {
        reload: () => load(true),
        select(inbox) {
            selected = inbox;
            markCurrent(list, 'inbox', inbox);
        }
    };
}
