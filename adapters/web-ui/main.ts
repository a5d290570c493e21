// The web interface (docs/ui.md): three panes (inboxes · emails · one email) driven by
// the URL's hash, so every view survives a reload. Loaded as an ES module by index.html.

import { forgetKey, withApi } from './api';
import { emailPane } from './email-pane';
import { emailsPane } from './emails-pane';
import { inboxesPane } from './inboxes-pane';
import { showKeyScope } from './key-scope';
import { byId } from './dom';
import { listKeys } from './keys';
import { themeToggle } from './theme';
import { parseRoute, routeHash, type Route } from './route';

const inboxes = inboxesPane();
const emails = emailsPane({
    inboxDeleted() {
        location.hash = routeHash({});
        void inboxes.reload();
    },
    emailDeleted(messageId) {
        emails.remove(messageId);
        const route = parseRoute(location.hash);
        if (route.messageId === messageId) {
            location.hash = routeHash({ inbox: route.inbox });
        }

        void inboxes.reload();
    },
    arrived() {
        void inboxes.reload();
    },
    excluded(messageId) {
        const route = parseRoute(location.hash);
        if (route.messageId === messageId) {
            location.hash = routeHash({ inbox: route.inbox });
        }
    }
});
const email = emailPane({
    emailDeleted(deleted) {
        emails.remove(deleted.messageId);
        location.hash = routeHash({ inbox: deleted.inbox });
        void inboxes.reload();
    },
    markedSeen(messageId) {
        emails.markSeen(messageId);
    }
});
themeToggle();
listKeys({ next: (step) => emails.step(step), deleteOpen: () => byId('delete-email').click() });

// Which pane a narrow screen shows: the deepest one the route names.
function viewOf(route: Route): string {
    return route.messageId ? 'email' : route.inbox ? 'emails' : 'inboxes';
}

let shownInbox: string | undefined;

function render(): void {
    const route = parseRoute(location.hash);
    document.body.dataset.view = viewOf(route);
    inboxes.select(route.inbox);
    emails.open(route.inbox);
    emails.select(route.messageId);
    void email.show(route);
    // Back on the inbox list (narrow screens), or another inbox: counts may have changed.
    if (route.inbox !== shownInbox && !route.messageId) {
        void inboxes.reload();
    }

    shownInbox = route.inbox;
    document.title = route.inbox ? `${route.inbox} · inbox-capture` : 'inbox-capture';
}

byId('change-key').addEventListener('click', () => {
    forgetKey();
    // Ask now, then show everything again with the new key.
    void withApi((api) => api.listInboxes({ limit: 1 })).then(() => {
        shownInbox = undefined;
        void inboxes.reload();
        void showKeyScope();
    });
});

window.addEventListener('hashchange', render);
void inboxes.reload();
void showKeyScope();
shownInbox = parseRoute(location.hash).inbox;
render();
