// The third pane: one email. Subject, from, to and time; tabs for its HTML (in the mail
// frame, mail-frame.ts), text, raw source (source-pane.ts), header fields, links and codes (click to copy),
// attachments and checks (checks-pane.ts); the raw message to download; delete.

import type { Email, Header } from '../client/index';
import { describeError, withApi } from './api';
import { checksPanel } from './checks-pane';
import { confirmDelete, toast } from './dialogs';
import { byId, el, replaceChildren } from './dom';
import { copyText, safeFilename, saveBytes } from './downloads';
import { formatSize, formatTime } from './format';
import { mailFrame, withInlineImages } from './mail-frame';
import { routeHash, TABS, type Route, type Tab } from './route';
import { showSource } from './source-pane';

const TAB_LABELS: Record<Tab, string> = { html: 'HTML', text: 'Text', source: 'Source', headers: 'Headers', links: 'Links & codes', attachments: 'Attachments', checks: 'Checks' };

/** What the email pane tells the rest of the interface. */
export interface EmailPaneHooks {
    /** The open email was deleted. */
    emailDeleted(email: Email): void;
    /** An unread email was opened and is now marked read in the store. */
    markedSeen(messageId: string): void;
}

/** The email pane. */
export interface EmailPane {
    /** Shows the route's email and tab (loads it when it is another one). */
    show(route: Route): Promise<void>;
}

const isSafeHref = (href: string) => /^(https?:|mailto:)/i.test(href);

function copyButton(text: string, label: string): HTMLButtonElement {
    const button = el('button', { type: 'button', class: 'copy', title: 'Click to copy' }, label);
    button.addEventListener('click', async () => toast(await copyText(text) ? `Copied ${text}` : 'Copying needs https or localhost; select the text instead.'));
    return button;
}

function textPanel(email: Email): Node {
    return email.body ? el('pre', { class: 'text-body' }, email.body) : el('p', {}, 'This email has no text part.');
}

function headersPanel(headers: Header[]): Node {
    return el('table', { class: 'headers' },
        el('caption', { class: 'sr-only' }, 'Header fields in message order'),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Name'), el('th', { scope: 'col' }, 'Value'))),
        el('tbody', {}, ...headers.map((h) => el('tr', {}, el('th', { scope: 'row' }, h.name), el('td', {}, h.value)))));
}

function linksPanel(email: Email): Node {
    return el('div', {},
        el('h3', {}, 'Codes'),
        email.codes.length === 0 ? el('p', {}, 'No code found.') : el('ul', { class: 'codes' }, ...email.codes.map((code) => el('li', {}, copyButton(code, code)))),
        el('h3', {}, 'Links'),
        email.links.length === 0 ? el('p', {}, 'No link found.') : el('ul', { class: 'links' }, ...email.links.map((link) => el('li', {},
            copyButton(link.href, 'Copy'),
            ' ',
            isSafeHref(link.href) ? el('a', { href: link.href, target: '_blank', rel: 'noopener noreferrer' }, link.text || link.href) : el('span', {}, link.text),
            el('span', { class: 'href' }, link.href)))));
}

/** Wires the email pane of index.html. */
export function emailPane(hooks: EmailPaneHooks): EmailPane {
    const subject = byId('email-subject');
    const body = byId('email-body');
    const tabs = byId('email-tabs');
    const panels = byId('email-panels');
    const back = byId<HTMLAnchorElement>('email-back');
    let email: Email | null = null;
    let headers: Promise<Header[]> | null = null;
    let tab: Tab = 'html';
    // The id last asked for, so a slow answer for an earlier one is dropped.
    let shown: string | undefined;

    // Each attachment the HTML names by `cid:`, as its signed link (a failure leaves that image out).
    const inlineImages = async (e: Email): Promise<Map<string, string>> => {
        const html = e.htmlBody.toLowerCase();
        const named = e.attachments.filter((a) => a.contentId && (html.includes(`cid:${a.contentId.toLowerCase()}`) || html.includes(`cid:${encodeURIComponent(a.contentId).toLowerCase()}`)));
        const links = new Map<string, string>();
        await Promise.all(named.map(async (a) => {
            try {
                links.set(a.contentId, await withApi((api) => api.attachmentLink(e.messageId, a.filename)));
            }
            catch {
                // Shown without it, as a broken image: the rest of the mail still reads.
            }
        }));
        return links;
    };

    const htmlPanel = async (e: Email): Promise<Node> => {
        if (!e.htmlBody) {
            return el('p', {}, 'This email has no HTML part.');
        }

        const { html, urls, origins } = withInlineImages(e.htmlBody, await inlineImages(e));
        // Shown only for a mail that has remote images, styles or fonts to hold back.
        const notice = el('p', { class: 'notice', id: 'remote-notice', hidden: true }, 'Remote images and styles are blocked. ');
        let loaded = false;
        const view = mailFrame(html, { urls, origins }, (blocked) => {
            notice.hidden = !blocked && !loaded;
        });
        const load = el('button', { type: 'button', id: 'load-remote' }, 'Load remote content');
        load.addEventListener('click', () => {
            loaded = true;
            view.show(true);
            notice.textContent = 'Remote content is loaded for this email.';
        });
        notice.appendChild(load);
        return el('div', {}, notice, view.frame);
    };

    const attachmentsPanel = (e: Email): Node => {
        if (e.attachments.length === 0) {
            return el('p', {}, 'No attachments.');
        }

        return el('ul', { class: 'attachments' }, ...e.attachments.map((a) => {
            const button = el('button', { type: 'button', 'data-filename': a.filename }, `Download ${a.filename}`);
            button.addEventListener('click', async () => {
                try {
                    const bytes = await withApi((api) => api.downloadAttachment(e.messageId, a.filename));
                    saveBytes(bytes, safeFilename(a.filename, 'attachment'), a.contentType);
                }
                catch (err) {
                    toast(describeError(err));
                }
            });
            return el('li', {}, button, el('span', { class: 'detail' }, ` ${a.contentType}, ${formatSize(a.size)}`));
        }));
    };

    const renderPanel = async (e: Email, which: Tab) => {
        const panel = el('div', { role: 'tabpanel', id: `panel-${which}`, 'aria-labelledby': `tab-${which}`, tabindex: '0', class: 'panel' });
        replaceChildren(panels, panel);
        if (which === 'html') {
            const html = await htmlPanel(e);
            if (email === e && tab === 'html') {
                panel.appendChild(html);
            }
        }
        else if (which === 'text') {
            panel.appendChild(textPanel(e));
        }
        else if (which === 'links') {
            panel.appendChild(linksPanel(e));
        }
        else if (which === 'attachments') {
            panel.appendChild(attachmentsPanel(e));
        }
        else if (which === 'checks') {
            panel.appendChild(checksPanel(e));
        }
        else if (which === 'source') {
            await showSource(panel, e, () => email === e && tab === 'source');
        }
        else {
            panel.textContent = 'Loading…';
            headers ??= withApi((api) => api.getHeaders(e.messageId));
            try {
                const list = await headers;
                if (email === e && tab === 'headers') {
                    replaceChildren(panel, headersPanel(list));
                }
            }
            catch (err) {
                headers = null;
                panel.textContent = describeError(err);
            }
        }
    };

    const renderTabs = (e: Email) => {
        replaceChildren(tabs, ...TABS.map((t) => {
            const count = t === 'attachments' ? ` (${e.attachments.length})` : '';
            return el('a', { role: 'tab', id: `tab-${t}`, href: routeHash({ inbox: e.inbox, messageId: e.messageId, tab: t }), 'aria-selected': String(t === tab), 'aria-controls': `panel-${t}`, tabindex: t === tab ? '0' : '-1' }, `${TAB_LABELS[t]}${count}`);
        }));
    };

    // Arrow keys move between tabs, as in every tab list.
    tabs.addEventListener('keydown', (event) => {
        if (!email || (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft')) {
            return;
        }

        const at = TABS.indexOf(tab);
        const next = TABS[(at + (event.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length];
        location.hash = routeHash({ inbox: email.inbox, messageId: email.messageId, tab: next });
        window.setTimeout(() => byId(`tab-${next}`).focus(), 0);
    });

    byId('download-raw').addEventListener('click', async () => {
        const e = email;
        if (!e) {
            return;
        }

        try {
            const bytes = await withApi((api) => api.downloadRaw(e.messageId));
            saveBytes(bytes, safeFilename(`${e.messageId}.eml`, 'message.eml'), 'message/rfc822');
        }
        catch (err) {
            toast(describeError(err));
        }
    });

    byId('delete-email').addEventListener('click', async () => {
        const e = email;
        if (!e || !await confirmDelete(`Delete the email "${e.subject || '(no subject)'}"? This cannot be undone.`)) {
            return;
        }

        try {
            await withApi((api) => api.deleteEmail(e.messageId));
            toast('Email deleted.');
            hooks.emailDeleted(e);
        }
        catch (err) {
            toast(describeError(err));
        }
    });

    // Opening an email marks it read, as a mail client does. A key that may not change
    // anything (403) leaves it unread, silently: reading is all that key is for.
    const markSeen = async (e: Email) => {
        try {
            await withApi((api) => api.setSeen(e.messageId, true));
            e.seen = true;
            hooks.markedSeen(e.messageId);
        }
        catch {
            // Unread it stays; the list keeps it bold.
        }
    };

    const clear = (text: string) => {
        email = null;
        headers = null;
        subject.textContent = text;
        body.hidden = true;
        panels.replaceChildren();
    };

    return {
        async show(route) {
            back.href = routeHash({ inbox: route.inbox });
            if (!route.messageId) {
                shown = undefined;
                clear('No email open');
                return;
            }

            if (!email || email.messageId !== route.messageId) {
                const wanted = route.messageId;
                shown = wanted;
                clear('Loading…');
                try {
                    const loaded = await withApi((api) => api.getEmail(wanted));
                    // Another email was opened meanwhile: that one's answer decides.
                    if (shown !== wanted) {
                        return;
                    }

                    email = loaded;
                    if (!loaded.seen) {
                        void markSeen(loaded);
                    }
                }
                catch (err) {
                    if (shown === wanted) {
                        clear(describeError(err));
                    }

                    return;
                }
            }

            const e = email;
            tab = route.tab ?? (e.htmlBody ? 'html' : 'text');
            subject.textContent = e.subject || '(no subject)';
            byId('email-from').textContent = e.senderName ? `${e.senderName} <${e.sender}>` : e.sender;
            replaceChildren(byId('email-tags'), ...(e.tags.length > 0 ? e.tags.map((tag) => el('span', { class: 'tag' }, tag)) : ['none']));
            byId('email-to').textContent = e.recipient;
            byId('email-time').textContent = formatTime(e.receivedAt);
            body.hidden = false;
            renderTabs(e);
            await renderPanel(e, tab);
        }
    };
}
